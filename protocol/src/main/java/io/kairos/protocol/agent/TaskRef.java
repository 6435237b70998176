package io.kairos.protocol.agent;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * Names one launch: the agent may forget an exited task the controller acknowledged.
 *
 * @param step null for the job's own task; else the job step it belongs to
 */
public record TaskRef(
    long jobId, int attempt, int task, @JsonInclude(JsonInclude.Include.NON_NULL) Integer step) {
  /** One of the job's own tasks. */
  public TaskRef(long jobId, int attempt, int task) {
    this(jobId, attempt, task, null);
  }
}
