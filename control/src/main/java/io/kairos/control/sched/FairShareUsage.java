package io.kairos.control.sched;

import io.kairos.config.Tenancy;
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
 * is rebuilt from the job records: every ended job is charged for its last attempt (its start to
 * its end), running jobs from their start. Usage of earlier attempts of requeued jobs, and of jobs
 * that started and ended between a requeue and the rebuild, is lost: the state keeps only the last
 * attempt's times.
 *
 * <p>Jobs charged to an account that is not in the tree (the user's name, by default) count for
 * nobody's share. Single-threaded (the scheduler's thread).
 */
final class FairShareUsage {
  private static final long MIB = 1L << 20;

  /** The controller computes Slurm's Fair Tree factors (the simulator can be told otherwise). */
  private static final FairShareFactor.Algorithm ALGORITHM = FairShareFactor.Algorithm.FAIR_TREE;

  private final Tenancy setup;
  private UsageTracker tracker;
  private Resources capacity;

  /** Job id → {attempt, charged until (epoch seconds)}. */
  private final Map<Long, long[]> tracked = new HashMap<>();

  FairShareUsage(Tenancy setup) {
    this.setup = setup;
  }

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
    for (JobRecord job : state.jobs()) {
      if (job.attempt > 0) {
        start = Math.min(start, CoreTime.sec(job.startMs));
      }
    }
    tracker = new UsageTracker(setup.accounts(), clusterCapacity, setup.halfLifeSec(), start);
    tracker.decayTo(nowSec);
    for (JobRecord job : state.jobs()) {
      if (job.attempt == 0) {
        continue;
      }
      long from = CoreTime.sec(job.startMs);
      if (job.state == JobState.RUNNING) {
        charge(job, from, nowSec);
        tracked.put(job.id, new long[] {job.attempt, nowSec});
      } else if (job.state.isFinal()) {
        charge(job, from, Math.min(nowSec, Math.max(from, CoreTime.sec(job.endMs))));
      }
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
