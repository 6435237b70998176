package io.kairos.agent;

import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskRef;
import java.util.Comparator;

/**
 * Names one launch: (job, attempt, step, task), where {@code step} is {@link #NO_STEP} for the
 * job's own tasks. The protocol is idempotent by this key. Ordered by job, then attempt, then step,
 * then task, so reports come out in a stable order.
 */
public record TaskKey(long jobId, int attempt, int step, int task) implements Comparable<TaskKey> {
  /** The step of the job's own tasks (not started by srun). */
  public static final int NO_STEP = -1;

  private static final Comparator<TaskKey> ORDER =
      Comparator.comparingLong(TaskKey::jobId)
          .thenComparingInt(TaskKey::attempt)
          .thenComparingInt(TaskKey::step)
          .thenComparingInt(TaskKey::task);

  public TaskKey {
    if (jobId <= 0) {
      throw new IllegalArgumentException("jobId must be > 0, got " + jobId);
    }
    if (attempt < 0) {
      throw new IllegalArgumentException("attempt must be >= 0, got " + attempt);
    }
    if (step < NO_STEP) {
      throw new IllegalArgumentException("step must be >= 0, got " + step);
    }
    if (task < 0) {
      throw new IllegalArgumentException("task must be >= 0, got " + task);
    }
  }

  /** One of the job's own tasks. */
  public TaskKey(long jobId, int attempt, int task) {
    this(jobId, attempt, NO_STEP, task);
  }

  public static TaskKey of(TaskAssignment assignment) {
    return new TaskKey(
        assignment.jobId(), assignment.attempt(), stepOf(assignment.step()), assignment.task());
  }

  public static TaskKey of(TaskRef ref) {
    return new TaskKey(ref.jobId(), ref.attempt(), stepOf(ref.step()), ref.task());
  }

  private static int stepOf(Integer step) {
    if (step != null && step < 0) {
      throw new IllegalArgumentException("step must be >= 0, got " + step);
    }
    return step == null ? NO_STEP : step;
  }

  /** Whether this is a step's launch rather than one of the job's own tasks. */
  public boolean isStep() {
    return step != NO_STEP;
  }

  /** The step as the protocol writes it: null for the job's own tasks. */
  public Integer stepOrNull() {
    return isStep() ? step : null;
  }

  /**
   * The name of the task's directory under {@code <dataDir>/tasks/}: {@code 42-1-0} for task 0 of
   * job 42's attempt 1, {@code 42-1-0.s3} for that attempt's step 3 on its node 0.
   */
  public String dirName() {
    return jobId + "-" + attempt + "-" + task + (isStep() ? ".s" + step : "");
  }

  @Override
  public int compareTo(TaskKey other) {
    return ORDER.compare(this, other);
  }

  @Override
  public String toString() {
    return (isStep() ? "step " : "task ") + dirName();
  }
}
