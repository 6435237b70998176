package io.kairos.control.state;

import io.kairos.control.state.ControlCommand.DrainNode;
import io.kairos.control.state.ControlCommand.GpusUnhealthy;
import io.kairos.control.state.ControlCommand.NodeDown;
import io.kairos.control.state.ControlCommand.RegisterNode;
import io.kairos.control.state.ControlCommand.ResetNode;
import io.kairos.control.state.ControlCommand.ResumeNode;
import io.kairos.control.state.ControlCommand.ReturnGpu;
import io.kairos.protocol.JobState;
import io.kairos.protocol.NodeState;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.agent.Registration;
import java.util.List;

/**
 * The nodes' side: registrations and lease epochs, a node lost (down) or taken out of service
 * (drained) and back (resumed), and what each does to the tasks there: tasks on a lost or
 * re-registered node count as ended ({@link ControlState#LOST_EXIT_CODE}) and their jobs are
 * requeued by the {@link JobLifecycle}'s rules. Owns the transitions of {@link NodeRecord}s (the
 * evidence against a node is {@link Suspects}').
 */
final class NodeRegistry {
  private final Records records;
  private final CoreBridge core;
  private final JobLifecycle lifecycle;
  private final JobSteps steps;
  private final Suspects suspects;

  /** Marks the store stale: the set of nodes, or a node's shape, changed. */
  private final Runnable nodesChanged;

  /** Whether the store is stale (it may lack nodes registered since it was built). */
  private final java.util.function.BooleanSupplier storeStale;

  NodeRegistry(
      Records records,
      CoreBridge core,
      JobLifecycle lifecycle,
      JobSteps steps,
      Suspects suspects,
      Runnable nodesChanged,
      java.util.function.BooleanSupplier storeStale) {
    this.records = records;
    this.core = core;
    this.lifecycle = lifecycle;
    this.steps = steps;
    this.suspects = suspects;
    this.nodesChanged = nodesChanged;
    this.storeStale = storeStale;
  }

  ControlResult register(RegisterNode c) {
    Registration r = c.registration();
    NodeRecord existing = records.node(r.node());
    if (c.credential() != null) {
      // A node is bound to the credential it first registered with: only that registers it again
      // (or a join token after an admin's reset), and a credential belongs to one node.
      if (existing != null
          && existing.credential != null
          && !existing.credential.equals(c.credential())) {
        return ControlResult.conflict(
            "node " + r.node() + " is registered with another credential");
      }
      String holder = records.nodeWithCredential(c.credential());
      if (holder != null && !holder.equals(r.node())) {
        return ControlResult.conflict("that credential belongs to node " + holder);
      }
    }
    NodeRecord node = records.nodeOrNew(r.node());
    if (c.credential() != null) {
      records.bindCredential(node, c.credential());
    }
    // Tasks that ran there under the previous epoch died with that agent, unless the restarted
    // agent adopted them (it kills the others before it registers): requeue the jobs of those
    // lost, and let ended gangs free their GPUs once their other tasks have stopped. Adopted
    // tasks keep their jobs running, same attempt; their ends come with the heartbeats.
    String why = "node " + r.node() + " re-registered (agent restarted)";
    loseTasksOn(r.node(), c.atMs(), c.atMs(), why, java.util.Set.copyOf(c.adopted()));
    // A node that came back with other GPUs, CPUs or memory: its tasks were lost just above, so
    // the stopping gangs there have let that node go; their tasks elsewhere keep their GPUs until
    // they confirm their end, and the store is rebuilt around them. Its GPU indexes may name other
    // devices now: none stays out of service.
    if (node.registration != null && !sameResources(node.registration, r)) {
      node.gpusOutOfService.clear();
    }
    // O(1): the same node again (an agent restart) is updated in the store in place; a new node,
    // or one of another shape, marks the store stale, and the next command of another kind
    // rebuilds it once for the whole burst (ControlState).
    boolean sameShape = node.registration != null && sameShape(node.registration, r);
    boolean wasDown = node.state == NodeState.DOWN;
    node.registration = r;
    node.epoch = records.takeEpoch();
    node.registeredMs = c.atMs();
    if (wasDown) {
      node.state = NodeState.UP;
      node.reason = null;
    }
    if (!sameShape) {
      nodesChanged.run();
    } else if (wasDown && !storeStale.getAsBoolean()) {
      core.cordon(r.node(), c.atMs(), false);
    }
    return ControlResult.ok(List.of(node.epoch));
  }

