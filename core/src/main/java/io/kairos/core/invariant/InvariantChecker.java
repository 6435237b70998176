package io.kairos.core.invariant;

import io.kairos.core.model.RunningJob;
import io.kairos.core.state.ClusterStore;

/**
 * Checks the invariants of DESIGN.md that a store and its history can show:
 *
 * <ol>
 *   <li>no GPU is allocated to two running tasks, and every GPU is either free or held by exactly
 *       one running job ({@link #checkStore});
 *   <li>a gang starts all its tasks together or none: every running job holds exactly its gang's
 *       tasks and GPUs (less those of a stopping job's tasks that confirmed their end and let their
 *       GPUs go, never all of them), distinct nodes where asked; an elastic gang holds between its
 *       minimum and maximum tasks ({@link #checkStore});
 *   <li>(4) backfill never delays a reservation when jobs run to their time limits ({@link
 *       #checkReservationKept});
 *   <li>no job started before its eligible time, and no task runs on a node its job excludes
 *       ({@link #checkStore}).
 * </ol>
 *
 * <p>Violations throw {@link IllegalStateException}: a broken invariant is a bug.
 */
public final class InvariantChecker {
  private InvariantChecker() {}

  /**
   * Invariants 1 and 2, eligibility and exclusions on the current state. O(running jobs x nodes per
   * job + nodes).
   */
  public static void checkStore(ClusterStore store) {
    var cluster = store.cluster();
    long[] held = new long[cluster.nodeCount()];
    long heldGpus = 0;
    for (RunningJob job : store.runningJobs()) {
      var gang = job.job().spec().gang();
      var placement = job.placement();
      checkEligibleAndNotExcluded(store, job);
      int tasks = 0;
      for (int i = 0; i < placement.nodeCount(); i++) {
        int node = placement.node(i);
        long mask = placement.gpuMask(i);
        int onNode = placement.tasksOn(i);
        tasks += onNode;
        if (Long.bitCount(mask) != onNode * gang.shape().gpus()) {
          throw new IllegalStateException(
              "invariant 2: job "
                  + job.id()
                  + " holds "
                  + Long.bitCount(mask)
                  + " GPUs on node "
                  + node
                  + " for "
                  + onNode
                  + " tasks of "
                  + gang.shape().gpus());
        }
        if (gang.distinctNodes() && onNode > 1) {
          throw new IllegalStateException(
              "invariant 2: job "
                  + job.id()
                  + " runs "
                  + onNode
                  + " tasks on node "
                  + node
                  + " but asked for distinct nodes");
        }
        if ((held[node] & mask) != 0) {
          throw new IllegalStateException(
              "invariant 1: node "
                  + cluster.node(node).name()
                  + " GPUs "
                  + Long.toBinaryString(held[node] & mask)
                  + " held by job "
                  + job.id()
                  + " and another running job");
        }
        held[node] |= mask;
        heldGpus += Long.bitCount(mask);
      }
      // An elastic gang's size (held and released tasks) stays within its range.
      int size = tasks + job.releasedTasks();
      if (size < gang.tasks()
          || size > gang.maxTasks()
          || (job.releasedTasks() > 0 && placement.nodeCount() == 0)) {
        throw new IllegalStateException(
            "invariant 2: job "
                + job.id()
                + " runs "
                + tasks
                + " of "
                + (gang.isElastic() ? gang.tasks() + " to " + gang.maxTasks() : gang.tasks())
                + " tasks, "
                + job.releasedTasks()
                + " released");
      }
    }
    for (int node = 0; node < cluster.nodeCount(); node++) {
      if ((held[node] & store.freeMask(node)) != 0) {
        throw new IllegalStateException(
            "invariant 1: node " + cluster.node(node).name() + " has GPUs both free and held");
      }
    }
    if (cluster.totalGpus() - heldGpus != store.freeGpus()) {
      throw new IllegalStateException(
          "free GPU count " + store.freeGpus() + " disagrees with held GPUs " + heldGpus);
    }
  }

  private static void checkEligibleAndNotExcluded(ClusterStore store, RunningJob job) {
    if (job.startSec() < job.job().eligibleSec()) {
      throw new IllegalStateException(
          "eligibility: job "
              + job.id()
              + " started at t="
              + job.startSec()
              + " but is held until t="
              + job.job().eligibleSec());
    }
    var excluded = job.job().spec().excludedNodes();
    if (excluded.isEmpty()) {
      return;
    }
    var placement = job.placement();
    for (int i = 0; i < placement.nodeCount(); i++) {
      String name = store.cluster().node(placement.node(i)).name();
      if (excluded.contains(name)) {
        throw new IllegalStateException(
            "exclusion: job " + job.id() + " runs on node " + name + ", which it excludes");
      }
    }
  }

  /**
   * Invariant 4: a job that was promised {@code reservedStartSec} started no later, given that
   * every job ran exactly to its time limit. Within one pass every reservation is protected from
   * that pass's starts; across passes the promise kept is the head's (the first reservation of a
   * pass under an arrival order), because a pass keeps no state: a later reservation can slip when
   * an earlier reserved job is placed afresh on other nodes.
   */
  public static void checkReservationKept(long jobId, long reservedStartSec, long startSec) {
    if (startSec > reservedStartSec) {
      throw new IllegalStateException(
          "invariant 4: job "
              + jobId
              + " was reserved for t="
              + reservedStartSec
              + " but started at t="
              + startSec);
    }
  }
}
