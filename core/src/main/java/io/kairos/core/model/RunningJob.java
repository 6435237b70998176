package io.kairos.core.model;

import io.kairos.core.Checks;
import java.util.Objects;

/**
 * A job whose gang holds GPUs: where it runs and since when.
 *
 * @param expectedRunSec how long it is expected to run: its time limit, or less where its user's
 *     recent jobs ran less of theirs (see {@code ClusterStore}); between 1 and the limit. Only
 *     start forecasts read it; reservations and backfill keep to the limit.
 */
public record RunningJob(Job job, Placement placement, long startSec, long expectedRunSec) {
  public RunningJob {
    Objects.requireNonNull(job, "job");
    Objects.requireNonNull(placement, "placement");
    Checks.argument(
        expectedRunSec >= 1 && expectedRunSec <= job.timeLimitSec(),
        () ->
            "expectedRunSec "
                + expectedRunSec
                + " must be in [1, limit "
                + job.timeLimitSec()
                + "]");
  }

  /** A running job expected to run to its limit. */
  public RunningJob(Job job, Placement placement, long startSec) {
    this(job, placement, startSec, job.timeLimitSec());
  }

  public JobId id() {
    return job.id();
  }

  /** When the job must end at the latest: its start plus its time limit. */
  public long endLimitSec() {
    return startSec + job.timeLimitSec();
  }

  /** When it is expected to end: its start plus {@link #expectedRunSec}. */
  public long expectedEndSec() {
    return startSec + expectedRunSec;
  }

  public int gpusOn(int placementSlot) {
    return placement.tasksOn(placementSlot) * job.spec().gang().shape().gpus();
  }
}
