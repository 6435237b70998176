package io.kairos.core.model;

import java.util.Objects;

/** A job whose gang holds GPUs: where it runs and since when. */
public record RunningJob(Job job, Placement placement, long startSec) {
  public RunningJob {
    Objects.requireNonNull(job, "job");
    Objects.requireNonNull(placement, "placement");
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
