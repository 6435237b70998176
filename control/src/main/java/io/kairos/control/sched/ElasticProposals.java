package io.kairos.control.sched;

import io.kairos.control.raft.RaftReplica;
import io.kairos.control.state.ControlCommand.ResizeJob;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.ElasticResizes;
import io.kairos.control.state.JobRecord;
import io.kairos.core.model.Cluster;
import io.kairos.core.model.Placement;
import io.kairos.core.sched.Decision;
import io.kairos.core.state.ClusterStore;
import io.kairos.protocol.TaskPlacement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pass's resizes of elastic jobs as log commands ({@link ResizeJob}): the core names the new
 * placement by node; the command names the new ranks (added nodes, after the job's last rank) and
 * the ranks that leave. A decision that went stale is refused by the state and replanned.
 */
final class ElasticProposals {
  private static final Logger LOG = LoggerFactory.getLogger(ElasticProposals.class);

  private ElasticProposals() {}

  /** Whether a pass could grow an elastic job: free GPUs and one running below its maximum. */
  static boolean mayGrow(ClusterStore store) {
    if (store.freeGpus() == 0) {
      return false;
    }
    for (var r : store.runningJobs()) {
      var gang = r.job().spec().gang();
      if (gang.isElastic() && r.placement().totalTasks() < gang.maxTasks()) {
        return true;
      }
    }
    return false;
  }

  static void propose(
      RaftReplica replica, Cluster cluster, List<Decision.Resize> resizes, long nowMs)
      throws InterruptedException {
    List<ResizeJob> commands =
        replica.stateMachine().read(s -> commands(s, cluster, resizes, nowMs));
    for (ResizeJob c : commands) {
      try {
        var result = replica.propose(c).get(10, TimeUnit.SECONDS);
        LOG.info(
            "resize job {} from {} nodes: +{} -{}: {}",
            c.jobId(),
            c.fromNodes(),
            c.add().size(),
            c.remove().size(),
            result);
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
        LOG.warn("could not commit the resize of job {}: {}", c.jobId(), e.toString());
      }
    }
  }

  static List<ResizeJob> commands(
      ControlState s, Cluster cluster, List<Decision.Resize> resizes, long nowMs) {
    var out = new ArrayList<ResizeJob>();
    for (Decision.Resize z : resizes) {
      JobRecord job = s.job(z.job().value()).orElse(null);
      if (job == null || !ElasticResizes.resizable(job)) {
        continue; // gone, stopping, or its last shrink still under way: it would be refused
      }
      List<TaskPlacement> live = ElasticResizes.liveTasks(job);
      var liveNodes = new HashSet<String>();
      live.forEach(t -> liveNodes.add(t.node()));
      var newNodes = new HashSet<String>();
      var add = new ArrayList<TaskPlacement>();
      Placement p = z.placement();
      for (int i = 0; i < p.nodeCount(); i++) {
        String node = cluster.node(p.node(i)).name();
        newNodes.add(node);
        if (!liveNodes.contains(node)) {
          var gpus = new ArrayList<Integer>();
          for (long m = p.gpuMask(i); m != 0; m &= m - 1) {
            gpus.add(Long.numberOfTrailingZeros(m));
          }
          add.add(new TaskPlacement(job.placement.size() + add.size(), node, gpus));
        }
      }
      var remove = new ArrayList<Integer>();
      for (TaskPlacement t : live) {
        if (!newNodes.contains(t.node())) {
          remove.add(t.task());
        }
      }
      out.add(
          new ResizeJob(
              nowMs,
              job.id,
              job.attempt,
              live.size(),
              add,
              remove,
              z.beneficiary() == null ? 0 : z.beneficiary().value()));
    }
    return out;
  }
}
