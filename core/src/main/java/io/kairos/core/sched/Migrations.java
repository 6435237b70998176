package io.kairos.core.sched;

import io.kairos.core.Checks;
import io.kairos.core.model.JobId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
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
 * <p>A hold does not last for ever: it ends at {@link #holdEndSec} (the move's time plus the job's
 * checkpoint timeout plus the restart cost), whether or not the job got there (its checkpoint was
 * never written, its target nodes failed). {@link #liveAt} is what a pass at a time sees: the holds
 * past their end are gone from it ({@link PassInput} applies it), and {@link #expiredAt} names the
 * jobs whose hold the driver should end for good (the controller commits that through its log).
 *
 * @param movable the running jobs that may be moved, with their checkpoint cost and last move
 * @param held node index to the job it is held for
 * @param holdEndsSec for a job nodes are held for, when its hold ends (absent: it does not end by
 *     itself, as in a driver that ends holds on its own, like the simulator)
 */
public record Migrations(
    boolean enabled,
    MigrationSettings settings,
    Map<JobId, Movable> movable,
    Map<Integer, JobId> held,
    Map<JobId, Long> holdEndsSec) {
  /** Nothing moves, nothing is held. */
  public static final Migrations OFF =
      new Migrations(false, MigrationSettings.DEFAULT, Map.of(), Map.of(), Map.of());

  public Migrations {
    Objects.requireNonNull(settings, "settings");
    movable = Map.copyOf(movable);
    held = Map.copyOf(held);
    holdEndsSec = Map.copyOf(holdEndsSec);
  }

  /** Holds that do not end by themselves. */
  public Migrations(
      boolean enabled,
      MigrationSettings settings,
      Map<JobId, Movable> movable,
      Map<Integer, JobId> held) {
    this(enabled, settings, movable, held, Map.of());
  }

  /**
   * When the hold of a job moved at {@code movedAtSec}, whose checkpoint may take {@code
   * checkpointSec}, ends: by then it has checkpointed (or its timeout passed), stopped and had its
   * restart's worth of time to start again on its target.
   */
  public long holdEndSec(long movedAtSec, long checkpointSec) {
    return movedAtSec + Math.max(0, checkpointSec) + settings.restartCostSec();
  }

  /** The jobs whose hold has ended at {@code nowSec} (its end is at or before it), by id. */
  public List<JobId> expiredAt(long nowSec) {
    var out = new ArrayList<JobId>();
    for (JobId job : holders()) {
      Long end = holdEndsSec.get(job);
      if (end != null && end <= nowSec) {
        out.add(job);
      }
    }
    out.sort(null);
    return out;
  }

  /** This, less the holds that have ended at {@code nowSec}: what a pass at that time respects. */
  public Migrations liveAt(long nowSec) {
    if (holdEndsSec.isEmpty() || held.isEmpty()) {
      return this;
    }
    Set<JobId> ended = Set.copyOf(expiredAt(nowSec));
    if (ended.isEmpty()) {
      return this;
    }
    var live = new HashMap<Integer, JobId>();
    held.forEach(
        (node, job) -> {
          if (!ended.contains(job)) {
            live.put(node, job);
          }
        });
    var ends = new HashMap<>(holdEndsSec);
    ended.forEach(ends::remove);
    return new Migrations(enabled, settings, movable, live, ends);
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
