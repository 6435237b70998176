package io.kairos.control.state;

import io.kairos.control.state.ControlCommand.CancelJob;
import io.kairos.control.state.ControlCommand.PreemptJobs;
import io.kairos.control.state.ControlCommand.Preemption;
import io.kairos.control.state.ControlCommand.Start;
import io.kairos.control.state.ControlCommand.StartJobs;
import io.kairos.control.state.ControlCommand.SubmitJobs;
import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.core.model.JobId;
import io.kairos.core.tenancy.PreemptionBook;
import io.kairos.protocol.JobState;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.agent.ExitReason;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.TreeSet;

/**
 * A job's life from submit to its end: submitted (and admitted, or held at a {@link QueueGates
 * gate}), started, preempted, its tasks' ends, requeued with backoff and restarted, and ended
 * (SUCCEEDED, FAILED or CANCELLED); a batch job ends when its batch step (task 0) ends, and its
 * other tasks, which only hold the allocation, are then stopped. Owns the transitions of {@link
 * JobRecord}s and the rule that a stopping job keeps its GPUs on each node until its task (and its
 * steps' tasks) there have confirmed their end, and lets them go node by node ({@link
 * #holdUntilStopped}, {@link #completeRequeueWhenStopped}): a GPU is never free while a task that
 * may still run holds it. The node registry uses the same rules when a node's tasks are lost.
 */
final class JobLifecycle {
  static final long BACKOFF_BASE_MS = 2_000;
  static final long BACKOFF_MAX_MS = 300_000;

  private final Records records;
  private final CoreBridge core;
  private final QueueGates gates;
  private final Suspects suspects;
  private final ElasticResizes elastic;

  /** Jobs that started or ended during this command: their dependents are looked at again. */
  private final TreeSet<Long> changed = new TreeSet<>();

  /** The records as the core's preemption rules ask about them. */
  private final RecordedJobs recorded;

  JobLifecycle(Records records, CoreBridge core, QueueGates gates, Suspects suspects) {
    this.records = records;
    this.core = core;
    this.gates = gates;
    this.suspects = suspects;
    this.elastic = new ElasticResizes(records, core);
    this.recorded = new RecordedJobs(records::job);
  }

  // --- submit ---

  /**
   * Adds the submit's jobs, group by group: a group that would take its users past {@link
   * Limits#maxJobsOf} or the cluster past {@link Limits#maxLiveJobs} is refused as a whole (no job,
   * no id), the others are added in order.
   */
  ControlResult submit(SubmitJobs c) {
    var ids = new ArrayList<Long>(c.jobs().size());
    var refused = new ArrayList<ControlResult.Refusal>();
    List<Integer> groups = c.groups();
    int groupCount = groups == null ? c.jobs().size() : groups.size();
    int at = 0;
    for (int g = 0; g < groupCount; g++) {
      int size = groups == null ? 1 : groups.get(g);
      List<JobRequest> group = c.jobs().subList(at, Math.min(c.jobs().size(), at + size));
      at += size;
      ControlResult.Refusal refusal = admission(g, group);
      if (refusal != null) {
        refused.add(refusal);
        continue;
      }
      for (JobRequest request : group) {
        addRequest(request, c.atMs(), ids);
      }
    }
    return new ControlResult(200, null, ids, refused);
  }

  /** The limit a group of requests would pass, or null when it fits (or nothing is limited). */
  private ControlResult.Refusal admission(int group, List<JobRequest> requests) {
    Limits limits = records.limits();
    if (limits == null) {
      return null;
    }
    var byUser = new java.util.TreeMap<String, Long>();
    long total = 0;
    for (JobRequest r : requests) {
      long w = JobSize.totalWeight(r);
      byUser.merge(r.user(), w, Long::sum);
      total += w;
    }
    for (var e : byUser.entrySet()) {
      long used = records.activeWeightOf(e.getKey());
      long max = limits.maxJobsOf(e.getKey());
      if (used + e.getValue() > max) {
        return new ControlResult.Refusal(
            group, "maxJobsPerUser", max, e.getKey(), used, e.getValue());
      }
    }
    long live = records.activeWeight();
    if (live + total > limits.maxLiveJobs()) {
      return new ControlResult.Refusal(
          group, "maxLiveJobs", limits.maxLiveJobs(), null, live, total);
    }
    return null;
  }

