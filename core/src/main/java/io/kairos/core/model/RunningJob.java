package io.kairos.core.model;

import java.util.Objects;

/**
 * A job whose gang holds GPUs: where it runs and since when.
 *
 * @param placement what the job holds now: its whole gang, or for a stopping job the part whose
 *     tasks have not yet confirmed their end
 * @param releasedTasks how many of its gang's tasks have stopped and let their GPUs go (0 for a
 *     running job)
 * @param anchorNode the node of its first task, which hosts an elastic job's rendezvous: a resize
 *     never removes it, and may add nodes on either side of it; -1 when it holds no node
 */
public record RunningJob(
    Job job, Placement placement, long startSec, int releasedTasks, int anchorNode) {
  public RunningJob {
    Objects.requireNonNull(job, "job");
    Objects.requireNonNull(placement, "placement");
    if (releasedTasks < 0) {
      throw new IllegalArgumentException("releasedTasks must be >= 0, got " + releasedTasks);
    }
  }

  /** A job holding its whole gang, its first task on its lowest node. */
  public RunningJob(Job job, Placement placement, long startSec) {
    this(job, placement, startSec, 0);
  }

  /** A job whose first task is on its lowest node. */
  public RunningJob(Job job, Placement placement, long startSec, int releasedTasks) {
    this(
        job,
        placement,
        startSec,
        releasedTasks,
        placement.nodeCount() > 0 ? placement.node(0) : -1);
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
