package io.kairos.core.sched.preempt;

import io.kairos.core.Checks;
import io.kairos.core.model.JobId;
import io.kairos.core.model.RunningJob;
import java.util.Objects;

/**
 * A running job the caller allows to be preempted, with what preempting it costs.
 *
 * @param job the running job; all of its GPUs (every node of its gang) are freed or none
 * @param costGpuSec the work lost if it is preempted, in GPU-seconds: its GPUs times the time since
 *     its last checkpoint (or its start). The caller computes it; the planner only sums
 * @param protectedUntilSec the job may not be preempted before this time ({@link
 *     ProtectionPolicy}); 0 or any past time for "not protected"
 */
public record VictimCandidate(RunningJob job, long costGpuSec, long protectedUntilSec) {
  public VictimCandidate {
    Objects.requireNonNull(job, "job");
    Checks.nonNegative(costGpuSec, "costGpuSec");
  }

  /** A candidate that is not protected. */
  public static VictimCandidate of(RunningJob job, long costGpuSec) {
    return new VictimCandidate(job, costGpuSec, 0);
  }

  public JobId id() {
    return job.id();
  }

  /** Whether the job is still protected at {@code nowSec}. */
  public boolean isProtectedAt(long nowSec) {
    return nowSec < protectedUntilSec;
  }
}
