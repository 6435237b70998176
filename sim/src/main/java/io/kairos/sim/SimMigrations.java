package io.kairos.sim;

import io.kairos.core.model.JobId;
import io.kairos.core.sched.MigrationSettings;
import io.kairos.core.sched.Migrations;
import io.kairos.core.state.ClusterStore;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Migration in the simulator ({@code kairos simulate --migration}): every running job of a fixed
 * size counts as checkpointable with no checkpoint time of its own, so a move costs {@link
 * MigrationSettings#restartCostSec()}; moves happen at once (no target is held), and each job's
 * last move is remembered for its protection window. Off: {@link Migrations#OFF}, the pass as
 * before.
 */
final class SimMigrations {
  private final Optional<MigrationSettings> settings;
  private final Map<JobId, Long> lastMovedSec = new HashMap<>();

  SimMigrations(Optional<MigrationSettings> settings) {
    this.settings = settings;
  }

  /** What the pass at {@code t} may move. O(running jobs) when on. */
  Migrations inputs(ClusterStore store, long t) {
    if (settings.isEmpty()) {
      return Migrations.OFF;
    }
    var movable = new HashMap<JobId, Migrations.Movable>();
    for (var r : store.runningJobs()) {
      if (!r.job().spec().gang().isElastic()) {
        movable.put(r.id(), new Migrations.Movable(0, lastMovedSec.getOrDefault(r.id(), -1L)));
      }
    }
    return new Migrations(true, settings.get(), movable, Map.of());
  }

  void moved(JobId job, long t) {
    lastMovedSec.put(job, t);
  }

  long costSec() {
    return settings.map(MigrationSettings::restartCostSec).orElse(0L);
  }
}
