package io.kairos.control.sched;

import io.kairos.control.raft.RaftReplica;
import io.kairos.control.state.ControlCommand.EndMigrationHold;
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
import java.util.Map;
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
    boolean enabled = settings.isPresent();
    if (!enabled && !anyHold(s)) {
      return Migrations.OFF;
    }
    // Turned off while moves are under way: nothing moves, but their holds last until they end.
    MigrationSettings rules = settings.orElse(MigrationSettings.DEFAULT);
    var movable = new HashMap<JobId, Migrations.Movable>();
    var held = new HashMap<Integer, JobId>();
    var ends = new HashMap<JobId, Long>();
    var rule = new Migrations(true, rules, Map.of(), Map.of());
    for (JobRecord j : s.jobsHoldingGpus()) {
      var policy = j.request.checkpoint();
      if (enabled && j.state == JobState.RUNNING && policy != null && !j.request.isElastic()) {
        long last = j.migratedAtMs == 0 ? -1 : CoreTime.sec(j.migratedAtMs);
        movable.put(JobId.of(j.id), new Migrations.Movable(policy.timeoutSec(), last));
      }
      hold(cluster, j, held, ends, rule);
    }
    for (JobRecord j : s.activeJobs()) {
      if (j.state == JobState.PENDING) {
        hold(cluster, j, held, ends, rule);
      }
    }
    return new Migrations(enabled, rules, movable, held, ends);
  }

  private static boolean anyHold(ControlState s) {
    return s.anyMigrationHold();
  }

  private static void hold(
      Cluster cluster,
      JobRecord j,
      Map<Integer, JobId> held,
      Map<JobId, Long> ends,
      Migrations rule) {
    if (j.migrationTarget.isEmpty()) {
      return;
    }
    for (String node : j.migrationTarget) {
      cluster.indexOf(node).ifPresent(i -> held.put(i, JobId.of(j.id)));
    }
    var policy = j.request.checkpoint();
    ends.put(
        JobId.of(j.id),
        rule.holdEndSec(
            CoreTime.notBeforeSec(j.migratedAtMs), policy == null ? 0 : policy.timeoutSec()));
  }

  /**
   * Ends, through the log, the holds the core finds past their end at {@code nowMs} ({@link
   * Migrations#expiredAt}); returns how many were ended.
   */
  static int endExpiredHolds(RaftReplica replica, Migrations migrations, long nowMs)
      throws InterruptedException {
    List<JobId> expired = migrations.expiredAt(CoreTime.sec(nowMs));
    if (expired.isEmpty()) {
      return 0;
    }
    List<EndMigrationHold> commands =
        replica
            .stateMachine()
            .read(
                s -> {
                  var out = new ArrayList<EndMigrationHold>();
                  for (JobId id : expired) {
                    s.job(id.value())
                        .filter(j -> !j.migrationTarget.isEmpty())
                        .ifPresent(j -> out.add(new EndMigrationHold(nowMs, j.id, j.migratedAtMs)));
                  }
                  return out;
                });
    int ended = 0;
    for (EndMigrationHold c : commands) {
      try {
        ended += replica.propose(c).get(10, TimeUnit.SECONDS).ids().size();
        LOG.info("the hold of job {} ended: it did not restart on its target in time", c.jobId());
      } catch (ExecutionException | TimeoutException e) {
        LOG.warn("could not end the hold of job {}: {}", c.jobId(), e.toString());
      }
    }
    return ended;
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

  /** When the hold of a move of {@code job} made at {@code nowMs} ends, by the core's rule. */
  static long holdEndsMs(MigrationSettings settings, JobRecord job, long nowMs) {
    var policy = job.request.checkpoint();
    long holdSec =
        new Migrations(true, settings, Map.of(), Map.of())
            .holdEndSec(0, policy == null ? 0 : policy.timeoutSec());
    return nowMs + CoreTime.ms(holdSec);
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
              "gain " + m.gainGpuSec() + " GPU-s > cost " + m.costGpuSec() + " GPU-s",
              holdEndsMs(settings, job, nowMs)));
    }
    return out;
  }
}
