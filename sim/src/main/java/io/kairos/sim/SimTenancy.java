package io.kairos.sim;

import io.kairos.config.Tenancy;
import io.kairos.core.fairshare.FairShareFactor;
import java.util.Objects;

/**
 * A simulation under a tenancy file.
 *
 * <p>With {@code schedule} the pass gets the tenancy ({@link io.kairos.core.tenancy.Tenants}): it
 * admits by quota, orders by priority class and fair share, and may preempt; the simulator applies
 * the preemptions (grace, checkpoint, requeue). Without it the policy runs as it would without a
 * tenancy file, and the file only gives the queues and their entitlements that the report measures
 * against (so plain policies can be compared with the multi-tenant one).
 *
 * @param tenancy queues, cohorts, priority classes, accounts and settings
 * @param schedule whether the pass schedules by the tenancy, or the run is only measured by it
 * @param checkpointEverySec a running job saves its progress every this many seconds of run time
 *     since it (re)started; a preempted job resumes from its last checkpoint. 0: never (a preempted
 *     job starts over)
 * @param fairShare how accounts' fair-share factors are computed from their decayed usage
 * @param aloneRuns simulate each queue's jobs by themselves on a cluster of its nominal GPUs, for
 *     finish-time fairness (costs about one more run of the trace)
 */
public record SimTenancy(
    Tenancy tenancy,
    boolean schedule,
    long checkpointEverySec,
    FairShareFactor.Algorithm fairShare,
    boolean aloneRuns) {
  /** Checkpoints every 30 minutes of run time unless told otherwise. */
  public static final long DEFAULT_CHECKPOINT_EVERY_SEC = 1800;

  public SimTenancy {
    Objects.requireNonNull(tenancy, "tenancy");
    Objects.requireNonNull(fairShare, "fairShare");
    if (checkpointEverySec < 0) {
      throw new IllegalArgumentException(
          "checkpointEverySec must be >= 0, got " + checkpointEverySec);
    }
  }

  /** Scheduling by the tenancy, with classic fair share and the default checkpoint interval. */
  public static SimTenancy scheduling(Tenancy tenancy) {
    return new SimTenancy(
        tenancy, true, DEFAULT_CHECKPOINT_EVERY_SEC, FairShareFactor.Algorithm.CLASSIC, true);
  }

  /** Measured by the tenancy only. */
  public SimTenancy measuredOnly() {
    return new SimTenancy(tenancy, false, checkpointEverySec, fairShare, aloneRuns);
  }

  public SimTenancy withSchedule(boolean value) {
    return new SimTenancy(tenancy, value, checkpointEverySec, fairShare, aloneRuns);
  }

  public SimTenancy withCheckpointEverySec(long value) {
    return new SimTenancy(tenancy, schedule, value, fairShare, aloneRuns);
  }

  public SimTenancy withAloneRuns(boolean value) {
    return new SimTenancy(tenancy, schedule, checkpointEverySec, fairShare, value);
  }
}
