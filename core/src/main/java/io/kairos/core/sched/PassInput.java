package io.kairos.core.sched;

import io.kairos.core.state.ClusterSnapshot;
import io.kairos.core.tenancy.Tenants;
import java.util.Objects;

/**
 * Everything a pass reads: the snapshot, the time (seconds), a seed for any randomised tie break,
 * what it may migrate ({@link Migrations}, its holds as live at {@code nowSec}), and the tenancy
 * (queues with quotas, fair share, preemption), {@link Tenants#none()} for a single-tenant pass.
 * Never null. The same input gives the same result.
 */
public record PassInput(
    ClusterSnapshot snapshot, long nowSec, long seed, Tenants tenants, Migrations migrations) {
  public PassInput {
    Objects.requireNonNull(snapshot, "snapshot");
    Objects.requireNonNull(tenants, "tenants (Tenants.none() for a single-tenant pass)");
    Objects.requireNonNull(migrations, "migrations (Migrations.OFF for a pass that moves nothing)");
    // A hold past its end binds no stage, even before the driver has ended it for good.
    migrations = migrations.liveAt(nowSec);
  }

  /** A pass that moves no running job ({@link Migrations#OFF}). */
  public PassInput(ClusterSnapshot snapshot, long nowSec, long seed, Tenants tenants) {
    this(snapshot, nowSec, seed, tenants, Migrations.OFF);
  }

  /** This input with {@code migrations}. */
  public PassInput withMigrations(Migrations migrations) {
    return new PassInput(snapshot, nowSec, seed, tenants, migrations);
  }

  /** A single-tenant pass: every job admitted, no preemption. */
  public PassInput(ClusterSnapshot snapshot, long nowSec, long seed) {
    this(snapshot, nowSec, seed, Tenants.none());
  }
}
