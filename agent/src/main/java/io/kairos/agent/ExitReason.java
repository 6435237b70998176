package io.kairos.agent;

/**
 * Why the agent ended a task, sent as {@code TaskReport.reason} (the constant's name). A task that
 * ended on its own has no reason: its exit code says how it went.
 */
public enum ExitReason {
  /** It ran past its assignment's {@code timeLimitSec}. */
  TIME_LIMIT,
  /**
   * The controller asked for it (a kill or a fenced reply), or the agent lost its lease or is
   * shutting down; the report's message says which.
   */
  KILLED,
  /** The process could not be started; the report's message says why. */
  LAUNCH_FAILED,
  /** Its stdout and stderr together grew past the agent's {@code maxTaskOutputBytes}. */
  OUTPUT_LIMIT,
  /**
   * The node's health check failed just before the start, so the task was never started; the
   * controller requeues the job elsewhere rather than failing it.
   */
  NODE_UNHEALTHY
}
