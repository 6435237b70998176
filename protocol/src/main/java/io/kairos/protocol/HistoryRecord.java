package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * An ended job as the accounting store keeps it ({@code GET /api/v1/history}): the job, each
 * attempt, what it used and how it ended. Times are ISO-8601 instants (UTC).
 *
 * @param state SUCCEEDED, FAILED or CANCELLED
 * @param exitCode the failed task's code, 0 for a success; absent when cancelled
 * @param message how it ended, in words
 * @param startTime its last attempt's start; absent when it never started
 * @param elapsedSec its last attempt's run time (end minus start); 0 when it never started
 * @param attempts how many times it started
 * @param requeues how many times it went back to PENDING after starting
 * @param preemptions how many times it was preempted
 * @param gpus GPUs it asked for (all tasks)
 * @param gpuModel the GPU model it asked for; absent for any
 * @param nodes the nodes of its last attempt, in rank order; empty when it never started
 * @param gpuSeconds GPU-seconds over all its attempts
 * @param gpuSecondsByModel the same by the model of the GPUs it held
 * @param cpuSeconds CPU-seconds (its tasks' CPUs times run time) over all attempts
 * @param memoryMbSeconds memory (MiB) times run time over all attempts
 * @param attemptList each attempt: when, where, how it ended
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record HistoryRecord(
    long id,
    String name,
    String user,
    String account,
    String queue,
    String priorityClass,
    JobState state,
    Integer exitCode,
    String message,
    String submitTime,
    String startTime,
    String endTime,
    long elapsedSec,
    int attempts,
    int requeues,
    int preemptions,
    int gpus,
    String gpuModel,
    int tasks,
    int cpus,
    long memoryMb,
    long timeLimitSec,
    List<String> nodes,
    double gpuSeconds,
    Map<String, Double> gpuSecondsByModel,
    double cpuSeconds,
    double memoryMbSeconds,
    List<JobAttempt> attemptList) {

  /**
   * One attempt.
   *
   * @param exitCode the first non-zero exit code of its tasks, 0 when none; absent for a last
   *     attempt that was cancelled
   * @param reason why it ended (a requeue's cause, or the job's end)
   * @param preemptedBy the job it was preempted for; absent when not preempted
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record JobAttempt(
      int attempt,
      String startTime,
      String endTime,
      List<String> nodes,
      int gpus,
      Integer exitCode,
      String reason,
      Long preemptedBy) {}
}
