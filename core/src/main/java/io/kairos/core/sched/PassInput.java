package io.kairos.core.sched;

import io.kairos.core.state.ClusterSnapshot;
import io.kairos.core.tenancy.Tenants;
import java.util.Objects;

/**
 * Everything a pass reads: the snapshot, the time (seconds), a seed for any randomised tie break,
 * and the tenancy (queues with quotas, fair share, preemption), {@link Tenants#none()} for a
 * single-tenant pass. Never null. The same input gives the same result.
 */
public record PassInput(ClusterSnapshot snapshot, long nowSec, long seed, Tenants tenants) {
  public PassInput {
    Objects.requireNonNull(snapshot, "snapshot");
    Objects.requireNonNull(tenants, "tenants (Tenants.none() for a single-tenant pass)");
  }

  /** A single-tenant pass: every job admitted, no preemption. */
  public PassInput(ClusterSnapshot snapshot, long nowSec, long seed) {
    this(snapshot, nowSec, seed, Tenants.none());
  }
}
