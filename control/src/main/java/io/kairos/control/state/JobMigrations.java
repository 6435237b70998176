package io.kairos.control.state;

import io.kairos.control.state.ControlCommand.EndMigrationHold;
import io.kairos.control.state.ControlCommand.MigrateJob;
import io.kairos.protocol.JobState;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Moves of running checkpointable jobs, as the scheduler decides them ({@link MigrateJob}; the
 * decision is the core's migration stage): a preemption by checkpoint whose restart is pinned.
 *
 * <ol>
 *   <li>The job is asked for a checkpoint (every task gets its checkpoint signal, {@link
 *       JobCheckpoints#ask}), then, once a new checkpoint is recorded or its timeout has passed,
 *       stopped, as a preemption stops its victim.
 *   <li>From the command on, its target nodes are held for it ({@link JobRecord#migrationTarget}):
 *       the scheduler's pass keeps every other job off them, and the job, queued again at once (no
 *       backoff, no restart counted), may only be placed on them ({@link CoreBridge}).
 *   <li>When it starts again the hold ends; so it does when the job ends (cancelled, failed), and
 *       when it has not restarted by the hold's end (its move's time plus its checkpoint timeout
 *       plus the restart cost, {@link io.kairos.core.sched.Migrations#holdEndSec}): then the
 *       scheduler commits an {@link EndMigrationHold}. Its message, and the attempt in its history,
 *       say that it was migrated, where to, for whom, and how its checkpoint went.
 * </ol>
 *
 * A job is moved at most once per protection window ({@link JobRecord#migratedAtMs}), checked here
 * as well as in the pass, so a stale or replayed decision cannot move it twice.
 */
final class JobMigrations {
  private JobMigrations() {}

  static ControlResult apply(
      Records records, CoreBridge core, JobLifecycle lifecycle, MigrateJob c) {
    JobRecord job = records.job(c.jobId());
    if (job == null
        || job.state != JobState.RUNNING
        || job.releasing
        || job.requeueing
        || job.attempt != c.attempt()
        || !job.leaving.isEmpty()
        || !core.hasStore()) {
      return ControlResult.conflict("job " + c.jobId() + " cannot be moved now");
    }
    if (job.request.checkpoint() == null || job.request.isElastic()) {
      return ControlResult.conflict(
          "job " + job.id + " is not movable: only jobs of a fixed size that declare checkpoints");
    }
    if (job.migratedAtMs > 0 && c.atMs() - job.migratedAtMs < c.windowSec() * 1000) {
      return ControlResult.conflict(
          "job " + job.id + " was moved less than " + c.windowSec() + "s ago");
    }
    if (c.targetNodes().isEmpty() || !registered(records, c.targetNodes())) {
      return ControlResult.conflict("job " + job.id + ": its target nodes are not all registered");
    }
    JobSteps.jobStopped(job, "the job is being migrated");
    job.requeueing = true;
    job.preemptedBy = c.beneficiary() == 0 ? job.id : c.beneficiary();
    job.stopGraceSec = -1;
    job.message =
        "migrated to "
            + String.join(", ", c.targetNodes())
            + (c.beneficiary() == 0 || c.beneficiary() == job.id
                ? " (into a narrower topology level)"
                : " for job " + c.beneficiary())
            + (c.detail() == null || c.detail().isBlank() ? "" : " (" + c.detail() + ")")
            + (c.holdEndsMs() > 0
                ? "; its nodes are held for it until " + Instant.ofEpochMilli(c.holdEndsMs())
                : "");
    job.nextEligibleMs = c.atMs();
    job.nextAvoidNodes = job.avoidNodes;
    job.migrationTarget = List.copyOf(c.targetNodes());
    records.heldForMigration(job);
    job.migrationHoldEndsMs = Math.max(0, c.holdEndsMs());
    job.migratedAtMs = Math.max(1, c.atMs());
    job.migrations++;
    JobCheckpoints.ask(job, c.atMs());
    lifecycle.completeRequeueWhenStopped(job, c.atMs());
    return ControlResult.ok(List.of(job.id));
  }

  /**
   * Ends the hold of the move made at {@code c.movedAtMs()} ({@link EndMigrationHold}): the target
   * nodes are free for any job, and the job, if it still waits, may start anywhere. Refused when
   * the job holds nothing, or holds nodes for another move.
   */
  static ControlResult endHold(Records records, EndMigrationHold c) {
    JobRecord job = records.job(c.jobId());
    if (job == null || job.migrationTarget.isEmpty() || job.migratedAtMs != c.movedAtMs()) {
      return ControlResult.conflict("job " + c.jobId() + " holds no nodes for that move");
    }
    String ended =
        "the hold on "
            + String.join(", ", job.migrationTarget)
            + " ended at "
            + Instant.ofEpochMilli(c.atMs())
            + ": the job had not restarted there by its checkpoint timeout plus the restart cost";
    clearHold(job);
    job.message = job.state == JobState.PENDING ? ended + "; it may start anywhere" : ended;
    return ControlResult.ok(List.of(job.id));
  }

  /** The job holds no nodes any more: it started, ended, or its hold ended. */
  static void clearHold(JobRecord job) {
    job.migrationTarget = List.of();
    job.migrationHoldEndsMs = 0;
  }

  private static boolean registered(Records records, List<String> nodes) {
    Set<String> known = new HashSet<>();
    for (NodeRecord n : records.nodes()) {
      if (n.registration != null) {
        known.add(n.name);
      }
    }
    return known.containsAll(nodes);
  }
}
