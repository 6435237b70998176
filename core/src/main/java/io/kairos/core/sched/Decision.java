package io.kairos.core.sched;

import io.kairos.core.model.JobId;
import io.kairos.core.model.Placement;

/** What a pass decided for one job; the driver commits it (controller) or applies it (sim). */
public sealed interface Decision {
  JobId job();

  /** Start the whole gang now on {@code placement} (GPU masks chosen). */
  record Start(JobId job, Placement placement) implements Decision {}

  /**
   * The job cannot start now; it is promised {@code startSec}, assuming running jobs run to their
   * time limits. Later jobs were only started if they do not delay this. {@code placement} names
   * the nodes it is promised (no GPU masks yet), or no node at all when the promise is a count of
   * GPUs anywhere (a gang of one-GPU tasks on any node: see {@code place.Reservation}).
   */
  record Reserve(JobId job, long startSec, Placement placement) implements Decision {}

  /**
   * Stop the running job {@code job} (signal, grace period, then requeue) so that the pending job
   * {@code preemptor} can start.
   *
   * @param kind why: within the queue by priority, reclaim of lent quota, or fair share
   * @param detail for people, e.g. {@code reclaim: queue vision borrows 8 of research's gpu:H100}
   */
  record Preempt(JobId job, JobId preemptor, PreemptionKind kind, String detail)
      implements Decision {}

  /**
   * Resize the running elastic job {@code job} to {@code placement}, its whole new placement: the
   * nodes it keeps with the same GPUs, plus whole nodes added (grow) or less whole nodes removed
   * (shrink). Decided by the pass's elastic stage ({@link ElasticStage}).
   *
   * @param fromTasks its size before, so that a driver can tell a grow from a shrink and refuse a
   *     decision that went stale
   * @param beneficiary for a shrink, the waiting job it makes room for; null for a grow
   */
  record Resize(JobId job, Placement placement, int fromTasks, JobId beneficiary)
      implements Decision {
    public boolean grows() {
      return placement.totalTasks() > fromTasks;
    }
  }

  /**
   * Move the running checkpointable job {@code job} to {@code target}: checkpoint it, stop it, and
   * restart it there (the driver holds the target's nodes for it meanwhile). Decided by the pass's
   * migration stage ({@link MigrationStage}) only when the modelled gain exceeds the cost.
   *
   * @param beneficiary the job the move serves: the waiting job it lets start (defragmentation), or
   *     {@code job} itself when it is put into a narrower topology level (consolidation)
   * @param gainGpuSec the modelled gain, in GPU-seconds
   * @param costGpuSec the modelled checkpoint-and-restart cost, in GPU-seconds ({@code <} gain)
   */
  record Migrate(JobId job, Placement target, JobId beneficiary, long gainGpuSec, long costGpuSec)
      implements Decision {
    /** Whether the move consolidates the job itself rather than making room for another. */
    public boolean consolidates() {
      return beneficiary.equals(job);
    }
  }

  /** Why a job is preempted. */
  enum PreemptionKind {
    /** A higher-priority job of the same queue needs the room. */
    PRIORITY,
    /** Its queue borrows quota that another queue of the cohort now claims back. */
    RECLAIM,
    /** A lower-priority job of another queue yields so that the preemptor may borrow. */
    BORROW,
    /** Its account is the most over-served by fair share. */
    FAIR_SHARE
  }
}