  private void addRequest(JobRequest request, long atMs, List<Long> ids) {
    JobArray array = request.array();
    if (array == null) {
      ids.add(add(request, null, atMs));
      return;
    }
    // One record per element, sharing one request; ids are consecutive from the first.
    JobRequest element = request.element();
    long first = records.nextJobId();
    int count = array.taskIds().size();
    for (int taskId : array.taskIds()) {
      ids.add(
          add(
              element,
              new ArrayElement(first, taskId, count, array.min(), array.max(), array.limit()),
              atMs));
    }
  }

  private long add(JobRequest request, ArrayElement array, long atMs) {
    JobRecord job = records.addJob(request, array, atMs);
    if (request.dependency() == null) {
      gates.admit(job);
      return job.id;
    }
    var outcome = gates.openDependency(job);
    switch (outcome.verdict()) {
      case HOLDS -> gates.admit(job);
      case WAITS -> {}
      case NEVER -> neverSatisfied(job, atMs, outcome.why());
    }
    return job.id;
  }

  /**
   * Looks again at the jobs waiting on those that started or ended in this command: a job whose
   * dependency now holds joins the queue; one whose dependency can never hold is cancelled (Slurm's
   * DependencyNeverSatisfied with kill_invalid_depend), which may decide others in turn. Decided
   * here, in the state machine, so every replica and every replay decides the same.
   */
  void settleDependencies(long atMs) {
    while (!changed.isEmpty()) {
      JobRecord dependee = records.job(changed.pollFirst());
      for (long id : gates.dependentsOf(dependee)) {
        var outcome = gates.recheckDependency(id, dependee.id);
        switch (outcome.verdict()) {
          case HOLDS -> gates.admit(records.job(id));
          case WAITS -> {}
          case NEVER -> neverSatisfied(records.job(id), atMs, outcome.why());
        }
      }
    }
  }

  private void neverSatisfied(JobRecord job, long atMs, String why) {
    end(job, JobState.CANCELLED, atMs, null, "dependency never satisfied: " + why);
  }

  // --- cancel, start, preempt ---

  ControlResult cancel(CancelJob c) {
    JobRecord job = records.job(c.jobId());
    if (job == null) {
      return ControlResult.notFound("no job " + c.jobId());
    }
    if (!job.isActive()) {
      return ControlResult.conflict("job " + c.jobId() + " already ended: " + job.state);
    }
    boolean wasRunning = job.state == JobState.RUNNING;
    if (!wasRunning && !gates.leaveIfHeld(job)) {
      core.cancelQueued(job, c.atMs());
    }
    end(job, JobState.CANCELLED, c.atMs(), null, "cancelled by " + c.by());
    if (wasRunning) {
      holdUntilStopped(job, c.atMs());
    }
    return ControlResult.OK;
  }

  ControlResult start(StartJobs c) {
    var started = new ArrayList<Long>();
    for (Start s : c.starts()) {
      JobRecord job = records.job(s.jobId());
      if (job == null
          || !core.hasStore()
          || job.state != JobState.PENDING
          || gates.holds(job)
          || s.tasks().size() < job.request.tasks()
          || s.tasks().size() > job.request.maxTasks()
          || !ranked(s.tasks())
          || !core.start(job, s.tasks(), c.atMs())) {
        continue; // not startable, or a stale decision: the scheduler replans
      }
      job.state = JobState.RUNNING;
      job.attempt++;
      job.startMs = c.atMs();
      job.placement = s.tasks();
      JobMigrations.clearHold(job);
      records.indexHolding(job);
      job.taskExits = new ArrayList<>(Collections.nCopies(s.tasks().size(), (Integer) null));
      changed.add(job.id);
      started.add(job.id);
    }
    return ControlResult.ok(started);
  }

  /** Whether the tasks are listed in rank order 0..n-1 (agents index a gang by rank). */
  private static boolean ranked(List<TaskPlacement> tasks) {
    for (int i = 0; i < tasks.size(); i++) {
      if (tasks.get(i).task() != i) {
        return false;
      }
    }
    return true;
  }

