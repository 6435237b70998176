package io.kairos.protocol.agent;

/**
 * Why the agent ended a task: {@link TaskReport#reason()} on the agent protocol, and the reason of
 * a task's end in the controller's log. A task that ended on its own has no reason (null): its exit
 * code says how it went.
 *
 * <p>On the wire each reason is its constant's name ({@code "KILLED"}), as the strings were before
 * this enum: log entries, snapshots and agents written then still decode. So a constant is never
 * renamed; a new one needs every switch over the enum to handle it (they have no {@code default}).
 */
public enum ExitReason {
  /** It ran past its assignment's {@code timeLimitSec}. */
  TIME_LIMIT,
  /**
   * The controller asked for it (a kill or a fenced reply), or the agent is shutting down; the
   * report's message says which. Never restarted: someone wanted it stopped.
   */
  KILLED,
  /** The process could not be started; the report's message says why. */
  LAUNCH_FAILED,
  /** Its stdout and stderr together grew past the agent's {@code maxTaskOutputBytes}. */
  OUTPUT_LIMIT,
  /**
   * The node's health check failed just before the start, so the task was never started; or the
   * agent lost its lease (no heartbeat accepted for that long) and killed the task, as it must (the
   * message says "lease expired"). The node's fault, not the job's: the controller requeues the job
   * elsewhere rather than failing it.
   */
  NODE_UNHEALTHY
}
