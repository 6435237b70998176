package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The reply to a submit (201 Created). Batch submits reply with a list, one per submission.
 *
 * @param id the new job's id; for a job array, the id of its first element, which is also the
 *     array's id (Slurm's %A)
 * @param count for a job array only: how many elements (jobs) it made, with consecutive ids {@code
 *     id .. id + count - 1} in ascending task-id order; absent for a single job
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SubmitResult(long id, Integer count) {
  /** The reply for a single job. */
  public SubmitResult(long id) {
    this(id, null);
  }
}