  /**
   * Starts each preemption, by the core's rules ({@link PreemptionBook}): the victim's tasks are
   * stopped (the reconciler sends the kill with the command's grace), and once all have stopped the
   * victim is PENDING again at once (no backoff, eligible from the preemption's time), its restarts
   * untouched, its preemption time in its history. Stale ones change nothing ({@link
   * PreemptionBook#applies}): a victim that is not running or already stopping, or a preemptor that
   * no longer waits.
   *
   * @return the ids of the victims now being stopped
   */
  ControlResult preempt(PreemptJobs c) {
    var preempted = new ArrayList<Long>();
    for (Preemption p : c.preemptions()) {
      JobRecord victim = records.job(p.victimId());
      JobRecord preemptor = records.job(p.preemptorId());
      if (victim == null
          || preemptor == null
          || !PreemptionBook.applies(JobId.of(victim.id), JobId.of(preemptor.id), recorded)) {
        continue;
      }
      // The times the scheduler folds into the job's history (PreemptionBook#history).
      long atSec = CoreTime.sec(c.atMs());
      var times = new ArrayList<Long>(victim.preemptedAtSec.size() + 1);
      for (long t : victim.preemptedAtSec) {
        times.add(Math.min(t, atSec)); // ascending even if a leader's clock stepped back
      }
      times.add(atSec);
      while (times.size() > JobRecord.MAX_PREEMPTIONS_KEPT) {
        times.removeFirst();
      }
      victim.preemptedAtSec = List.copyOf(times);
      victim.preemptedBy = preemptor.id;
      victim.lastPreemptedBy = preemptor.id;
      victim.stopGraceSec = Math.max(0, c.graceSec());
      JobSteps.jobStopped(victim, "the job was preempted by job " + preemptor.id);
      victim.requeueing = true;
      victim.requeues++;
      victim.message =
          "preempted by job "
              + preemptor.id
              + (p.detail() == null || p.detail().isBlank() ? "" : " (" + p.detail() + ")");
      victim.nextEligibleMs = c.atMs();
      victim.nextAvoidNodes = victim.avoidNodes;
      JobCheckpoints.ask(victim, c.atMs());
      completeRequeueWhenStopped(victim, c.atMs());
      preempted.add(victim.id);
    }
    return ControlResult.ok(preempted);
  }

  ControlResult resize(ControlCommand.ResizeJob c) {
    return elastic.apply(c);
  }

  ControlResult migrate(ControlCommand.MigrateJob c) {
    return JobMigrations.apply(records, core, this, c);
  }

  // --- a task's end ---

  /** What a failed task's end means for its job. */
  private enum Failure {
    /** The node refused the task: not the job's fault, so it is requeued without a restart. */
    NODE_AT_FAULT,
    /** The job restarts while it has restarts left, else it fails. */
    RESTARTABLE,
    /** The job fails. */
    FINAL
  }

  /** A failed task's reason, as a {@link Failure}; null: it exited non-zero on its own. */
  private static Failure failure(ExitReason reason) {
    if (reason == null) {
      return Failure.RESTARTABLE;
    }
    return switch (reason) {
      case NODE_UNHEALTHY -> Failure.NODE_AT_FAULT;
      case KILLED -> Failure.FINAL; // someone wanted it stopped
      case TIME_LIMIT, LAUNCH_FAILED, OUTPUT_LIMIT -> Failure.RESTARTABLE;
    };
  }

  ControlResult taskEnded(TaskEnded c) {
    NodeRecord node = records.node(c.node());
    JobRecord job = records.job(c.jobId());
    if (node == null || node.epoch != c.epoch()) {
      return ControlResult.conflict("stale epoch " + c.epoch() + " for node " + c.node());
    }
    if (job == null
        || !job.holdsGpus()
        || job.attempt != c.attempt()
        || c.task() < 0
        || c.task() >= job.placement.size()
        || !job.placement.get(c.task()).node().equals(c.node())
        || job.taskExits.get(c.task()) != null) {
      return ControlResult.conflict("not a running task of the current attempt");
    }
    job.taskExits.set(c.task(), c.exitCode());
    if (!job.releasing && !job.requeueing && elastic.taskLeft(job, c.task(), c.atMs())) {
      return ControlResult.OK;
    }
    if (job.releasing) {
      holdUntilStopped(job, c.atMs());
      return ControlResult.OK;
    }
    if (job.requeueing) {
      completeRequeueWhenStopped(job, c.atMs());
      return ControlResult.OK;
    }
    boolean failed = c.exitCode() != 0 || c.reason() != null;
    if (!failed) {
      if (!job.taskExits.contains(null)) {
        succeed(job, c.atMs());
      } else if (job.request.isBatch() && c.task() == 0) {
        // The batch step is the job: it ended well, so the holders of the allocation stop.
        end(job, JobState.SUCCEEDED, c.atMs(), 0, "the batch script exited 0");
        suspects.succeeded(job, c.atMs());
        holdUntilStopped(job, c.atMs());
      }
      return ControlResult.OK;
    }
    switch (failure(c.reason())) {
      case NODE_AT_FAULT -> {
        String why = "node " + c.node() + " is unhealthy: " + c.message();
        requeue(job, c.atMs(), c.atMs(), why, c.node());
      }
      case RESTARTABLE -> {
        if (job.restarts < job.request.maxRestarts()) {
          restart(job, c);
        } else {
          fail(job, c);
        }
      }
      case FINAL -> fail(job, c);
    }
    return ControlResult.OK;
  }

