package io.kairos.protocol.agent;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * Stop a task (cancelled, preempted, or not expected on this node any more).
 *
 * @param graceSec seconds from the stop signal to SIGKILL for this stop; null: the task's own grace
 *     (from its assignment). A preemption sends the tenancy's grace here.
 * @param step null: every task of the job attempt on this node, its steps' included; else only that
 *     step's tasks
 */
public record TaskKill(
    long jobId,
    int attempt,
    String reason,
    Long graceSec,
    @JsonInclude(JsonInclude.Include.NON_NULL) Integer step) {
  public TaskKill(long jobId, int attempt, String reason) {
    this(jobId, attempt, reason, null, null);
  }

  public TaskKill(long jobId, int attempt, String reason, Long graceSec) {
    this(jobId, attempt, reason, graceSec, null);
  }
}