  /** Whether every task of {@code job} on the node that has not ended is in {@code kept}. */
  private static boolean allKept(
      JobRecord job, String nodeName, java.util.Set<io.kairos.protocol.agent.TaskRef> kept) {
    for (TaskPlacement t : job.placement) {
      if (t.node().equals(nodeName)
          && job.taskExits.get(t.task()) == null
          && !kept.contains(new io.kairos.protocol.agent.TaskRef(job.id, job.attempt, t.task()))) {
        return false;
      }
    }
    return true;
  }

  /** Whether the store's view of the node (its spec, the account it runs) stays the same. */
  private static boolean sameShape(Registration a, Registration b) {
    return CoreBridge.toNodeSpec(a).equals(CoreBridge.toNodeSpec(b))
        && java.util.Objects.equals(a.runsOnlyAs(), b.runsOnlyAs());
  }

  private static boolean sameResources(Registration a, Registration b) {
    return a.gpus().equals(b.gpus()) && a.cpus() == b.cpus() && a.memoryBytes() == b.memoryBytes();
  }

  ControlResult nodeDown(NodeDown c) {
    NodeRecord node = records.node(c.node());
    if (node == null) {
      return ControlResult.notFound("no node " + c.node());
    }
    if (node.epoch != c.epoch() || node.state == NodeState.DOWN) {
      return ControlResult.conflict("node " + c.node() + " re-registered or is already down");
    }
    node.state = NodeState.DOWN;
    node.reason = c.reason();
    node.epoch = records.takeEpoch(); // fences the lost agent: it must register again
    core.cordon(c.node(), c.atMs(), true);
    loseTasksOn(
        c.node(), c.atMs(), c.safeAfterMs(), "node " + c.node() + " is down (" + c.reason() + ")");
    return ControlResult.OK;
  }

  /**
   * Every task on {@code nodeName} counts as ended (lost). Running jobs there are requeued, not
   * before {@code safeAfterMs}; ended jobs still stopping free their GPUs once their tasks
   * elsewhere have stopped too.
   */
  private void loseTasksOn(String nodeName, long atMs, long safeAfterMs, String why) {
    loseTasksOn(nodeName, atMs, safeAfterMs, why, java.util.Set.of());
  }

  /** As above, but the tasks in {@code kept} (adopted by a restarted agent) are not lost. */
  private void loseTasksOn(
      String nodeName,
      long atMs,
      long safeAfterMs,
      String why,
      java.util.Set<io.kairos.protocol.agent.TaskRef> kept) {
    for (JobRecord job : records.jobsHoldingGpusOn(nodeName)) {
      if (!kept.isEmpty() && allKept(job, nodeName, kept)) {
        steps.lose(job, nodeName, atMs); // a step's processes are not adopted
        continue;
      }
      steps.lose(job, nodeName, atMs);
      for (TaskPlacement t : job.placement) {
        if (t.node().equals(nodeName) && job.taskExits.get(t.task()) == null) {
          job.taskExits.set(t.task(), ControlState.LOST_EXIT_CODE);
        }
      }
      if (job.releasing) {
        lifecycle.holdUntilStopped(job, atMs);
      } else if (job.requeueing) {
        job.nextEligibleMs = Math.max(job.nextEligibleMs, safeAfterMs);
        job.nextAvoidNodes = lifecycle.avoiding(job, job.nextAvoidNodes, nodeName);
        lifecycle.completeRequeueWhenStopped(job, atMs);
      } else if (job.state == JobState.RUNNING) {
        lifecycle.requeueLost(job, atMs, safeAfterMs, why, nodeName);
      }
    }
  }

  /**
   * Forgets the node's credential and fences its agent as {@link #nodeDown} does: DOWN, a new
   * epoch, its tasks lost and their jobs requeued not before {@code safeAfterMs}.
   */
  ControlResult reset(ResetNode c) {
    NodeRecord node = records.node(c.node());
    if (node == null) {
      return ControlResult.notFound("no node " + c.node());
    }
    records.bindCredential(node, null);
    if (node.state != NodeState.DOWN) {
      node.state = NodeState.DOWN;
      node.reason = "reset by an admin: waits for its agent to register again with a join token";
      core.cordon(c.node(), c.atMs(), true);
    }
    node.epoch = records.takeEpoch();
    loseTasksOn(c.node(), c.atMs(), c.safeAfterMs(), "node " + c.node() + " was reset");
    return ControlResult.OK;
  }

