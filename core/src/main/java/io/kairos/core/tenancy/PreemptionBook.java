package io.kairos.core.tenancy;

import io.kairos.core.model.JobId;
import io.kairos.core.sched.preempt.PreemptionHistory;
import io.kairos.core.sched.preempt.ProtectionPolicy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The preemptions a driver has made, kept from one pass to the next for what the pass must be told
 * of them ({@link Tenants#preempting()}, {@link Tenants#histories()}). The one home of the rules a
 * victim's preemption follows in every driver: the controller (its scheduler loop and job
 * lifecycle) and the simulator (its event loop and tenancy book) each keep one and ask it.
 *
 * <p>A victim's preemption, step by step:
 *
 * <ol>
 *   <li><b>It applies, or it went stale.</b> A pass's decision to preempt applies only while its
 *       victim runs and nothing is stopping it yet, and its preemptor still waits ({@link
 *       #applies}); a stale one changes nothing.
 *   <li><b>It is under way.</b> The victim is told to stop, with {@link
 *       Tenants.Settings#graceSec()} to checkpoint; the driver records the preemption here at the
 *       time of the decision ({@link #preempted}).
 *   <li><b>It joins the victim's history.</b> The time is recorded through the {@link
 *       ProtectionPolicy}, so a job preempted too often is protected for a while: here ({@link
 *       #recordHistory}), or by the driver beside its own record of the times, folded with {@link
 *       #history}, the same rule in the same order.
 *   <li><b>The victim stops and waits again</b>, at once: no backoff, and no restart used. The
 *       driver requeues it; the book asks, before the next pass (below).
 *   <li><b>The entry lasts until the preemptor starts.</b> Before each pass ({@link #update}) an
 *       entry stays while its victim is still stopping (so no pass picks the victim again, nor
 *       preempts more meanwhile); once the victim has stopped, while its preemptor still waits, but
 *       no longer than {@link #keepSec()} ({@code 2 x grace + 60 s}) after the preemption: a
 *       preemptor that no longer fits must not stop further preemption. Such an entry expires, and
 *       {@code update} returns it.
 * </ol>
 *
 * <p>What the book does not do, because the drivers differ there (each keeps its own): the
 * controller proposes each preemption as a command through the log, keeps the victim's times in its
 * replicated record (the latest 32, shown by the API), requeues the victim through its own requeue,
 * eligible from the preemption's time, requeues even a victim whose tasks all exit within the
 * grace, and also counts as under way a victim its records show stopping that this leader did not
 * propose (its book is the leader's alone). The simulator stops the victim at the end of the grace
 * by a timer, keeps the work saved at its last checkpoint and counts the work lost, requeues it
 * eligible from its stop, and lets a victim that finishes within its grace finish.
 *
 * <p>Pure and deterministic: no clock (times come in, in seconds), entries kept in maps sorted by
 * job id, so {@link #update} looks at them, and returns the expired ones, in victim order. Not
 * thread-safe: one driver thread keeps it.
 */
public final class PreemptionBook {
  /** What the driver knows of its jobs now, as the book asks it. */
  public interface Jobs {
    /** Whether the job runs and nothing is stopping it yet (no preemption, requeue or end). */
    boolean running(JobId job);

    /** Whether the job was told to stop by a preemption and has not stopped yet. */
    boolean stopping(JobId job);

    /** Whether the job waits in the queue: it has not started, nor left the queue. */
    boolean waiting(JobId job);
  }

  /** A preemption under way: its victim, the job it makes room for, and when it was made. */
  public record Entry(JobId victim, JobId preemptor, long atSec) {
    public Entry {
      Objects.requireNonNull(victim, "victim");
      Objects.requireNonNull(preemptor, "preemptor");
    }
  }

  /** An entry and whether its preemptor has started (or left the queue) since it was made. */
  private static final class UnderWay {
    final Entry entry;
    boolean preemptorGone;

    UnderWay(Entry entry) {
      this.entry = entry;
    }
  }

  private final ProtectionPolicy protection;
  private final long keepSec;
  private final TreeMap<JobId, UnderWay> underWay = new TreeMap<>();

  /** Victim to preemptor, in step with {@link #underWay}: what the pass is told. */
  private final TreeMap<JobId, JobId> preempting = new TreeMap<>();

  private final TreeMap<JobId, PreemptionHistory> histories = new TreeMap<>();

  /** A book for preemptions with these settings' grace and protection. */
  public PreemptionBook(Tenants.Settings settings) {
    Objects.requireNonNull(settings, "settings");
    this.protection = settings.protection();
    this.keepSec = 2 * settings.graceSec() + 60;
  }

  /**
   * Step 1: whether a decision to preempt {@code victim} for {@code preemptor} applies now: the
   * victim runs and nothing is stopping it yet, the preemptor waits, and they are two jobs.
   */
  public static boolean applies(JobId victim, JobId preemptor, Jobs jobs) {
    return !victim.equals(preemptor) && jobs.running(victim) && jobs.waiting(preemptor);
  }

  /**
   * Step 2: {@code victim} was told to stop at {@code atSec} to make room for {@code preemptor}.
   * Replaces an earlier entry of the same victim.
   */
  public void preempted(JobId victim, JobId preemptor, long atSec) {
    underWay.put(victim, new UnderWay(new Entry(victim, preemptor, atSec)));
    preempting.put(victim, preemptor);
  }

  /**
   * Step 3, for a driver that keeps no record of its own: {@code job} was preempted at {@code
   * atSec} (no earlier than its last preemption); its history records it. Returns the new history.
   */
  public PreemptionHistory recordHistory(JobId job, long atSec) {
    var history = protection.record(histories.getOrDefault(job, PreemptionHistory.NONE), atSec);
    histories.put(job, history);
    return history;
  }

  /**
   * Step 3, for a driver that keeps each job's preemption times itself: the history of a job
   * preempted at these times, as {@link #recordHistory} would have kept it. A time before the one
   * preceding it (a leader's clock that stepped back) counts as that one.
   */
  public PreemptionHistory history(List<Long> preemptedAtSec) {
    var history = PreemptionHistory.NONE;
    for (long t : preemptedAtSec) {
      history = protection.record(history, Math.max(t, history.lastSec()));
    }
    return history;
  }

  /** The job ended: its history is no longer needed. */
  public void forgetHistory(JobId job) {
    histories.remove(job);
  }

  /**
   * Step 5, before each pass at {@code nowSec}: notes which entries' preemptors no longer wait (for
   * good: a preemptor that started is done with its victims even if it waits again later), then
   * drops each entry whose victim is no longer stopping and whose preemptor has started or left, or
   * that is {@link #keepSec()} old or older. Returns the entries dropped for their age, by victim.
   */
  public List<Entry> update(long nowSec, Jobs jobs) {
    if (underWay.isEmpty()) {
      return List.of();
    }
    List<Entry> expired = List.of();
    var it = underWay.values().iterator();
    while (it.hasNext()) {
      UnderWay u = it.next();
      Entry e = u.entry;
      if (!u.preemptorGone && !jobs.waiting(e.preemptor())) {
        u.preemptorGone = true;
      }
      if (jobs.stopping(e.victim())) {
        continue;
      }
      boolean tooOld = !u.preemptorGone && nowSec - e.atSec() >= keepSec;
      if (u.preemptorGone || tooOld) {
        it.remove();
        preempting.remove(e.victim());
        if (tooOld) {
          if (expired.isEmpty()) {
            expired = new ArrayList<>();
          }
          expired.add(e);
        }
      }
    }
    return expired;
  }

  /** Forgets the preemptions under way (a controller that lost its leadership); not histories. */
  public void clear() {
    underWay.clear();
    preempting.clear();
  }

  /** Victim to preemptor for every preemption under way, sorted by victim: a live view. */
  public Map<JobId, JobId> preempting() {
    return Collections.unmodifiableMap(preempting);
  }

  /** Each job's history recorded with {@link #recordHistory}, sorted by job: a live view. */
  public Map<JobId, PreemptionHistory> histories() {
    return Collections.unmodifiableMap(histories);
  }

  /** How long after a preemption its entry may wait for the preemptor: {@code 2 x grace + 60 s}. */
  public long keepSec() {
    return keepSec;
  }
}
