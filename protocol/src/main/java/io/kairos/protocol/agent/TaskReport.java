package io.kairos.protocol.agent;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One task's state as its agent reports it in a heartbeat.
 *
 * @param exitCode set once EXITED: the process's exit code, or 128 + signal when killed
 * @param reason set once EXITED when the agent ended it (see {@link ExitReason}); null when the
 *     task ended on its own
 * @param startedAtMs epoch millis when the process started
 * @param endedAtMs epoch millis when it ended
 * @param step null for the job's own task; else the job step it belongs to
 * @param exitCodes once EXITED, when the entry ran more than one process: each one's code, by local
 *     rank ({@code exitCode} then follows Slurm's rule over them); null for one process
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TaskReport(
    long jobId,
    int attempt,
    int task,
    TaskStatus status,
    Integer exitCode,
    ExitReason reason,
    String message,
    Long startedAtMs,
    Long endedAtMs,
    Integer step,
    java.util.List<Integer> exitCodes) {

  /** A report of one of the job's own tasks, one process (agents before steps). */
  public TaskReport(
      long jobId,
      int attempt,
      int task,
      TaskStatus status,
      Integer exitCode,
      ExitReason reason,
      String message,
      Long startedAtMs,
      Long endedAtMs) {
    this(
        jobId,
        attempt,
        task,
        status,
        exitCode,
        reason,
        message,
        startedAtMs,
        endedAtMs,
        null,
        null);
  }

  /** The launch this report is about. */
  public TaskRef ref() {
    return new TaskRef(jobId, attempt, task, step);
  }
}
