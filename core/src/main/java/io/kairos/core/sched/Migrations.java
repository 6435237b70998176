package io.kairos.core.sched;

import io.kairos.core.Checks;
import io.kairos.core.model.JobId;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What a pass knows about migration: whether it may move jobs, its settings, which running jobs may
 * be moved at all (they declare checkpoints) and what checkpointing costs each, and the nodes held
 * for migrations under way (the targets of jobs being moved, which no other job may take until the
 * moved job has restarted there). {@link #OFF} for a pass that never migrates: then the pass
 * decides exactly as it did before migration existed.
 *
 * @param movable the running jobs that may be moved, with their checkpoint cost and last move
 * @param held node index to the job it is held for
 */
public record Migrations(
    boolean enabled,
    MigrationSettings settings,
    Map<JobId, Movable> movable,
    Map<Integer, JobId> held) {
  /** Nothing moves, nothing is held. */
  public static final Migrations OFF =
      new Migrations(false, MigrationSettings.DEFAULT, Map.of(), Map.of());

  public Migrations {
    Objects.requireNonNull(settings, "settings");
    movable = Map.copyOf(movable);
    held = Map.copyOf(held);
  }

  /**
   * A job that may be moved.
   *
   * @param checkpointSec how long its checkpoint may take (its checkpoint timeout)
   * @param lastMovedSec when it was last moved, or -1 for never
   */
  public record Movable(long checkpointSec, long lastMovedSec) {
    public Movable {
      Checks.nonNegative(checkpointSec, "checkpointSec");
    }
  }

  /** Whether {@code job} may be moved at {@code nowSec}: movable, and out of its protection. */
  public boolean mayMove(JobId job, long nowSec) {
    Movable m = movable.get(job);
    return enabled
        && m != null
        && (m.lastMovedSec() < 0 || nowSec - m.lastMovedSec() >= settings.protectionWindowSec());
  }

  /** Seconds of the gang's time one move of {@code job} costs: checkpoint plus restart. */
  public long costSec(JobId job) {
    Movable m = movable.get(job);
    return (m == null ? 0 : m.checkpointSec()) + settings.restartCostSec();
  }

  /** The jobs nodes are held for. */
  public Set<JobId> holders() {
    return Set.copyOf(held.values());
  }
}