  /** Every task exited 0 (its steps may still be stopping: it keeps its GPUs until they have). */
  private void succeed(JobRecord job, long atMs) {
    boolean stepsStopped = job.allStopped();
    if (stepsStopped) {
      finishInStore(job, atMs);
    }
    end(job, JobState.SUCCEEDED, atMs, 0, "all " + job.taskExits.size() + " tasks exited 0");
    if (!stepsStopped) {
      holdUntilStopped(job, atMs);
    }
    // It failed on some nodes and succeeded elsewhere: evidence against those nodes.
    suspects.succeeded(job, atMs);
  }

  /** A task failed and the job has restarts left: the whole gang restarts, away from the node. */
  private void restart(JobRecord job, TaskEnded c) {
    job.restarts++;
    job.failedOn = withNode(job.failedOn, c.node());
    String why =
        failureMessage(c, job) + "; restart " + job.restarts + " of " + job.request.maxRestarts();
    requeue(job, c.atMs(), c.atMs(), why, c.node());
  }

  private void fail(JobRecord job, TaskEnded c) {
    end(job, JobState.FAILED, c.atMs(), c.exitCode(), failureMessage(c, job));
    holdUntilStopped(job, c.atMs());
  }

  private static List<String> withNode(List<String> nodeList, String node) {
    if (nodeList.contains(node)) {
      return nodeList;
    }
    var more = new ArrayList<>(nodeList);
    more.add(node);
    return List.copyOf(more);
  }

  /** A failed task's end, in words, for the job's message. */
  private static String failureMessage(TaskEnded c, JobRecord job) {
    String where = "task " + c.task() + " on node " + c.node();
    String exited = where + " exited with code " + c.exitCode();
    if (c.reason() == null) {
      return exited;
    }
    return switch (c.reason()) {
      case TIME_LIMIT ->
          "time limit of " + job.request.timeLimitSec() + "s reached (" + where + ")";
      case LAUNCH_FAILED -> "launch failed on node " + c.node() + ": " + c.message();
      case OUTPUT_LIMIT -> where + " was stopped: its output passed the agent's limit";
      case KILLED -> where + " was killed" + (c.message() == null ? "" : ": " + c.message());
      case NODE_UNHEALTHY -> exited; // not reached: such a task requeues its job
    };
  }

  // --- requeue and end ---

  /**
   * Starts a requeue: the job's tasks are stopped (the reconciler kills them), and once all have
   * stopped it goes back to PENDING, eligible after the backoff and {@code safeAfterMs}, away from
   * {@code failedNode} (none when null).
   */
  void requeue(JobRecord job, long atMs, long safeAfterMs, String why, String failedNode) {
    requeue(job, atMs, safeAfterMs, why, failedNode, false);
  }

  /**
   * As {@link #requeue(JobRecord, long, long, String, String)}, for a job whose node was lost: the
   * job did nothing wrong, so its first requeue waits only for the lost agent's lease ({@code
   * safeAfterMs}), and later ones back off as one requeue fewer would ({@link #nodeLossBackoffMs}):
   * a job that keeps taking its nodes down still slows down.
   */
  void requeueLost(JobRecord job, long atMs, long safeAfterMs, String why, String lostNode) {
    requeue(job, atMs, safeAfterMs, why, lostNode, true);
  }

  private void requeue(
      JobRecord job, long atMs, long safeAfterMs, String why, String failedNode, boolean nodeLost) {
    JobSteps.jobStopped(job, "the job was requeued: " + why);
    job.requeueing = true;
    job.requeues++;
    job.message = "requeued: " + why;
    long backoff =
        nodeLost ? nodeLossBackoffMs(job.id, job.requeues) : backoffMs(job.id, job.requeues);
    job.nextEligibleMs = Math.max(safeAfterMs, atMs + backoff);
    job.nextAvoidNodes =
        failedNode == null ? job.avoidNodes : avoiding(job, job.avoidNodes, failedNode);
    completeRequeueWhenStopped(job, atMs);
  }

