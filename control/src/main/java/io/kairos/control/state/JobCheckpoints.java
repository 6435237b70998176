package io.kairos.control.state;

import io.kairos.control.state.ControlCommand.RecordCheckpoint;
import io.kairos.protocol.JobState;
import java.util.ArrayList;
import java.util.List;

/**
 * A job's recorded checkpoints, and what a preemption by checkpoint asks of it.
 *
 * <p>The job's side of the protocol (the Python helper {@code kairos_ckpt.py} follows it): every
 * rank writes its shard, then rank 0 writes the manifest naming the shards and the step, last, by
 * an atomic rename; a checkpoint without its manifest does not exist. Only then does the job report
 * it, so what Kairos records is complete. A report of the same step again replaces the earlier one;
 * beyond the policy's {@code keep}, the oldest are dropped (the reply names them, so that the job
 * deletes their files as their owner).
 *
 * <p>Preemption by checkpoint: {@link JobLifecycle#preempt} marks when it asked ({@link
 * JobRecord#checkpointAskedMs}); until a newer checkpoint arrives, or the policy's timeout has
 * passed by the leader's clock, the reconciler sends the tasks the checkpoint signal instead of the
 * stop ({@link #awaitsCheckpoint}); then the stop. How it went is the job's message once stopped.
 */
public final class JobCheckpoints {
  private JobCheckpoints() {}

  /** Applies a report; the result's ids are the steps it pruned. */
  static ControlResult record(JobRecord job, RecordCheckpoint c) {
    if (job == null) {
      return ControlResult.notFound("no job " + c.jobId());
    }
    CheckpointPolicy policy = job.request.checkpoint();
    if (policy == null) {
      return ControlResult.conflict(
          "job " + job.id + " does not declare checkpoints (submit it with a checkpoint field)");
    }
    CheckpointEntry entry = c.checkpoint();
    if (job.state != JobState.RUNNING || job.attempt != entry.attempt()) {
      return ControlResult.conflict(
          "job "
              + job.id
              + " does not run attempt "
              + entry.attempt()
              + " (state "
              + job.state
              + ", attempt "
              + job.attempt
              + "): only a running attempt records checkpoints");
    }
    var kept = new ArrayList<CheckpointEntry>(job.checkpoints.size() + 1);
    for (CheckpointEntry e : job.checkpoints) {
      if (e.step() != entry.step()) {
        kept.add(e);
      }
    }
    kept.add(entry);
    var pruned = new ArrayList<Long>();
    while (kept.size() > policy.keep()) {
      pruned.add(kept.removeFirst().step());
    }
    job.checkpoints = List.copyOf(kept);
    job.checkpointCount++;
    return ControlResult.ok(pruned);
  }

  /** The newest checkpoint recorded for the job, or null. */
  public static CheckpointEntry newest(JobRecord job) {
    return job.checkpoints.isEmpty() ? null : job.checkpoints.getLast();
  }

  /**
   * Whether a preemption still waits for the checkpoint it asked for at {@code nowMs}: it asked, no
   * checkpoint arrived since, and the policy's timeout has not passed.
   */
  public static boolean awaitsCheckpoint(JobRecord job, long nowMs) {
    CheckpointPolicy policy = job.request.checkpoint();
    return policy != null
        && job.checkpointAskedMs > 0
        && job.isBeingPreempted()
        && job.checkpointCount == job.checkpointCountAtAsk
        && nowMs < job.checkpointAskedMs + policy.timeoutSec() * 1000;
  }

  /** A preemption of a checkpointing job asks for a checkpoint first (from {@code atMs}). */
  static void ask(JobRecord victim, long atMs) {
    if (victim.request.checkpoint() != null) {
      victim.checkpointAskedMs = Math.max(1, atMs);
      victim.checkpointCountAtAsk = victim.checkpointCount;
    }
  }

  /**
   * How a preemption that asked for a checkpoint went, for the job's message once it stopped; null
   * when it did not ask. Clears the mark.
   */
  static String outcome(JobRecord job) {
    if (job.checkpointAskedMs == 0) {
      return null;
    }
    boolean saved = job.checkpointCount > job.checkpointCountAtAsk;
    job.checkpointAskedMs = 0;
    job.checkpointCountAtAsk = 0;
    if (saved) {
      return "after checkpoint at step " + newest(job).step();
    }
    return "checkpoint timed out after "
        + job.request.checkpoint().timeoutSec()
        + "s, stopped"
        + (job.checkpoints.isEmpty() ? "" : "; resumes from step " + newest(job).step());
  }
}
