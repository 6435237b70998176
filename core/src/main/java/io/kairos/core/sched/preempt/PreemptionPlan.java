package io.kairos.core.sched.preempt;

import io.kairos.core.Checks;
import io.kairos.core.model.Placement;
import io.kairos.core.model.RunningJob;
import java.util.List;
import java.util.Objects;

/**
 * Which running jobs to preempt, and where the preemptor then goes.
 *
 * @param victims the jobs to preempt, in the caller's preference order; empty when the preemptor
 *     fits without preempting anything
 * @param placement a placement of the preemptor on what is free plus what the victims hold, without
 *     GPU masks (chosen when the job starts, as for {@code GangPlacer})
 * @param costGpuSec the victims' summed {@link VictimCandidate#costGpuSec()}
 */
public record PreemptionPlan(List<RunningJob> victims, Placement placement, long costGpuSec) {
  public PreemptionPlan {
    victims = List.copyOf(victims);
    Objects.requireNonNull(placement, "placement");
    Checks.nonNegative(costGpuSec, "costGpuSec");
  }

  public boolean needsPreemption() {
    return !victims.isEmpty();
  }
}
