package io.kairos.control.sched;

import io.kairos.control.raft.RaftReplica;
import io.kairos.control.state.ControlCommand.MigrateJob;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.CoreTime;
import io.kairos.control.state.JobRecord;
import io.kairos.core.model.Cluster;
import io.kairos.core.model.JobId;
import io.kairos.core.model.Placement;
import io.kairos.core.sched.Decision;
import io.kairos.core.sched.MigrationSettings;
import io.kairos.core.sched.Migrations;
import io.kairos.protocol.JobState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Migration between the records and the pass: what the pass may move ({@link Migrations}: the
 * running jobs that declare checkpoints, with their checkpoint timeout and last move, and the nodes
 * held for moves under way), and the pass's moves as log commands ({@link MigrateJob}).
 */
final class MigrationProposals {
  private static final Logger LOG = LoggerFactory.getLogger(MigrationProposals.class);

  private MigrationProposals() {}

  /**
   * What the pass knows of migration under {@code settings} (empty: off). Under the read lock:
   * O(active jobs).
   */
  static Migrations inputs(ControlState s, Cluster cluster, Optional<MigrationSettings> settings) {
    if (settings.isEmpty()) {
      return Migrations.OFF;
    }
    var movable = new HashMap<JobId, Migrations.Movable>();
    var held = new HashMap<Integer, JobId>();
    for (JobRecord j : s.jobsHoldingGpus()) {
      var policy = j.request.checkpoint();
      if (j.state == JobState.RUNNING && policy != null && !j.request.isElastic()) {
        long last = j.migratedAtMs == 0 ? -1 : CoreTime.sec(j.migratedAtMs);
        movable.put(JobId.of(j.id), new Migrations.Movable(policy.timeoutSec(), last));
      }
      hold(cluster, j, held);
    }
    for (JobRecord j : s.activeJobs()) {
      if (j.state == JobState.PENDING) {
        hold(cluster, j, held);
      }
    }
    return new Migrations(true, settings.get(), movable, held);
  }

  private static void hold(Cluster cluster, JobRecord j, java.util.Map<Integer, JobId> held) {
    for (String node : j.migrationTarget) {
      cluster.indexOf(node).ifPresent(i -> held.put(i, JobId.of(j.id)));
    }
  }

  /** Whether some running job could be moved: then a pass runs even when nothing waits. */
  static boolean anyMovable(ControlState s, Optional<MigrationSettings> settings) {
    if (settings.isEmpty()) {
      return false;
    }
    for (JobRecord j : s.jobsHoldingGpus()) {
      if (j.state == JobState.RUNNING && j.request.checkpoint() != null) {
        return true;
      }
    }
    return false;
  }

  /** Proposes the pass's moves; returns how many were applied. */
  static int propose(
      RaftReplica replica,
      Cluster cluster,
      List<Decision.Migrate> moves,
      MigrationSettings settings,
      long nowMs)
      throws InterruptedException {
    List<MigrateJob> commands =
        replica.stateMachine().read(s -> commands(s, cluster, moves, settings, nowMs));
    int applied = 0;
    for (MigrateJob c : commands) {
      try {
        var result = replica.propose(c).get(10, TimeUnit.SECONDS);
        applied += result.ids().size();
        LOG.info("move job {} to {}: {}", c.jobId(), c.targetNodes(), result);
      } catch (ExecutionException | TimeoutException e) {
        LOG.warn("could not commit the move of job {}: {}", c.jobId(), e.toString());
      }
    }
    return applied;
  }

  static List<MigrateJob> commands(
      ControlState s,
      Cluster cluster,
      List<Decision.Migrate> moves,
      MigrationSettings settings,
      long nowMs) {
    var out = new ArrayList<MigrateJob>();
    for (Decision.Migrate m : moves) {
      JobRecord job = s.job(m.job().value()).orElse(null);
      if (job == null) {
        continue;
      }
      Placement p = m.target();
      var nodes = new ArrayList<String>(p.nodeCount());
      for (int i = 0; i < p.nodeCount(); i++) {
        nodes.add(cluster.node(p.node(i)).name());
      }
      out.add(
          new MigrateJob(
              nowMs,
              job.id,
              job.attempt,
              nodes,
              m.beneficiary().value(),
              settings.protectionWindowSec(),
              "gain " + m.gainGpuSec() + " GPU-s > cost " + m.costGpuSec() + " GPU-s"));
    }
    return out;
  }
}
