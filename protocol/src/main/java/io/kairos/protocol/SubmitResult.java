package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * The reply to a submit (201 Created). Batch submits reply with a list, one per submission.
 *
 * @param id the new job's id; for a job array, the id of its first element, which is also the
 *     array's id (Slurm's %A)
 * @param count for a job array only: how many elements (jobs) it made, with consecutive ids {@code
 *     id .. id + count - 1} in ascending task-id order; absent for a single job
 * @param warnings what the controller accepted but does not honour as asked, one sentence each
 *     (Slurm's {@code --qos} naming no priority class, where the site allows that); absent when
 *     none
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SubmitResult(long id, Integer count, List<String> warnings) {
  /** The reply for a single job. */
  public SubmitResult(long id) {
    this(id, null, null);
  }

  /** The reply without warnings. */
  public SubmitResult(long id, Integer count) {
    this(id, count, null);
  }
}
