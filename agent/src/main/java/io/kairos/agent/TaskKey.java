package io.kairos.agent;

import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskRef;
import java.util.Comparator;

/**
 * Names one launch: (job, attempt, task). The protocol is idempotent by this key. Ordered by job,
 * then attempt, then task, so reports come out in a stable order.
 */
public record TaskKey(long jobId, int attempt, int task) implements Comparable<TaskKey> {
  private static final Comparator<TaskKey> ORDER =
      Comparator.comparingLong(TaskKey::jobId)
          .thenComparingInt(TaskKey::attempt)
          .thenComparingInt(TaskKey::task);

  public TaskKey {
    if (jobId <= 0) {
      throw new IllegalArgumentException("jobId must be > 0, got " + jobId);
    }
    if (attempt < 0) {
      throw new IllegalArgumentException("attempt must be >= 0, got " + attempt);
    }
    if (task < 0) {
      throw new IllegalArgumentException("task must be >= 0, got " + task);
    }
  }

  public static TaskKey of(TaskAssignment assignment) {
    return new TaskKey(assignment.jobId(), assignment.attempt(), assignment.task());
  }

  public static TaskKey of(TaskRef ref) {
    return new TaskKey(ref.jobId(), ref.attempt(), ref.task());
  }

  /** The name of the task's directory under {@code <dataDir>/tasks/}: {@code 42-1-0}. */
  public String dirName() {
    return jobId + "-" + attempt + "-" + task;
  }

  @Override
  public int compareTo(TaskKey other) {
    return ORDER.compare(this, other);
  }

  @Override
  public String toString() {
    return "task " + dirName();
  }
}
