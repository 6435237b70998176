package io.kairos.testkit;

/** How long a job started by the {@link SchedulerHarness} actually runs. */
public enum RuntimeModel {
  /**
   * Every job runs exactly to its time limit: the worst case for reservations, and the case in
   * which invariant 4 (backfill never delays a reservation) must hold exactly.
   */
  TIME_LIMIT,
  /** Every job runs the runtime given at submission (its time limit when none was given). */
  EXPLICIT
}
