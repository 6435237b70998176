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
   * The key of a job submitted at {@code submitSec} with time limit {@code limitSec} and {@code
   * gpus} GPUs, at time {@code nowSec}; lower goes first. Called once per pending job per pass
   * (primitive arguments keep that loop on flat arrays); must be pure and must not allocate.
   */
  long key(long submitSec, long limitSec, int gpus, long nowSec);

  /** Whether {@link #key} ignores {@code nowSec}, so arrival-sorted input often stays sorted. */
  default boolean isStatic() {
    return true;
  }

  /** First come, first served: earlier submission first. */
  JobOrder ARRIVAL =
      new JobOrder() {
        @Override
        public String name() {
          return "arrival";
        }

        @Override
        public long key(long submitSec, long limitSec, int gpus, long nowSec) {
          return submitSec;
        }
      };

  /** Shortest time limit (runtime estimate) first, then earlier submission. */
  JobOrder SHORTEST_LIMIT =
      new JobOrder() {
        @Override
        public String name() {
          return "shortest-limit";
        }

        @Override
        public long key(long submitSec, long limitSec, int gpus, long nowSec) {
          // Limits fit in 31 bits (68 years); submission breaks ties.
          return (Math.min(limitSec, Integer.MAX_VALUE) << 32) | Math.min(submitSec, 0xFFFF_FFFFL);
        }
      };
}
