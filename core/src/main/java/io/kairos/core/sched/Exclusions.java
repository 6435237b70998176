package io.kairos.core.sched;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.JobId;
import io.kairos.core.state.PendingJobs;
import java.util.Set;

/**
 * One pass's excluded nodes, resolved once per gang shape: the node mask a placement must avoid,
 * and how many tasks of the shape the nodes left could ever hold.
 *
 * <p>Design note. Excluded nodes are part of the shape interned at submission (jobs with equal
 * shape ids exclude the same nodes), so the first job of a shape the pass visits resolves the names
 * to node indexes and later jobs read two arrays. A shape that excludes nothing, the common case,
 * costs one look at its first job's spec and then nothing: its mask stays null, so placement takes
 * the same path as before exclusions existed.
 */
final class Exclusions {
  private static final long[] NOTHING = new long[0];

  private final Cluster cluster;
  private final PendingJobs pending;
  private final long[][] masks; // per shape: null until resolved, NOTHING when nothing excluded
  private final long[] maxTasks; // per shape: tasks the non-excluded nodes could ever hold
  private final long[] held; // nodes held for moves under way, or null
  private final Set<JobId> holders;
  private final long[][] heldMasks; // per shape: its mask with the held nodes, once computed
  private final Migrations migrations;

  Exclusions(Cluster cluster, PendingJobs pending) {
    this(cluster, pending, Migrations.OFF);
  }

  /**
   * With the nodes {@code migrations} holds for moves under way: excluded for every job but the one
   * each is held for (not counted in {@link #neverFits}: a hold is temporary).
   */
  Exclusions(Cluster cluster, PendingJobs pending, Migrations migrations) {
    this.cluster = cluster;
    this.pending = pending;
    this.masks = new long[pending.shapeCount()][];
    this.maxTasks = new long[pending.shapeCount()];
    this.migrations = migrations;
    long[] heldMask = null;
    for (int node : migrations.held().keySet()) {
      if (node >= 0 && node < cluster.nodeCount()) {
        if (heldMask == null) {
          heldMask = new long[(cluster.nodeCount() + 63) >>> 6];
        }
        heldMask[node >>> 6] |= 1L << node;
      }
    }
    this.held = heldMask;
    this.holders = heldMask == null ? Set.of() : migrations.holders();
    this.heldMasks = heldMask == null ? null : new long[pending.shapeCount()][];
  }

  /**
   * The nodes the job in {@code slot} must not use (see {@link Cluster#isSet}), or null: its
   * excluded nodes and the nodes held for another job's move (a job nodes are held for may use its
   * own). O(held nodes) for a holder, else cached per shape.
   */
  long[] mask(int slot) {
    long[] mask = resolve(slot);
    JobId id = pending.jobs()[slot].id();
    if (held != null && holders.contains(id)) {
      // A job nodes are held for may use those, and none held for another job.
      long[] with = mask == NOTHING ? null : mask.clone();
      for (var e : migrations.held().entrySet()) {
        int node = e.getKey();
        if (!e.getValue().equals(id) && node >= 0 && node < cluster.nodeCount()) {
          if (with == null) {
            with = new long[(cluster.nodeCount() + 63) >>> 6];
          }
          with[node >>> 6] |= 1L << node;
        }
      }
      return with;
    }
    if (held != null) {
      int shape = pending.shapeIds()[slot];
      if (heldMasks[shape] == null) {
        long[] with = held.clone();
        if (mask != NOTHING) {
          for (int i = 0; i < with.length; i++) {
            with[i] |= mask[i];
          }
        }
        heldMasks[shape] = with;
      }
      return heldMasks[shape];
    }
    return mask == NOTHING ? null : mask;
  }

  /**
   * Whether the job in {@code slot} could not fit even the empty cluster without its exclusions.
   */
  boolean neverFits(int slot) {
    int shape = pending.shapeIds()[slot];
    return resolve(slot) != NOTHING && pending.tasks()[slot] > maxTasks[shape];
  }

  private long[] resolve(int slot) {
    int shape = pending.shapeIds()[slot];
    long[] mask = masks[shape];
    if (mask != null) {
      return mask;
    }
    var spec = pending.jobs()[slot].spec();
    mask = spec.hasExclusions() ? cluster.excludedMask(spec.excludedNodes()) : null;
    if (mask == null) {
      mask = NOTHING;
    } else {
      var gang = spec.gang();
      maxTasks[shape] =
          cluster.maxTasksEver(
              gang.shape(),
              gang.distinctNodes(),
              cluster.modelIdOf(spec.gpuModel()),
              mask,
              GangSpec.MAX_TASKS);
    }
    masks[shape] = mask;
    return mask;
  }
}
