package io.kairos.control.state;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.Registration;
import java.util.List;

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
  @JsonSubTypes.Type(value = ControlCommand.RegisterNode.class, name = "register"),
  @JsonSubTypes.Type(value = ControlCommand.DrainNode.class, name = "drain"),
  @JsonSubTypes.Type(value = ControlCommand.ResumeNode.class, name = "resume"),
  @JsonSubTypes.Type(value = ControlCommand.AddToken.class, name = "addToken"),
  @JsonSubTypes.Type(value = ControlCommand.NodeDown.class, name = "nodeDown"),
  @JsonSubTypes.Type(value = ControlCommand.PreemptJobs.class, name = "preempt"),
  @JsonSubTypes.Type(value = ControlCommand.SetUser.class, name = "setUser"),
  @JsonSubTypes.Type(value = ControlCommand.SetLimits.class, name = "setLimits"),
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
      String message)
      implements ControlCommand {}

  /** An agent (re)registers: a new epoch; jobs it ran under an older epoch are requeued. */
  record RegisterNode(long atMs, Registration registration) implements ControlCommand {}

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
   * An admin maps a Kairos user to a Unix account (a row replaces the user's earlier one). Jobs
   * submitted from then on record it as their {@code runAs}; jobs already submitted keep theirs.
   */
  record SetUser(long atMs, UserRecord user) implements ControlCommand {}

  /**
   * An admin sets the limits, or the leader proposes its heap's defaults ({@code onlyIfUnset}: then
   * it changes nothing once limits are set, so two leaders proposing defaults agree).
   */
  record SetLimits(long atMs, Limits limits, boolean onlyIfUnset) implements ControlCommand {}
}
