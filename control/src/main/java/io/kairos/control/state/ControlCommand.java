package io.kairos.control.state;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.Registration;
import io.kairos.protocol.agent.TaskRef;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The controller log's alphabet: every change to the replicated state. Each carries the time it
 * happened ({@code atMs}, stamped by the replica that proposed it), so applying is deterministic:
 * followers and replays never read a clock.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "op")
@JsonSubTypes({
  @JsonSubTypes.Type(value = ControlCommand.SubmitJobs.class, name = "submit"),
  @JsonSubTypes.Type(value = ControlCommand.CancelJob.class, name = "cancel"),
  @JsonSubTypes.Type(value = ControlCommand.StartJobs.class, name = "start"),
  @JsonSubTypes.Type(value = ControlCommand.TaskEnded.class, name = "taskEnded"),
  @JsonSubTypes.Type(value = ControlCommand.TasksEnded.class, name = "tasksEnded"),
  @JsonSubTypes.Type(value = ControlCommand.RegisterNode.class, name = "register"),
  @JsonSubTypes.Type(value = ControlCommand.RegisterNodes.class, name = "registerNodes"),
  @JsonSubTypes.Type(value = ControlCommand.DrainNode.class, name = "drain"),
  @JsonSubTypes.Type(value = ControlCommand.ResumeNode.class, name = "resume"),
  @JsonSubTypes.Type(value = ControlCommand.AddToken.class, name = "addToken"),
  @JsonSubTypes.Type(value = ControlCommand.AddTokens.class, name = "addTokens"),
  @JsonSubTypes.Type(value = ControlCommand.NodeDown.class, name = "nodeDown"),
  @JsonSubTypes.Type(value = ControlCommand.PreemptJobs.class, name = "preempt"),
  @JsonSubTypes.Type(value = ControlCommand.SetUser.class, name = "setUser"),
  @JsonSubTypes.Type(value = ControlCommand.StartStep.class, name = "startStep"),
  @JsonSubTypes.Type(value = ControlCommand.CancelStep.class, name = "cancelStep"),
  @JsonSubTypes.Type(value = ControlCommand.SetLimits.class, name = "setLimits"),
  @JsonSubTypes.Type(value = ControlCommand.ResetNode.class, name = "resetNode"),
  @JsonSubTypes.Type(value = ControlCommand.RevokeToken.class, name = "revokeToken"),
  @JsonSubTypes.Type(value = ControlCommand.TokensUsed.class, name = "tokensUsed"),
  @JsonSubTypes.Type(value = ControlCommand.ApplyConfig.class, name = "applyConfig"),
  @JsonSubTypes.Type(value = ControlCommand.RecordCheckpoint.class, name = "checkpoint"),
  @JsonSubTypes.Type(value = ControlCommand.GpusUnhealthy.class, name = "gpusUnhealthy"),
  @JsonSubTypes.Type(value = ControlCommand.ReturnGpu.class, name = "returnGpu"),
  @JsonSubTypes.Type(value = ControlCommand.SettleNodes.class, name = "settleNodes"),
  @JsonSubTypes.Type(value = ControlCommand.ForgetJobs.class, name = "forgetJobs"),
  @JsonSubTypes.Type(value = ControlCommand.ResizeJob.class, name = "resize"),
  @JsonSubTypes.Type(value = ControlCommand.MigrateJob.class, name = "migrate"),
  @JsonSubTypes.Type(value = ControlCommand.EndMigrationHold.class, name = "endMigrationHold"),
})
public sealed interface ControlCommand {
  long atMs();

  /**
   * New jobs, in order; each gets the next id. One log entry for a whole batch.
   *
   * @param groups how many consecutive requests each submit (one API request) holds: each group is
   *     admitted against the {@link Limits} as a whole or refused as a whole; null (entries written
   *     before limits existed): each request is a group of its own
   */
  record SubmitJobs(
      long atMs,
      List<JobRequest> jobs,
      @JsonInclude(JsonInclude.Include.NON_NULL) List<Integer> groups)
      implements ControlCommand {
    public SubmitJobs {
      jobs = List.copyOf(jobs);
      groups = groups == null ? null : List.copyOf(groups);
    }

    public SubmitJobs(long atMs, List<JobRequest> jobs) {
      this(atMs, jobs, null);
    }
  }

  /** A user or an admin cancels a pending or running job. */
  record CancelJob(long atMs, long jobId, String by) implements ControlCommand {}

  /** The scheduler's decisions: each job's gang starts on the named nodes and GPUs. */
  record StartJobs(long atMs, List<Start> starts) implements ControlCommand {
    public StartJobs {
      starts = List.copyOf(starts);
    }
  }

