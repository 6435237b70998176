package io.kairos.core.sched.order;

import io.kairos.core.model.Job;

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
   * The job's key at time {@code nowSec}; lower goes first. Called once per pending job per
   * pass; must be pure and must not allocate.
   */
  long key(Job job, long nowSec);

  /** First come, first served: earlier submission first. */
  JobOrder ARRIVAL =
      new JobOrder() {
        @Override
        public String name() {
          return "arrival";
        }

        @Override
        public long key(Job job, long nowSec) {
          return job.submitSec();
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
        public long key(Job job, long nowSec) {
          // Limits fit in 31 bits (68 years); submission breaks ties.
          return (Math.min(job.timeLimitSec(), Integer.MAX_VALUE) << 32)
              | Math.min(job.submitSec(), 0xFFFF_FFFFL);
        }
      };
}
