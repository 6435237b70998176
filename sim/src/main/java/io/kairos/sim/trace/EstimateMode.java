package io.kairos.sim.trace;

/** Where a trace job's time limit (the scheduler's runtime estimate) comes from. */
public enum EstimateMode {
  /**
   * Use the estimate the trace carries (SWF requested time, Kairos CSV {@code time_limit_s}); run
   * times stand in only where the trace has none. The default.
   */
  REQUESTED,
  /** Use each job's real run time as its estimate (a perfect-knowledge baseline). */
  ACTUAL
}
