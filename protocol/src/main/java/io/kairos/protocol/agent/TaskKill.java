package io.kairos.protocol.agent;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * Stop a task (cancelled, preempted, or not expected on this node any more).
 *
 * @param graceSec seconds from the stop signal to SIGKILL for this stop; null: the task's own grace
 *     (from its assignment). A preemption sends the tenancy's grace here.
 * @param step null: every task of the job attempt on this node, its steps' included; else only that
 *     step's tasks
 * @param checkpointSignal when set, this is no stop: the agent sends this signal once to each
 *     running task of the attempt (a preemption asks the job for a checkpoint first), and a later
 *     kill without it stops them
 */
public record TaskKill(
    long jobId,
    int attempt,
    String reason,
    Long graceSec,
    @JsonInclude(JsonInclude.Include.NON_NULL) Integer step,
    @JsonInclude(JsonInclude.Include.NON_NULL) String checkpointSignal) {
  public TaskKill(long jobId, int attempt, String reason, Long graceSec, Integer step) {
    this(jobId, attempt, reason, graceSec, step, null);
  }

  /** Asks the attempt's tasks for a checkpoint with {@code signal}, without stopping them. */
  public static TaskKill askCheckpoint(long jobId, int attempt, String signal, String reason) {
    return new TaskKill(jobId, attempt, reason, null, null, signal);
  }

  public TaskKill(long jobId, int attempt, String reason) {
    this(jobId, attempt, reason, null, null, null);
  }

  public TaskKill(long jobId, int attempt, String reason, Long graceSec) {
    this(jobId, attempt, reason, graceSec, null, null);
  }
}