  /** One start decision: the job's tasks in rank order. */
  record Start(long jobId, List<TaskPlacement> tasks) {
    public Start {
      tasks = List.copyOf(tasks);
    }
  }

  /**
   * An agent reported a task's end. Counted only when {@code epoch} is the node's current one and
   * {@code attempt} the job's current one (a fenced or stale report changes nothing).
   *
   * @param reason why the agent ended the task; null when it ended on its own (the log holds the
   *     constant's name, as it held the same strings before {@link ExitReason} existed)
   * @param step null for one of the job's own tasks; else the job step whose entry {@code task}
   *     ended (left out of the log's JSON when null, so older entries encode as they did)
   * @param exitCodes for an entry of several processes, each one's code by local rank; null for one
   */
  record TaskEnded(
      long atMs,
      String node,
      long epoch,
      long jobId,
      int attempt,
      int task,
      int exitCode,
      ExitReason reason,
      String message,
      @JsonInclude(JsonInclude.Include.NON_NULL) Integer step,
      @JsonInclude(JsonInclude.Include.NON_NULL) List<Integer> exitCodes)
      implements ControlCommand {
    /** The end of one of the job's own tasks. */
    public TaskEnded(
        long atMs,
        String node,
        long epoch,
        long jobId,
        int attempt,
        int task,
        int exitCode,
        ExitReason reason,
        String message) {
      this(atMs, node, epoch, jobId, attempt, task, exitCode, reason, message, null, null);
    }
  }

  /**
   * Several task ends that arrived together (from any agents), in one log entry: applied in order,
   * each exactly as an entry of its own would be ({@link ControlState}); the result holds each
   * one's answer, in order. So a thousand jobs ending a second cost tens of entries, not a thousand
   * (each entry takes the log's append lock, is written and fsynced, counts towards the next
   * snapshot).
   */
  record TasksEnded(long atMs, List<TaskEnded> ends) implements ControlCommand {
    public TasksEnded {
      ends = List.copyOf(ends);
    }
  }

  /**
   * A job step (srun) starts inside the job's allocation: laid out by srun's rules on the job's
   * current nodes ({@link JobSteps}), it gets the job's next step id. Refused when the job no
   * longer runs attempt {@code attempt}, or the layout does not fit.
   */
  record StartStep(long atMs, long jobId, int attempt, StepRequest step)
      implements ControlCommand {}

  /**
   * A job step's tasks are stopped (its srun was signalled, or a user cancelled it).
   *
   * @param killNow SIGKILL at once, as Slurm's srun does when signalled; false: the job's stop
   *     signal and grace
   */
  record CancelStep(long atMs, long jobId, int step, String by, boolean killNow)
      implements ControlCommand {}

  /**
   * An agent (re)registers: a new epoch; jobs it ran under an older epoch are requeued.
   *
   * @param registration what the agent sent, less its credential
   * @param credential what the node proves itself with from now on ({@link NodeRecord#credential});
   *     a node that has one is registered again only with the same (else the command is refused),
   *     and one credential belongs to one node. Null in entries from before node credentials: those
   *     register as they did
   * @param adopted the tasks the restarted agent adopted (still running, or ended with a status it
   *     will report): those of the current attempt placed on this node are kept, not lost
   */
  record RegisterNode(
      long atMs,
      Registration registration,
      @JsonInclude(JsonInclude.Include.NON_NULL) String credential,
      @JsonInclude(JsonInclude.Include.NON_EMPTY) List<TaskRef> adopted)
      implements ControlCommand {
    public RegisterNode {
      adopted = adopted == null ? List.of() : List.copyOf(adopted);
    }

    public RegisterNode(long atMs, Registration registration, String credential) {
      this(atMs, registration, credential, List.of());
    }

    public RegisterNode(long atMs, Registration registration) {
      this(atMs, registration, null);
    }
  }

  /**
   * Registrations that arrived together, applied one after another as if each were its own entry
   * (group commit: a burst of agents costs a few log entries, not one each). The result's {@link
   * ControlResult#items} holds what each answered, in order.
   *
   * @param atMs when the entry was proposed; each registration keeps its own time
   */
  record RegisterNodes(long atMs, List<RegisterNode> nodes) implements ControlCommand {
    public RegisterNodes {
      nodes = List.copyOf(nodes);
    }
  }

  /**
   * An admin resets a node ({@code kairos nodes reset NAME}): its credential is forgotten, so only
   * a join token registers the name again, and its agent is fenced as if it were lost: the node is
   * DOWN, its tasks count as lost and its jobs are requeued, not before {@code safeAfterMs} (when
   * the fenced agent's lease has surely run out).
   */
  record ResetNode(long atMs, String node, long safeAfterMs) implements ControlCommand {}

