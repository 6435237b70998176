package io.kairos.testkit;

import io.kairos.core.model.JobId;
import io.kairos.core.sched.MigrationSettings;
import io.kairos.core.sched.Migrations;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What a {@link SchedulerHarness} knows of migration, as a controller's records would: whether it
 * is on, which jobs may move (their checkpoint time), when each last moved, and the nodes held for
 * moves under way with the end of each hold.
 */
final class HarnessMigration {
  private MigrationSettings settings; // null: migration off
  private final Map<JobId, Long> checkpointSec = new LinkedHashMap<>();
  private final Map<JobId, Long> movedSec = new LinkedHashMap<>();
  private final Map<Integer, JobId> held = new LinkedHashMap<>();
  private final Map<JobId, Long> holdEndsSec = new LinkedHashMap<>();

  void on(MigrationSettings settings) {
    this.settings = Objects.requireNonNull(settings, "settings");
  }

  void checkpointable(JobId id, long sec) {
    checkpointSec.put(id, sec);
  }

  void moved(JobId id, long sec) {
    movedSec.put(id, sec);
  }

  void hold(int node, JobId holder, long endsSec) {
    held.put(node, holder);
    holdEndsSec.put(holder, endsSec);
  }

  void release(JobId holder) {
    held.values().removeIf(holder::equals);
    holdEndsSec.remove(holder);
  }

  Map<JobId, Long> movedSec() {
    return Map.copyOf(movedSec);
  }

  /** What the next pass knows: {@code Migrations.OFF} unless turned on. */
  Migrations forPass() {
    if (settings == null) {
      return Migrations.OFF;
    }
    var movable = new LinkedHashMap<JobId, Migrations.Movable>();
    checkpointSec.forEach(
        (id, sec) -> movable.put(id, new Migrations.Movable(sec, movedSec.getOrDefault(id, -1L))));
    return new Migrations(true, settings, movable, held, holdEndsSec);
  }
}
