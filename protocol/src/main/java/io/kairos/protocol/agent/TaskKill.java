package io.kairos.protocol.agent;

/**
 * Stop a task (cancelled, preempted, or not expected on this node any more).
 *
 * @param graceSec seconds from the stop signal to SIGKILL for this stop; null: the task's own grace
 *     (from its assignment). A preemption sends the tenancy's grace here.
 */
public record TaskKill(long jobId, int attempt, String reason, Long graceSec) {
  public TaskKill(long jobId, int attempt, String reason) {
    this(jobId, attempt, reason, null);
  }
}
