package io.kairos.core.sched;

import io.kairos.core.state.ClusterSnapshot;
import java.util.Objects;

/**
 * Everything a pass reads: the snapshot, the time (seconds) and a seed for any randomised tie
 * break. The same input gives the same result.
 */
public record PassInput(ClusterSnapshot snapshot, long nowSec, long seed) {
  public PassInput {
    Objects.requireNonNull(snapshot, "snapshot");
  }
}
