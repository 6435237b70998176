package io.kairos.control.state;

import io.kairos.protocol.TaskPlacement;
import java.util.List;

/**
 * One ended attempt of a job that was requeued afterwards (a preemption, a lost or unhealthy node,
 * a failed task with restarts left): what the accounting store records for it. The job's last
 * attempt is the job record itself ({@link JobRecord#startMs} to {@link JobRecord#endMs}).
 *
 * @param attempt the attempt's number (1 for the first start)
 * @param startMs when it started
 * @param endMs when its last task stopped
 * @param placement its tasks, in rank order
 * @param exitCode the first non-zero exit code of its tasks, 0 when none (a lost task counts as
 *     {@link ControlState#LOST_EXIT_CODE})
 * @param reason why it ended, in words (the job's message at the requeue)
 * @param preemptedBy the job a preemption stopped it for; 0 when it was not preempted
 */
public record AttemptRecord(
    int attempt,
    long startMs,
    long endMs,
    List<TaskPlacement> placement,
    int exitCode,
    String reason,
    long preemptedBy) {
  public AttemptRecord {
    placement = placement == null ? List.of() : List.copyOf(placement);
  }

  /** How many past attempts a job keeps: the latest; older ones are dropped from the state. */
  public static final int MAX_KEPT = 32;
}
