package io.kairos.core.sched.order;

/**
 * Orders pending jobs within one priority level. Implementations are stateless and shared.
 *
 * <p>Full order used by a pass:
 *
 * <ol>
 *   <li>higher {@code priority} first;
 *   <li>lower {@link #key} first;
 *   <li>lower job id first, so the order is total.
 * </ol>
 */
public interface JobOrder {
  /** A stable name used in configuration and reports. */
  String name();

  /**
   * The key of a job eligible since {@code eligibleSec} (its submission, unless it was held: a
   * begin time or a requeue backoff; waiting counts from it, as Slurm's age does) with time limit
   * {@code limitSec} and {@code gpus} GPUs, at time {@code nowSec}; lower goes first. Called once
   * per pending job per pass (primitive arguments keep that loop on flat arrays); must be pure and
   * must not allocate.
   */
  long key(long eligibleSec, long limitSec, int gpus, long nowSec);

  /**
   * Whether {@link #key} is given the job's expected run time (its limit times its user's recent
   * share, {@link io.kairos.core.state.ClusterSnapshot#expectedRunSec}) in place of its limit.
   */
  default boolean usesExpectedRun() {
    return false;
  }

  /** Whether {@link #key} ignores {@code nowSec}, so arrival-sorted input often stays sorted. */
  default boolean isStatic() {
    return true;
  }

  /** First come, first served: earlier eligible time (submission, unless held) first. */
  JobOrder ARRIVAL =
      new JobOrder() {
        @Override
        public String name() {
          return "arrival";
        }

        @Override
        public long key(long eligibleSec, long limitSec, int gpus, long nowSec) {
          return eligibleSec;
        }
      };

  /** Shortest time limit (runtime estimate) first, then earlier eligible time. */
  JobOrder SHORTEST_LIMIT =
      new JobOrder() {
        @Override
        public String name() {
          return "shortest-limit";
        }

        @Override
        public long key(long eligibleSec, long limitSec, int gpus, long nowSec) {
          // Limits fit in 31 bits (68 years); the eligible time breaks ties.
          return (Math.min(limitSec, Integer.MAX_VALUE) << 32)
              | Math.min(eligibleSec, 0xFFFF_FFFFL);
        }
      };
}
