package io.kairos.control.sched;

import io.kairos.config.Tenancy;
import io.kairos.control.accounting.AccountingQueries;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.CoreTime;
import io.kairos.control.state.JobRecord;
import io.kairos.control.state.JobRequest;
import io.kairos.core.fairshare.AccountTree;
import io.kairos.core.fairshare.FairShareFactor;
import io.kairos.core.fairshare.Resources;
import io.kairos.core.fairshare.UsageTracker;
import io.kairos.protocol.JobState;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The leader's fair-share usage: a {@link UsageTracker} charged with what jobs held (GPUs, CPUs,
 * memory) for how long, decayed with the tenancy's half-life. Not replicated: it lives on the
 * leader's scheduler thread only.
 *
 * <p>Design note. Each call to {@link #update} (once per pass, under the state's read lock) charges
 * every job it tracks from where it last charged it up to now (a running job) or up to its end (an
 * ended one), then starts tracking the jobs newly holding GPUs from their start. Jobs the loop
 * itself started are tracked at once ({@link #started}), so a job that starts and ends between two
 * passes is still charged. Cost per pass: O(running jobs), no allocation beyond the tracking map's
 * entries.
 *
 * <p>After a failover (or on the first pass, or when the cluster's capacity changes), the tracker
 * is rebuilt: running jobs from the job records (from their start), ended jobs from the accounting
 * store ({@link #useHistory}: every attempt that ended in the last {@link #HISTORY_HALF_LIVES}
 * half-lives, in hour buckets by account, read under the state's read lock), so usage survives the
 * jobs leaving the state. Without a store (or when it fails) ended jobs are charged from the
 * records, for their last attempt only. Earlier attempts of jobs still running are not charged.
 *
 * <p>Jobs charged to an account that is not in the tree (the user's name, by default) count for
 * nobody's share. Single-threaded (the scheduler's thread).
 */
final class FairShareUsage {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(FairShareUsage.class);
  private static final long MIB = 1L << 20;

  /** The controller computes Slurm's Fair Tree factors (the simulator can be told otherwise). */
  private static final FairShareFactor.Algorithm ALGORITHM = FairShareFactor.Algorithm.FAIR_TREE;

  private final Tenancy setup;
  private volatile History history;
  private UsageTracker tracker;
  private Resources capacity;

  /** Job id → {attempt, charged until (epoch seconds)}. */
  private final Map<Long, long[]> tracked = new HashMap<>();

  FairShareUsage(Tenancy setup) {
    this.setup = setup;
  }

  /**
   * Where ended jobs' use is kept once they leave the state (the accounting store): {@code
   * buckets(afterMs, bucketMs)} gives it by account in buckets, every ended job of the state
   * included (the source writes them first).
   */
  interface History {
    List<AccountingQueries.Bucket> buckets(long afterMs, long bucketMs) throws Exception;
  }

  /** Rebuilds read ended jobs' use from {@code source} from now on. */
  void useHistory(History source) {
    this.history = source;
  }

  /** How far back a rebuild reads the store: use older than this weighs at most 1/16. */
  static final int HISTORY_HALF_LIVES = 4;

  /**
   * The store's use is charged in buckets of an hour (by end time): at most 0.5% off a week's
   * half-life.
   */
  static final long BUCKET_MS = 3_600_000;

  /** Forgets everything (leadership lost): the next update rebuilds from the records. */
  void reset() {
    tracker = null;
    tracked.clear();
  }

  /** The loop started {@code job} at {@code atMs}: charge it from then on. */
  void started(long jobId, int attempt, long atMs) {
    if (tracker != null) {
      tracked.putIfAbsent(jobId, new long[] {attempt, CoreTime.sec(atMs)});
    }
  }

  /**
   * Brings usage up to {@code nowSec} and returns the factors; null without accounts. Call under
   * the state's read lock.
   */
  FairShareFactor update(ControlState state, Resources clusterCapacity, long nowSec) {
    if (!setup.hasAccounts()) {
      return null;
    }
    if (tracker == null || !clusterCapacity.equals(capacity)) {
      rebuild(state, clusterCapacity, nowSec);
    }
    long now = Math.max(nowSec, tracker.nowSec());
    tracker.decayTo(now);
    for (Iterator<Map.Entry<Long, long[]>> it = tracked.entrySet().iterator(); it.hasNext(); ) {
      var e = it.next();
      JobRecord job = state.job(e.getKey()).orElse(null);
      long[] t = e.getValue();
      if (job == null) {
        it.remove();
        continue;
      }
      boolean sameAttempt = job.attempt == t[0];
      if (sameAttempt && job.state == JobState.RUNNING) {
        charge(job, t[1], now);
        t[1] = now;
      } else {
        if (sameAttempt && job.state.isFinal()) {
          charge(job, t[1], Math.min(now, CoreTime.sec(job.endMs)));
        }
        it.remove(); // ended, or requeued: charged up to the last pass
      }
    }
    for (JobRecord job : state.jobsHoldingGpus()) {
      if (job.state == JobState.RUNNING && !tracked.containsKey(job.id)) {
        long from = CoreTime.sec(job.startMs);
        charge(job, from, now);
        tracked.put(job.id, new long[] {job.attempt, now});
      }
    }
    return FairShareFactor.of(ALGORITHM, tracker);
  }

  private void rebuild(ControlState state, Resources clusterCapacity, long nowSec) {
    tracked.clear();
    capacity = clusterCapacity;
    long start = nowSec;
    List<AccountingQueries.Bucket> stored = storedUse(nowSec);
    if (stored != null && !stored.isEmpty()) {
      start = Math.min(start, stored.getFirst().endMs() / 1000 - BUCKET_MS / 1000);
    }
    for (JobRecord job : state.jobs()) {
      if (job.attempt > 0) {
        start = Math.min(start, CoreTime.sec(job.startMs));
      }
    }
    tracker = new UsageTracker(setup.accounts(), clusterCapacity, setup.halfLifeSec(), start);
    tracker.decayTo(nowSec);
    if (stored != null) {
      chargeStored(stored);
    }
    for (JobRecord job : state.jobs()) {
      if (job.attempt == 0) {
        continue;
      }
      long from = CoreTime.sec(job.startMs);
      if (job.state == JobState.RUNNING) {
        charge(job, from, nowSec);
        tracked.put(job.id, new long[] {job.attempt, nowSec});
      } else if (job.state.isFinal() && stored == null) {
        charge(job, from, Math.min(nowSec, Math.max(from, CoreTime.sec(job.endMs))));
      }
    }
  }

  /**
   * The store's use since {@link #HISTORY_HALF_LIVES} half-lives ago; null without a store or when
   * it fails.
   */
  private List<AccountingQueries.Bucket> storedUse(long nowSec) {
    History source = history;
    if (source == null) {
      return null;
    }
    long afterMs = (nowSec - HISTORY_HALF_LIVES * setup.halfLifeSec()) * 1000;
    try {
      return source.buckets(afterMs, BUCKET_MS);
    } catch (Exception e) {
      LOG.warn(
          "fair share: the accounting store cannot be read ({}); usage is rebuilt from the jobs"
              + " the state holds",
          e.toString());
      return null;
    }
  }

  /** Charges the tracker, once it exists, with the store's use (after the state's jobs). */
  private void chargeStored(List<AccountingQueries.Bucket> stored) {
    AccountTree tree = setup.accounts();
    for (AccountingQueries.Bucket b : stored) {
      if (b.account().isEmpty() || !tree.contains(b.account())) {
        continue;
      }
      long endSec = Math.min(b.endMs() / 1000, tracker.nowSec());
      chargeAmount(b.account(), b.gpuSeconds(), endSec, r -> new Resources(r, 0, 0));
      chargeAmount(b.account(), b.cpuSeconds(), endSec, r -> new Resources(0, r, 0));
      chargeAmount(b.account(), b.memoryMbSeconds() * MIB, endSec, r -> new Resources(0, 0, r));
    }
  }

  /**
   * Charges {@code amount} (resource-seconds) as a whole-unit rate over at most an hour ending at
   * {@code endSec} (the tracker charges whole units).
   */
  private void chargeAmount(
      String account, double amount, long endSec, java.util.function.LongFunction<Resources> of) {
    if (amount < 1) {
      return;
    }
    long rate = Math.max(1, (long) Math.ceil(amount / (BUCKET_MS / 1000.0)));
    long seconds = Math.max(1, Math.round(amount / rate));
    long from = Math.max(endSec - seconds, tracker.startSec());
    if (endSec > from) {
      tracker.charge(account, of.apply(rate), from, endSec);
    }
  }

  private void charge(JobRecord job, long fromSec, long toSec) {
    AccountTree tree = setup.accounts();
    String account = job.request.account();
    if (account.isEmpty() || !tree.contains(account)) {
      return;
    }
    long from = Math.max(fromSec, tracker.startSec());
    long to = Math.min(toSec, tracker.nowSec());
    if (to <= from) {
      return;
    }
    tracker.charge(account, held(job.request), from, to);
  }

  static Resources held(JobRequest r) {
    long tasks = r.tasks();
    return new Resources(r.gpus(), (long) r.cpus() * tasks, r.memoryMb() * MIB * tasks);
  }

  /** The tracker's decayed usage (for views); null before the first update. */
  UsageTracker tracker() {
    return tracker;
  }
}
