package io.kairos.control.state;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.kairos.protocol.JobState;
import io.kairos.protocol.TaskPlacement;
import java.util.ArrayList;
import java.util.List;

/**
 * One job's whole life in the replicated state. Mutable, and written only by {@link ControlState}
 * on the apply thread; readers copy it into a view under the state's read lock. Fields are public
 * for the snapshot codec (Jackson), not for other writers.
 */
public final class JobRecord {
  public long id;
  public JobRequest request;
  public JobState state = JobState.PENDING;
  public long submitMs;
  public long startMs;
  public long endMs;

  /** Starts so far; the current attempt while RUNNING. */
  public int attempt;

  public int requeues;
  public Integer exitCode;
  public String message;

  /** The current (or last) attempt's tasks, in rank order. */
  public List<TaskPlacement> placement = List.of();

  /** Per task of the current attempt: null while running, else its exit code. */
  public List<Integer> taskExits = new ArrayList<>();

  /**
   * The job ended (cancelled, or failed on one task) while other tasks of its gang were still
   * running: its GPUs stay allocated until every task's end is recorded, so no new job lands on a
   * GPU that a dying process still holds (Slurm's COMPLETING).
   */
  public boolean releasing;

  /**
   * The job goes back to PENDING once every task of the current attempt has stopped (a node was
   * lost or drained, or a task failed with restarts left). Until then it stays RUNNING and keeps
   * its GPUs, so no task of the gang runs twice at once.
   */
  public boolean requeueing;

  /** Not before this (epoch millis): the requeue backoff, and the lease of a lost node. */
  public long eligibleMs;

  /** Restarts used after task failures (counted against the request's maxRestarts). */
  public int restarts;

  /** Nodes that failed this job (lost, unhealthy, or a task failed there): placed elsewhere. */
  public List<String> avoidNodes = List.of();

  /**
   * While {@link #requeueing}: the eligible time and the nodes to avoid that the requeue will set
   * once every task has stopped. Kept apart so that the running attempt's own eligible time and
   * exclusions (which the scheduler's store holds) stay as they were when it started.
   */
  public long nextEligibleMs;

  public List<String> nextAvoidNodes = List.of();

  /** Nodes where an attempt failed and restarted (blamed if the job then succeeds elsewhere). */
  public List<String> failedOn = List.of();

  /**
   * When the job last joined the queue (submitted or requeued), as a state-wide sequence number: a
   * rebuilt store queues pending jobs in this order, as the live one did.
   */
  public long queuedSeq;

  /** Null unless the job is an element of an array. */
  public ArrayElement array;

  /**
   * When it was preempted (epoch seconds, ascending), the latest {@value #MAX_PREEMPTIONS_KEPT}:
   * the scheduler folds them through its ProtectionPolicy into the job's preemption history.
   */
  public List<Long> preemptedAtSec = List.of();

  /** While a preemption stops it (RUNNING and requeueing): the job it makes room for; else 0. */
  public long preemptedBy;

  /** The job that preempted it last; 0 when never preempted. */
  public long lastPreemptedBy;

  /** For a preemption's stop: seconds from the kill signal to SIGKILL; -1: the job's own grace. */
  public long stopGraceSec = -1;

  public static final int MAX_PREEMPTIONS_KEPT = 32;

  /**
   * The attempts that ended in a requeue, oldest first (the latest {@link AttemptRecord#MAX_KEPT}):
   * the accounting store records each. Left out of the snapshot's JSON when empty, so snapshots of
   * jobs never requeued keep their bytes.
   */
  @JsonInclude(JsonInclude.Include.NON_EMPTY)
  public List<AttemptRecord> pastAttempts = List.of();

  /**
   * The job's steps (srun inside it), by id: those of the current attempt that run or still stop,
   * and the latest ended ones ({@link JobSteps#ENDED_KEPT}). A job holds its GPUs until its steps'
   * tasks have stopped too.
   */
  @JsonInclude(JsonInclude.Include.NON_EMPTY)
  public List<StepRecord> steps = new ArrayList<>();

  /** The latest complete checkpoints the job reported, oldest first, at most its policy's keep. */
  @JsonInclude(JsonInclude.Include.NON_EMPTY)
  public List<CheckpointEntry> checkpoints = List.of();

  /** How many checkpoints the job has reported in all (kept or pruned). */
  @JsonInclude(JsonInclude.Include.NON_DEFAULT)
  public int checkpointCount;

  /**
   * While a preemption asks the job for a checkpoint: when it asked (epoch millis), else 0. The
   * tasks get the checkpoint signal until a checkpoint newer than {@link #checkpointCountAtAsk}
   * arrives or the policy's timeout has passed, then the stop.
   */
  @JsonInclude(JsonInclude.Include.NON_DEFAULT)
  public long checkpointAskedMs;

  /** {@link #checkpointCount} when the preemption asked. */
  @JsonInclude(JsonInclude.Include.NON_DEFAULT)
  public int checkpointCountAtAsk;

  /** The id the next step gets: they count from 0 in each job, as Slurm's. */
  @JsonInclude(JsonInclude.Include.NON_DEFAULT)
  public int nextStepId;