  /** An admin revokes a token: it is kept, marked revoked, and never accepted again. */
  record RevokeToken(long atMs, String sha256) implements ControlCommand {}

  /**
   * When tokens were last used, as one replica saw them since its previous such entry: each replica
   * writes one at most once a minute, so a use costs no log entry of its own. Applying keeps the
   * later of this and what the state knew.
   *
   * @param lastUsedMs by token hash
   */
  record TokensUsed(long atMs, Map<String, Long> lastUsedMs) implements ControlCommand {
    public TokensUsed {
      lastUsedMs = java.util.Collections.unmodifiableMap(new TreeMap<>(lastUsedMs));
    }
  }

  /**
   * Takes a node out of service.
   *
   * @param requeue also requeue the jobs running there (a health check failed: their tasks are
   *     killed, and each job restarts elsewhere once all its tasks have stopped); false for an
   *     admin's drain, which lets running jobs finish
   */
  record DrainNode(long atMs, String node, String reason, boolean requeue)
      implements ControlCommand {
    public DrainNode(long atMs, String node, String reason) {
      this(atMs, node, reason, false);
    }
  }

  /**
   * The leader's failure detector gave up on a node's agent. Its epoch is fenced (a late heartbeat
   * or report under it changes nothing, and the agent is told to kill its tasks and register
   * again), its tasks count as lost, and its jobs are requeued.
   *
   * @param epoch the epoch the detector watched; a newer registration makes the command stale
   * @param safeAfterMs when the agent's lease has surely run out (its last heartbeat plus the lease
   *     and a margin): by then the agent, or its fence watchdog, has killed its tasks, so no
   *     requeued job starts elsewhere before that
   */
  record NodeDown(long atMs, String node, long epoch, String reason, long safeAfterMs)
      implements ControlCommand {}

  record ResumeNode(long atMs, String node) implements ControlCommand {}

  /**
   * A node's agent (at {@code epoch}) found problems with single GPUs. Each GPU not yet out of
   * service is taken out alone, with its reason: no job is placed on it, the jobs running with it
   * are requeued, and the node goes on serving its other GPUs and the jobs on them. A stale epoch
   * changes nothing.
   *
   * @param problems by GPU index, one line each ("GPU 2 (GPU-...): uncorrectable ECC errors rose")
   */
  record GpusUnhealthy(long atMs, String node, long epoch, Map<Integer, String> problems)
      implements ControlCommand {
    public GpusUnhealthy {
      problems = problems == null ? Map.of() : new TreeMap<>(problems);
    }
  }

  /**
   * Brings the scheduler's store up to date with the nodes registered since it was last built
   * (registrations only mark it stale, so that a burst of them costs one rebuild, not one each).
   * Any other command does the same before it applies; the leader's scheduler proposes this one
   * when registrations are all that came.
   */
  record SettleNodes(long atMs) implements ControlCommand {}

  /** An admin returns GPU {@code gpu} of {@code node} to service (after the repair). */
  record ReturnGpu(long atMs, String node, int gpu) implements ControlCommand {}

  /**
   * The scheduler's preemptions: each victim's tasks get the job's kill signal and {@code graceSec}
   * to checkpoint, then SIGKILL; once all have stopped the victim is PENDING again (same id, no
   * backoff, not counted against its restarts), with the preemption in its history. A victim that
   * is no longer running (it ended, or is already stopping), or whose preemptor no longer waits, is
   * left alone: the decision went stale.
   *
   * @param graceSec the tenancy's preemption grace (the same on every replica: it travels here)
   */
  record PreemptJobs(long atMs, long graceSec, List<Preemption> preemptions)
      implements ControlCommand {
    public PreemptJobs {
      preemptions = List.copyOf(preemptions);
    }
  }

  /**
   * One preemption.
   *
   * @param kind PRIORITY, RECLAIM, BORROW or FAIR_SHARE (the core's {@code PreemptionKind})
   * @param detail for people, e.g. "reclaim: queue a borrows 2 of b's gpu:H100"
   */
  record Preemption(long victimId, long preemptorId, String kind, String detail) {}

  record AddToken(long atMs, TokenRecord token) implements ControlCommand {}

  /**
   * Several tokens added together (the step credentials of the jobs a pass starts, packed by group
   * commit): each added, or refused, exactly as an {@link AddToken} entry of its own would be; the
   * result holds each one's answer, in order.
   */
  record AddTokens(long atMs, List<TokenRecord> tokens) implements ControlCommand {
    public AddTokens {
      tokens = List.copyOf(tokens);
    }
  }

  /**
   * An admin maps a Kairos user to a Unix account (a row replaces the user's earlier one). Jobs
   * submitted from then on record it as their {@code runAs}; jobs already submitted keep theirs.
   */
  record SetUser(long atMs, UserRecord user) implements ControlCommand {}