  /** The longest reason kept for a GPU out of service. */
  static final int MAX_GPU_REASON = 300;

  /**
   * Takes each reported GPU not yet out of service out alone, and requeues the jobs running with it
   * (not counted as a restart: the node was at fault); the node serves its other GPUs.
   */
  ControlResult gpusUnhealthy(GpusUnhealthy c) {
    NodeRecord node = records.node(c.node());
    if (node == null) {
      return ControlResult.notFound("no node " + c.node());
    }
    if (node.epoch != c.epoch() || node.registration == null) {
      return ControlResult.conflict("stale epoch " + c.epoch() + " for node " + c.node());
    }
    int count = node.registration.gpus().size();
    for (var e : c.problems().entrySet()) {
      int gpu = e.getKey();
      if (gpu < 0 || gpu >= count || node.gpusOutOfService.containsKey(gpu)) {
        continue;
      }
      String reason = e.getValue() == null || e.getValue().isBlank() ? "unhealthy" : e.getValue();
      if (reason.length() > MAX_GPU_REASON) {
        reason = reason.substring(0, MAX_GPU_REASON) + "...";
      }
      node.gpusOutOfService.put(gpu, reason);
      core.gpuService(node.name, gpu, false, c.atMs());
      String why = "GPU " + gpu + " of node " + node.name + " is unhealthy: " + reason;
      for (JobRecord job : List.copyOf(records.jobsHoldingGpusOn(node.name))) {
        if (job.state == JobState.RUNNING && !job.requeueing && holdsGpu(job, node.name, gpu)) {
          lifecycle.requeue(job, c.atMs(), c.atMs(), why, null);
        }
      }
    }
    return ControlResult.OK;
  }

  private static boolean holdsGpu(JobRecord job, String node, int gpu) {
    for (TaskPlacement t : job.placement) {
      if (t.node().equals(node) && t.gpus().contains(gpu)) {
        return true;
      }
    }
    return false;
  }

  /** Returns a GPU out of service to service: jobs may be placed on it again. */
  ControlResult returnGpu(ReturnGpu c) {
    NodeRecord node = records.node(c.node());
    if (node == null) {
      return ControlResult.notFound("no node " + c.node());
    }
    if (node.gpusOutOfService.remove(c.gpu()) == null) {
      return ControlResult.conflict(
          "GPU "
              + c.gpu()
              + " of node "
              + c.node()
              + " is not out of service"
              + (node.gpusOutOfService.isEmpty()
                  ? " (none is)"
                  : " (out of service: " + node.gpusOutOfService.keySet() + ")"));
    }
    core.gpuService(node.name, c.gpu(), true, c.atMs());
    return ControlResult.OK;
  }

  ControlResult drain(DrainNode c) {
    NodeRecord node = records.node(c.node());
    if (node == null) {
      return ControlResult.notFound("no node " + c.node());
    }
    if (node.state == NodeState.UP) {
      core.cordon(c.node(), c.atMs(), true);
    }
    if (node.state != NodeState.DOWN) {
      node.state = NodeState.DRAINED;
    }
    node.reason = c.reason() == null || c.reason().isBlank() ? "drained by an admin" : c.reason();
    if (c.requeue()) {
      for (JobRecord job : records.jobsHoldingGpusOn(c.node())) {
        if (job.state == JobState.RUNNING && !job.requeueing) {
          lifecycle.requeue(
              job, c.atMs(), c.atMs(), "node " + c.node() + " drained: " + node.reason, c.node());
        }
      }
    }
    return ControlResult.OK;
  }

  ControlResult resume(ResumeNode c) {
    NodeRecord node = records.node(c.node());
    if (node == null) {
      return ControlResult.notFound("no node " + c.node());
    }
    if (node.state == NodeState.DRAINED) {
      node.state = NodeState.UP;
      node.reason = null;
      suspects.forgive(node);
      core.cordon(c.node(), c.atMs(), false);
    }
    return ControlResult.OK;
  }
}
