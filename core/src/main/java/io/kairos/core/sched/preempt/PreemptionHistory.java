package io.kairos.core.sched.preempt;

import java.util.List;

/**
 * When a job was last preempted: the times (seconds, ascending) that {@link ProtectionPolicy} still
 * needs, at most its {@code maxPreemptionsPerWindow} most recent. A small value the caller keeps
 * per job (beside the job's requeue count) and replaces on each preemption.
 */
public record PreemptionHistory(List<Long> preemptedAtSec) {
  public static final PreemptionHistory NONE = new PreemptionHistory(List.of());

  public PreemptionHistory {
    preemptedAtSec = List.copyOf(preemptedAtSec);
    for (int i = 1; i < preemptedAtSec.size(); i++) {
      if (preemptedAtSec.get(i - 1) > preemptedAtSec.get(i)) {
        throw new IllegalArgumentException("preemptedAtSec must be ascending: " + preemptedAtSec);
      }
    }
  }

  public int count() {
    return preemptedAtSec.size();
  }

  /** The latest preemption, or -1 when none is remembered. */
  public long lastSec() {
    return preemptedAtSec.isEmpty() ? -1 : preemptedAtSec.getLast();
  }
}