  /** An elastic job's ranks asked to leave (a shrink under way), until each has ended. */
  @JsonInclude(JsonInclude.Include.NON_EMPTY)
  public List<Integer> leaving = List.of();

  /** An elastic job's ranks of this attempt that left by a shrink: their GPUs are free. */
  @JsonInclude(JsonInclude.Include.NON_EMPTY)
  public List<Integer> left = List.of();

  /** An elastic job's resizes, oldest first (the latest {@link ElasticResizes#KEPT}). */
  @JsonInclude(JsonInclude.Include.NON_EMPTY)
  public List<ResizeEntry> resizes = List.of();

  /**
   * While a move is under way (from the scheduler's {@link ControlCommand.MigrateJob} until the job
   * has started again): the nodes it restarts on, held for it; else empty.
   */
  @JsonInclude(JsonInclude.Include.NON_EMPTY)
  public List<String> migrationTarget = List.of();

  /**
   * While nodes are held for a move ({@link #migrationTarget}): when the hold ends if the job has
   * not restarted there (epoch millis); 0 when not recorded (a move logged before holds ended).
   */
  @JsonInclude(JsonInclude.Include.NON_DEFAULT)
  public long migrationHoldEndsMs;

  /** When it was last moved (epoch millis); 0 for never. */
  @JsonInclude(JsonInclude.Include.NON_DEFAULT)
  public long migratedAtMs;

  /** How many times it was moved. */
  @JsonInclude(JsonInclude.Include.NON_DEFAULT)
  public int migrations;

  public JobRecord() {}

  JobRecord(long id, JobRequest request, long submitMs) {
    this.id = id;
    this.request = request;
    this.submitMs = submitMs;
  }

  /** A copy that later changes to this record do not touch (for snapshots taken off-lock). */
  public JobRecord copy() {
    var c = new JobRecord(id, request, submitMs);
    c.state = state;
    c.startMs = startMs;
    c.endMs = endMs;
    c.attempt = attempt;
    c.requeues = requeues;
    c.exitCode = exitCode;
    c.message = message;
    c.placement = placement;
    c.taskExits = new ArrayList<>(taskExits);
    c.releasing = releasing;
    c.requeueing = requeueing;
    c.eligibleMs = eligibleMs;
    c.restarts = restarts;
    c.avoidNodes = avoidNodes;
    c.nextEligibleMs = nextEligibleMs;
    c.nextAvoidNodes = nextAvoidNodes;
    c.queuedSeq = queuedSeq;
    c.failedOn = failedOn;
    c.array = array;
    c.preemptedAtSec = preemptedAtSec;
    c.preemptedBy = preemptedBy;
    c.lastPreemptedBy = lastPreemptedBy;
    c.stopGraceSec = stopGraceSec;
    c.pastAttempts = pastAttempts;
    c.nextStepId = nextStepId;
    c.checkpoints = checkpoints;
    c.checkpointCount = checkpointCount;
    c.checkpointAskedMs = checkpointAskedMs;
    c.checkpointCountAtAsk = checkpointCountAtAsk;
    c.leaving = leaving;
    c.left = left;
    c.resizes = resizes;
    c.migrationTarget = migrationTarget;
    c.migrationHoldEndsMs = migrationHoldEndsMs;
    c.migratedAtMs = migratedAtMs;
    c.migrations = migrations;
    c.steps = new ArrayList<>(steps.size());
    for (StepRecord step : steps) {
      c.steps.add(step.copy());
    }
    return c;
  }

  /** Whether the job holds GPUs in the store: running, or ended with tasks still stopping. */
  public boolean holdsGpus() {
    return state == JobState.RUNNING || releasing;
  }

  /**
   * Whether the task of rank {@code task} has let its GPUs go: the job is stopping (ended and
   * releasing, or requeueing), and that task and every step entry on its node have confirmed their
   * end. A stopping gang frees its GPUs node by node this way; a running job keeps them all.
   */
  public boolean releasedTask(int task) {
    if (left.contains(task)) {
      return true;
    }
    if (!(releasing || requeueing) || taskExits.get(task) == null) {
      return false;
    }
    String node = placement.get(task).node();
    for (StepRecord step : steps) {
      if (step.isEnded()) {
        continue;
      }
      for (int e = 0; e < step.placement.size(); e++) {
        if (step.entryExits.get(e) == null && step.placement.get(e).node().equals(node)) {
          return false;
        }
      }
    }
    return true;
  }

  /** Whether every task of the current attempt has stopped, its steps' included. */
  public boolean allStopped() {
    if (taskExits.contains(null)) {
      return false;
    }
    for (StepRecord step : steps) {
      if (!step.isEnded()) {
        return false;
      }
    }
    return true;
  }

  /** Whether a preemption is stopping it: told to stop, some task still running. */
  public boolean isBeingPreempted() {
    return preemptedBy != 0 && requeueing && state == JobState.RUNNING;
  }

  public boolean isActive() {
    return state == JobState.PENDING || state == JobState.RUNNING;
  }

  /** Whether the current attempt placed task {@code task} on {@code node}. */
  public boolean runsOn(String node) {
    for (var t : placement) {
      if (t.node().equals(node)) {
        return true;
      }
    }
    return false;
  }
}
