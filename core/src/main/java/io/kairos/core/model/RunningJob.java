package io.kairos.core.model;

import java.util.Objects;

/**
 * A job whose gang holds GPUs: where it runs and since when.
 *
 * @param placement what the job holds now: its whole gang, or for a stopping job the part whose
 *     tasks have not yet confirmed their end
 * @param releasedTasks how many of its gang's tasks have stopped and let their GPUs go (0 for a
 *     running job)
 */
public record RunningJob(Job job, Placement placement, long startSec, int releasedTasks) {
  public RunningJob {
    Objects.requireNonNull(job, "job");
    Objects.requireNonNull(placement, "placement");
    if (releasedTasks < 0) {
      throw new IllegalArgumentException("releasedTasks must be >= 0, got " + releasedTasks);
    }
  }

  /** A job holding its whole gang. */
  public RunningJob(Job job, Placement placement, long startSec) {
    this(job, placement, startSec, 0);
  }

  public JobId id() {
    return job.id();
  }

  /** When the job must end at the latest: its start plus its time limit. */
  public long endLimitSec() {
    return startSec + job.timeLimitSec();
  }

  public int gpusOn(int placementSlot) {
    return placement.tasksOn(placementSlot) * job.spec().gang().shape().gpus();
  }
}