  /** For a requeueing job: once every task has stopped, it is PENDING and queued again. */
  void completeRequeueWhenStopped(JobRecord job, long atMs) {
    if (!job.allStopped()) {
      core.releaseStopped(job, atMs);
      return;
    }
    records.removeJobTokens(job.id);
    finishInStore(job, atMs);
    String checkpointed = JobCheckpoints.outcome(job);
    if (checkpointed != null) {
      job.message = job.message + ": " + checkpointed;
    }
    recordAttempt(job, atMs);
    job.requeueing = false;
    job.preemptedBy = 0;
    job.stopGraceSec = -1;
    job.eligibleMs = job.nextEligibleMs;
    job.avoidNodes = job.nextAvoidNodes;
    job.nextEligibleMs = 0;
    job.nextAvoidNodes = List.of();
    job.state = JobState.PENDING;
    job.placement = List.of();
    job.taskExits = new ArrayList<>();
    ElasticResizes.attemptEnded(job);
    gates.queue(job);
  }

  /** The attempt that just stopped, for the accounting store; the latest few are kept. */
  private static void recordAttempt(JobRecord job, long atMs) {
    if (job.attempt == 0 || job.placement.isEmpty()) {
      return;
    }
    int exit = 0;
    for (Integer code : job.taskExits) {
      if (code != null && code != 0) {
        exit = code;
        break;
      }
    }
    var past = new ArrayList<>(job.pastAttempts);
    past.add(
        new AttemptRecord(
            job.attempt, job.startMs, atMs, job.placement, exit, job.message, job.preemptedBy));
    if (past.size() > AttemptRecord.MAX_KEPT) {
      past.subList(0, past.size() - AttemptRecord.MAX_KEPT).clear();
    }
    job.pastAttempts = List.copyOf(past);
  }

  /** The backoff of a requeue for a lost node: none the first time, then one step behind. */
  static long nodeLossBackoffMs(long jobId, int requeues) {
    return requeues <= 1 ? 0 : backoffMs(jobId, requeues - 1);
  }

  /**
   * Exponential backoff with equal jitter: 2 s, 4 s, 8 s ... up to 5 minutes, each between half and
   * all of that. The jitter is a hash of (job, requeue count), so every replica and every replay
   * computes the same delay, and jobs requeued together do not restart in lockstep.
   */
  static long backoffMs(long jobId, int requeues) {
    int n = Math.max(0, Math.min(requeues - 1, 20));
    long ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS << n);
    long half = ceiling / 2;
    long mix = splitMix64(jobId * 0x9E3779B97F4A7C15L + requeues);
    return half + Math.floorMod(mix, half + 1);
  }

  private static long splitMix64(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /**
   * Places the job away from {@code node} from now on, unless that would leave too few nodes for
   * its gang: a small cluster must not strand a job that some node could still run.
   */
  List<String> avoiding(JobRecord job, List<String> avoid, String node) {
    if (avoid.contains(node) || job.request.excludeNodes().contains(node)) {
      return avoid;
    }
    long usable =
        records.nodes().stream()
            .filter(
                n ->
                    n.registration != null
                        && !n.name.equals(node)
                        && !avoid.contains(n.name)
                        && !job.request.excludeNodes().contains(n.name)
                        && runsAccountOf(n, job))
            .count();
    if (usable < job.request.tasks()) {
      return avoid;
    }
    var more = new TreeSet<>(avoid);
    more.add(node);
    return List.copyOf(more);
  }

  /** Whether the node's agent can start the job's tasks: it runs as root, or as their account. */
  private static boolean runsAccountOf(NodeRecord n, JobRecord job) {
    String only = n.registration.runsOnlyAs();
    return only == null || only.equals(job.request.unixAccount());
  }

  /**
   * For a job that just ended, or one already releasing: keeps its GPUs while any task has not
   * reported its end, and frees them once all have.
   */
  void holdUntilStopped(JobRecord job, long atMs) {
    if (!job.allStopped()) {
      records.setReleasing(job, true);
      core.releaseStopped(job, atMs);
    } else {
      records.setReleasing(job, false);
      finishInStore(job, atMs);
    }
  }

  /** The job's GPUs are free: in the store, and in the index of jobs holding GPUs. */
  private void finishInStore(JobRecord job, long atMs) {
    records.unindexHolding(job);
    core.finish(job, atMs);
  }

  private void end(JobRecord job, JobState state, long atMs, Integer exitCode, String message) {
    JobSteps.jobStopped(job, "the job ended: " + state);
    records.removeJobTokens(job.id);
    job.requeueing = false;
    job.preemptedBy = 0;
    job.checkpointAskedMs = 0;
    JobMigrations.clearHold(job);
    job.state = state;
    job.endMs = atMs;
    job.exitCode = exitCode;
    job.message = message;
    records.ended(job);
    changed.add(job.id);
    gates.releaseArraySlot(job);
  }
}
