package io.kairos.core.tenancy;

import java.util.Objects;

/**
 * What a queue's pending jobs may preempt to get quota, as Kueue's ClusterQueue {@code preemption}
 * stanza. The ledger only records it; the preemption stage reads it.
 *
 * @param withinQueue preempt jobs of the same queue
 * @param reclaimWithinCohort preempt other queues' jobs that borrow this queue's nominal quota
 * @param borrowWithinCohort preempt other queues' jobs in order to borrow; {@link
 *     BorrowWithinCohort#NEVER} when off
 * @param fairShare preempt jobs of accounts more over-served by fair share than the pending job's
 *     ({@link FairShare#NEVER} when off)
 */
public record PreemptionPolicy(
    WithinQueue withinQueue,
    ReclaimWithinCohort reclaimWithinCohort,
    BorrowWithinCohort borrowWithinCohort,
    FairShare fairShare) {

  /** Nothing is ever preempted for this queue's jobs. */
  public static final PreemptionPolicy NONE =
      new PreemptionPolicy(WithinQueue.NEVER, ReclaimWithinCohort.NEVER, BorrowWithinCohort.NEVER);

  public PreemptionPolicy {
    Objects.requireNonNull(withinQueue, "preemption.withinQueue");
    Objects.requireNonNull(reclaimWithinCohort, "preemption.reclaimWithinCohort");
    Objects.requireNonNull(borrowWithinCohort, "preemption.borrowWithinCohort");
    Objects.requireNonNull(fairShare, "preemption.fairShare");
  }

  /** Kueue's three settings, without fair-share preemption. */
  public PreemptionPolicy(
      WithinQueue withinQueue,
      ReclaimWithinCohort reclaimWithinCohort,
      BorrowWithinCohort borrowWithinCohort) {
    this(withinQueue, reclaimWithinCohort, borrowWithinCohort, FairShare.NEVER);
  }

  /** Whether this policy ever preempts. */
  public boolean any() {
    return withinQueue != WithinQueue.NEVER
        || reclaimWithinCohort != ReclaimWithinCohort.NEVER
        || borrowWithinCohort.policy() != BorrowWithinCohort.Policy.NEVER
        || fairShare != FairShare.NEVER;
  }

  /**
   * Fair-share preemption (Slurm's PreemptType=preempt/qos with fair share, Kueue's fair sharing
   * "LessThanOrEqualToFinalShare"): a pending job may preempt running jobs of no higher priority
   * whose account has a lower fair-share factor (is more over-served) than its own, the most
   * over-served first.
   */
  public enum FairShare {
    NEVER,
    /** Preempt jobs of accounts more over-served than the pending job's. */
    OVER_SERVED
  }

  /** Preemption among the queue's own jobs. */
  public enum WithinQueue {
    NEVER,
    /** A pending job may preempt the queue's running jobs of lower priority. */
    LOWER_PRIORITY
  }

  /** Preemption of jobs of other queues in the cohort that use this queue's nominal quota. */
  public enum ReclaimWithinCohort {
    NEVER,
    /** Only borrowing jobs of lower priority than the pending job. */
    LOWER_PRIORITY,
    /** Any borrowing job, whatever its priority. */
    ANY
  }

  /**
   * Preemption in order to borrow (Kueue's {@code borrowWithinCohort}).
   *
   * @param policy {@link Policy#NEVER} or {@link Policy#LOWER_PRIORITY}
   * @param maxPriorityThreshold only jobs with priority at most this may be preempted; {@code
   *     null}: any lower priority
   */
  public record BorrowWithinCohort(Policy policy, Integer maxPriorityThreshold) {
    /** Never preempt in order to borrow. */
    public static final BorrowWithinCohort NEVER = new BorrowWithinCohort(Policy.NEVER, null);

    public BorrowWithinCohort {
      Objects.requireNonNull(policy, "preemption.borrowWithinCohort.policy");
    }

    /** Whether borrowing may preempt. */
    public enum Policy {
      NEVER,
      LOWER_PRIORITY
    }
  }
}