  /**
   * An admin sets the limits, or the leader proposes its heap's defaults ({@code onlyIfUnset}: then
   * it changes nothing once limits are set, so two leaders proposing defaults agree).
   */
  record SetLimits(long atMs, Limits limits, boolean onlyIfUnset) implements ControlCommand {}

  /**
   * An admin applies a new version of the site's configuration ({@link ConfigVersion}).
   *
   * @param expectedVersion the version the admin's diff was made against: the command changes
   *     nothing if another was applied since (0: none yet; -1: whatever is current)
   * @param sha256 the document's SHA-256, computed by the proposer
   * @param force apply even if it removes queues that still hold live jobs (they then wait with the
   *     reason "unknown queue")
   */
  record ApplyConfig(
      long atMs, long expectedVersion, String yaml, String sha256, String by, boolean force)
      implements ControlCommand {}

  /**
   * A job reports a complete checkpoint ({@link JobCheckpoints#record}): kept among its latest,
   * older ones beyond its policy's {@code keep} dropped. Refused unless the job declares
   * checkpoints and runs attempt {@code attempt} (while it is being stopped too).
   */
  record RecordCheckpoint(long atMs, long jobId, CheckpointEntry checkpoint)
      implements ControlCommand {}

  /**
   * The leader has written these ended jobs to the accounting store (durably, before proposing):
   * they leave the replicated state. A job that is not ended, still holds GPUs, or is named by a
   * waiting job's dependency is kept (a later command may forget it); an unknown id is passed over.
   */
  record ForgetJobs(long atMs, List<Long> jobIds) implements ControlCommand {
    public ForgetJobs {
      jobIds = List.copyOf(jobIds);
    }
  }

  /**
   * The scheduler resizes a running elastic job ({@link ElasticResizes}): {@code add} are new tasks
   * (the next ranks, one per new node) that start at once; {@code remove} are ranks that leave,
   * each stopped (after a checkpoint when the job declares one) and let go once it has ended.
   * Refused unless the job runs attempt {@code attempt} at {@code fromNodes} live nodes, is
   * elastic, not stopping and not already shrinking, and the new size stays within its range.
   *
   * @param beneficiary for a shrink, the waiting job it makes room for; 0 for a grow
   */
  record ResizeJob(
      long atMs,
      long jobId,
      int attempt,
      int fromNodes,
      List<TaskPlacement> add,
      List<Integer> remove,
      long beneficiary)
      implements ControlCommand {
    public ResizeJob {
      add = add == null ? List.of() : List.copyOf(add);
      remove = remove == null ? List.of() : List.copyOf(remove);
    }
  }

  /**
   * The scheduler moves a running checkpointable job ({@link JobMigrations}): it is asked for a
   * checkpoint, stopped, and queued again pinned to {@code targetNodes}, which no other job may
   * take until it has restarted there. Refused unless the job runs attempt {@code attempt},
   * declares checkpoints, is of a fixed size and not stopping, was not moved within {@code
   * windowSec}, and every target node is registered.
   *
   * @param beneficiary the waiting job the move lets start, or the job itself when the move puts it
   *     into a narrower topology level
   * @param detail for people: the modelled gain and cost
   * @param holdEndsMs when the hold on the target nodes ends if the job has not restarted there
   *     (the core's {@link io.kairos.core.sched.Migrations#holdEndSec}), for people; 0 in entries
   *     written before holds ended (the scheduler ends those by the same rule)
   */
  record MigrateJob(
      long atMs,
      long jobId,
      int attempt,
      List<String> targetNodes,
      long beneficiary,
      long windowSec,
      String detail,
      @JsonInclude(JsonInclude.Include.NON_DEFAULT) long holdEndsMs)
      implements ControlCommand {
    public MigrateJob {
      targetNodes = targetNodes == null ? List.of() : List.copyOf(targetNodes);
    }

    /** A move whose hold's end is not recorded (entries written before holds ended). */
    public MigrateJob(
        long atMs,
        long jobId,
        int attempt,
        List<String> targetNodes,
        long beneficiary,
        long windowSec,
        String detail) {
      this(atMs, jobId, attempt, targetNodes, beneficiary, windowSec, detail, 0);
    }
  }

  /**
   * The scheduler ends the hold of a move that did not complete in time ({@link
   * JobMigrations#endHold}): the core found the hold past its end ({@link
   * io.kairos.core.sched.Migrations#expiredAt}). Its target nodes are free for every job again and
   * the job, if it still waits, may start anywhere. Refused unless the job still holds nodes for
   * the move made at {@code movedAtMs} (a later move has a hold of its own).
   */
  record EndMigrationHold(long atMs, long jobId, long movedAtMs) implements ControlCommand {}
}
