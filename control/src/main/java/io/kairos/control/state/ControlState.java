package io.kairos.control.state;

import io.kairos.control.state.ControlCommand.AddToken;
import io.kairos.control.state.ControlCommand.CancelJob;
import io.kairos.control.state.ControlCommand.DrainNode;
import io.kairos.control.state.ControlCommand.NodeDown;
import io.kairos.control.state.ControlCommand.PreemptJobs;
import io.kairos.control.state.ControlCommand.Preemption;
import io.kairos.control.state.ControlCommand.RegisterNode;
import io.kairos.control.state.ControlCommand.ResumeNode;
import io.kairos.control.state.ControlCommand.Start;
import io.kairos.control.state.ControlCommand.StartJobs;
import io.kairos.control.state.ControlCommand.SubmitJobs;
import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.core.command.Command;
import io.kairos.core.model.Cluster;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.NodeSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.model.TaskShape;
import io.kairos.core.state.ClusterStore;
import io.kairos.core.state.Reducer;
import io.kairos.protocol.JobState;
import io.kairos.protocol.NodeState;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.agent.Registration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The controller's replicated state and its deterministic transitions.
 *
 * <p>Holds every job (active and finished), every node and every token, plus the core's {@link
 * ClusterStore} for the active jobs on the registered nodes. The store is derived: it is rebuilt
 * from the records when the set of nodes changes (a registration), and otherwise kept in step by
 * applying core commands through the core's {@link Reducer}. So the store never disagrees with the
 * records, and a snapshot needs only the records.
 *
 * <p>Single writer (the Ratis apply thread), not thread-safe: {@code StateMachine} guards it with a
 * read-write lock. No clock, no I/O, no randomness; ids and epochs are counters in the state, so
 * every replica assigns the same ones.
 */
public final class ControlState {
  private static final long MIB = 1L << 20;

  /** The exit code recorded for a task lost with its node. */
  public static final int LOST_EXIT_CODE = -1;

  /** A task's end reason when the node refused to start it because its health check failed. */
  public static final String NODE_UNHEALTHY = "NODE_UNHEALTHY";

  static final long BACKOFF_BASE_MS = 2_000;
  static final long BACKOFF_MAX_MS = 300_000;
  static final int SUSPECT_JOBS = 2;
  static final long SUSPECT_WINDOW_MS = 3_600_000;

  private long nextJobId = 1;
  private long nextEpoch = 1;

  /** Derived: one past the highest {@link JobRecord#queuedSeq}. */
  private long nextQueueSeq = 1;

  private final TreeMap<Long, JobRecord> jobs = new TreeMap<>();
  private final TreeMap<Long, JobRecord> active = new TreeMap<>();

  /** Jobs holding GPUs (running or releasing), by node: what a heartbeat and a node view read. */
  private final TreeMap<String, java.util.TreeSet<Long>> holdingByNode = new TreeMap<>();

  /** Ended jobs whose tasks are still stopping: they keep their GPUs (see JobRecord.releasing). */
  private final TreeMap<Long, JobRecord> releasing = new TreeMap<>();

  private final TreeMap<String, NodeRecord> nodes = new TreeMap<>();
  private final TreeMap<String, TokenRecord> tokens = new TreeMap<>();

  // Derived: rebuilt from the records, never snapshotted.
  private ClusterStore store;

  /** Pending jobs that no registered node could ever hold (not in the store). */
  private final TreeMap<Long, JobRecord> unplaceable = new TreeMap<>();

  /** Pending jobs whose dependencies do not hold yet (not in the store). */
  private final DependencyWaits waits = new DependencyWaits(jobs::get);

  /** Arrays with a limit (%N) and active elements, by array job id. */
  private final TreeMap<Long, Throttle> throttles = new TreeMap<>();

  /** Jobs that started or ended during this command: their dependents are looked at again. */
  private final TreeSet<Long> changed = new TreeSet<>();

  private long version;

  /**
   * An array's limit at work. {@code admitted}: its elements running, or pending in the store (or
   * unplaceable), at most the limit; {@code held}: pending elements beyond it, which join the queue
   * in task order as admitted ones end. Every held element has a higher id than every admitted one,
   * so a rebuild that admits the lowest ids finds the same sets.
   */
  private static final class Throttle {
    final TreeSet<Long> admitted = new TreeSet<>();
    final TreeMap<Long, JobRecord> held = new TreeMap<>();
  }

  public ControlState() {
    rebuildStore();
  }

  /** Applies one command; a command whose preconditions fail changes nothing. */
  public ControlResult apply(ControlCommand command) {
    version++;
    ControlResult result =
        switch (command) {
          case SubmitJobs c -> submit(c);
          case CancelJob c -> cancel(c);
          case StartJobs c -> start(c);
          case TaskEnded c -> taskEnded(c);
          case RegisterNode c -> register(c);
          case DrainNode c -> drain(c);
          case ResumeNode c -> resume(c);
          case AddToken c -> addToken(c);
          case NodeDown c -> nodeDown(c);
          case PreemptJobs c -> preempt(c);
        };
    settleDependencies(command.atMs());
    return result;
  }

  private ControlResult submit(SubmitJobs c) {
    var ids = new ArrayList<Long>(c.jobs().size());
    for (JobRequest request : c.jobs()) {
      JobArray array = request.array();
      if (array == null) {
        ids.add(add(request, null, c.atMs()));
        continue;
      }
      // One record per element, sharing one request; ids are consecutive from the first.
      JobRequest element = request.element();
      long first = nextJobId;
      int count = array.taskIds().size();
      for (int taskId : array.taskIds()) {
        ids.add(
            add(
                element,
                new ArrayElement(first, taskId, count, array.min(), array.max(), array.limit()),
                c.atMs()));
      }
    }
    return ControlResult.ok(ids);
  }

  private long add(JobRequest request, ArrayElement array, long atMs) {
    var job = new JobRecord(nextJobId++, request, atMs);
    job.array = array;
    jobs.put(job.id, job);
    active.put(job.id, job);
    if (request.dependency() == null) {
      admit(job);
      return job.id;
    }
    var outcome = waits.open(job, false);
    switch (outcome.verdict()) {
      case HOLDS -> admit(job);
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
  private void settleDependencies(long atMs) {
    while (!changed.isEmpty()) {
      JobRecord dependee = jobs.get(changed.pollFirst());
      for (long id : waits.affectedBy(dependee)) {
        var outcome = waits.recheck(id, dependee.id);
        switch (outcome.verdict()) {
          case HOLDS -> admit(jobs.get(id));
          case WAITS -> {}
          case NEVER -> neverSatisfied(jobs.get(id), atMs, outcome.why());
        }
      }
    }
  }

  private void neverSatisfied(JobRecord job, long atMs, String why) {
    end(job, JobState.CANCELLED, atMs, null, "dependency never satisfied: " + why);
  }

  /**
   * A pending job whose dependencies hold joins the queue (the store), unless its array already has
   * as many elements queued or running as its limit allows: then it is held until one ends.
   */
  private void admit(JobRecord job) {
    ArrayElement a = job.array;
    if (a != null && a.limit() > 0) {
      var t = throttles.computeIfAbsent(a.arrayJobId(), k -> new Throttle());
      if (t.admitted.size() >= a.limit()) {
        t.held.put(job.id, job);
        return;
      }
      t.admitted.add(job.id);
    }
    job.queuedSeq = nextQueueSeq++;
    enqueue(job);
  }

  /** An element of a limited array ended or left the queue: the next held one may join. */
  private void releaseArraySlot(JobRecord job) {
    if (job.array == null || job.array.limit() == 0) {
      return;
    }
    var t = throttles.get(job.array.arrayJobId());
    if (t == null) {
      return;
    }
    if (t.admitted.remove(job.id) || t.held.remove(job.id) != null) {
      while (t.admitted.size() < job.array.limit() && !t.held.isEmpty()) {
        JobRecord next = t.held.pollFirstEntry().getValue();
        t.admitted.add(next.id);
        next.queuedSeq = nextQueueSeq++;
        enqueue(next);
      }
    }
    if (t.admitted.isEmpty() && t.held.isEmpty()) {
      throttles.remove(job.array.arrayJobId());
    }
  }

  private boolean isHeld(long jobId, ArrayElement a) {
    if (a == null || a.limit() == 0) {
      return false;
    }
    var t = throttles.get(a.arrayJobId());
    return t != null && t.held.containsKey(jobId);
  }

  private ControlResult cancel(CancelJob c) {
    JobRecord job = jobs.get(c.jobId());
    if (job == null) {
      return ControlResult.notFound("no job " + c.jobId());
    }
    if (!job.isActive()) {
      return ControlResult.conflict("job " + c.jobId() + " already ended: " + job.state);
    }
    boolean wasRunning = job.state == JobState.RUNNING;
    if (!wasRunning
        && !waits.remove(job.id)
        && !isHeld(job.id, job.array)
        && unplaceable.remove(job.id) == null) {
      mustApply(new Command.CancelJob(sec(c.atMs()), JobId.of(job.id), "cancelled"));
    }
    end(job, JobState.CANCELLED, c.atMs(), null, "cancelled by " + c.by());
    if (wasRunning) {
      holdUntilStopped(job, c.atMs());
    }
    return ControlResult.OK;
  }

  private ControlResult start(StartJobs c) {
    var started = new ArrayList<Long>();
    for (Start s : c.starts()) {
      JobRecord job = jobs.get(s.jobId());
      if (job == null
          || store == null
          || job.state != JobState.PENDING
          || unplaceable.containsKey(job.id)
          || waits.contains(job.id)
          || isHeld(job.id, job.array)) {
        continue;
      }
      Placement placement = toPlacement(s.tasks());
      if (placement == null || s.tasks().size() != job.request.tasks() || !ranked(s.tasks())) {
        continue;
      }
      var applied =
          Reducer.apply(store, new Command.StartJob(sec(c.atMs()), JobId.of(job.id), placement));
      if (!applied.isAccepted()) {
        continue; // stale decision: the scheduler replans
      }
      job.state = JobState.RUNNING;
      job.attempt++;
      job.startMs = c.atMs();
      job.placement = s.tasks();
      indexHolding(job);
      job.taskExits = new ArrayList<>(Collections.nCopies(s.tasks().size(), (Integer) null));
      changed.add(job.id);
      started.add(job.id);
    }
    return ControlResult.ok(started);
  }

  /**
   * Starts each preemption: the victim's tasks are stopped (the reconciler sends the kill with the
   * command's grace), and once all have stopped the victim is PENDING again at once (no backoff),
   * its restarts untouched, its preemption time in its history. Stale ones change nothing: a victim
   * that is not running or already stopping, or a preemptor that no longer waits.
   *
   * @return the ids of the victims now being stopped
   */
  private ControlResult preempt(PreemptJobs c) {
    var preempted = new ArrayList<Long>();
    for (Preemption p : c.preemptions()) {
      JobRecord victim = jobs.get(p.victimId());
      JobRecord preemptor = jobs.get(p.preemptorId());
      if (victim == null
          || victim.state != JobState.RUNNING
          || victim.requeueing
          || victim.releasing
          || preemptor == null
          || preemptor.state != JobState.PENDING
          || p.victimId() == p.preemptorId()) {
        continue;
      }
      long atSec = sec(c.atMs());
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
      victim.requeueing = true;
      victim.requeues++;
      victim.message =
          "preempted by job "
              + preemptor.id
              + (p.detail() == null || p.detail().isBlank() ? "" : " (" + p.detail() + ")");
      victim.nextEligibleMs = c.atMs();
      victim.nextAvoidNodes = victim.avoidNodes;
      completeRequeueWhenStopped(victim, c.atMs());
      preempted.add(victim.id);
    }
    return ControlResult.ok(preempted);
  }

  private ControlResult taskEnded(TaskEnded c) {
    NodeRecord node = nodes.get(c.node());
    JobRecord job = jobs.get(c.jobId());
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
    if (job.releasing) {
      holdUntilStopped(job, c.atMs());
      return ControlResult.OK;
    }
    if (job.requeueing) {
      completeRequeueWhenStopped(job, c.atMs());
      return ControlResult.OK;
    }
    boolean failed = c.exitCode() != 0 || c.reason() != null;
    if (failed && NODE_UNHEALTHY.equals(c.reason())) {
      // The node refused the task (its health check failed): not the job's fault.
      requeue(
          job, c.atMs(), c.atMs(), "node " + c.node() + " is unhealthy: " + c.message(), c.node());
    } else if (failed && !"KILLED".equals(c.reason()) && job.restarts < job.request.maxRestarts()) {
      job.restarts++;
      job.failedOn = withNode(job.failedOn, c.node());
      requeue(
          job,
          c.atMs(),
          c.atMs(),
          failureMessage(c, job) + "; restart " + job.restarts + " of " + job.request.maxRestarts(),
          c.node());
    } else if (failed) {
      end(job, JobState.FAILED, c.atMs(), c.exitCode(), failureMessage(c, job));
      holdUntilStopped(job, c.atMs());
    } else if (!job.taskExits.contains(null)) {
      finishInStore(job, c.atMs());
      end(job, JobState.SUCCEEDED, c.atMs(), 0, "all " + job.taskExits.size() + " tasks exited 0");
      // It failed on some nodes and succeeded elsewhere: evidence against those nodes.
      for (String failedNode : job.failedOn) {
        if (!job.runsOn(failedNode) && nodes.containsKey(failedNode)) {
          blame(nodes.get(failedNode), job, c.atMs());
        }
      }
    }
    return ControlResult.OK;
  }

  private static List<String> withNode(List<String> nodeList, String node) {
    if (nodeList.contains(node)) {
      return nodeList;
    }
    var more = new ArrayList<>(nodeList);
    more.add(node);
    return List.copyOf(more);
  }

  private static String failureMessage(TaskEnded c, JobRecord job) {
    String where = "task " + c.task() + " on node " + c.node();
    if ("TIME_LIMIT".equals(c.reason())) {
      return "time limit of " + job.request.timeLimitSec() + "s reached (" + where + ")";
    }
    if ("LAUNCH_FAILED".equals(c.reason())) {
      return "launch failed on node " + c.node() + ": " + c.message();
    }
    if ("OUTPUT_LIMIT".equals(c.reason())) {
      return where + " was stopped: its output passed the agent's limit";
    }
    if ("KILLED".equals(c.reason())) {
      return where + " was killed" + (c.message() == null ? "" : ": " + c.message());
    }
    return where + " exited with code " + c.exitCode();
  }

  private ControlResult register(RegisterNode c) {
    Registration r = c.registration();
    NodeRecord node = nodes.computeIfAbsent(r.node(), NodeRecord::new);
    // Tasks that ran there under the previous epoch died with that agent (a restarted agent
    // kills its orphans before it registers): requeue their jobs, and let ended gangs free
    // their GPUs once their other tasks have stopped.
    String why = "node " + r.node() + " re-registered (agent restarted)";
    loseTasksOn(r.node(), c.atMs(), c.atMs(), why);
    if (node.registration != null && !sameResources(node.registration, r)) {
      // The node came back with other GPUs, CPUs or memory: the placements there no longer
      // describe it, so gangs still holding GPUs there let go of all of them now (their tasks
      // elsewhere are killed, as for any ended job).
      for (JobRecord job : jobsHoldingGpusOn(r.node())) {
        for (int t = 0; t < job.taskExits.size(); t++) {
          if (job.taskExits.get(t) == null) {
            job.taskExits.set(t, LOST_EXIT_CODE);
          }
        }
        if (job.releasing) {
          holdUntilStopped(job, c.atMs());
        } else {
          completeRequeueWhenStopped(job, c.atMs());
        }
      }
    }
    node.registration = r;
    node.epoch = nextEpoch++;
    node.registeredMs = c.atMs();
    if (node.state == NodeState.DOWN) {
      node.state = NodeState.UP;
      node.reason = null;
    }
    rebuildStore();
    return ControlResult.ok(List.of(node.epoch));
  }

  private static boolean sameResources(Registration a, Registration b) {
    return a.gpus().equals(b.gpus()) && a.cpus() == b.cpus() && a.memoryBytes() == b.memoryBytes();
  }

  private ControlResult nodeDown(NodeDown c) {
    NodeRecord node = nodes.get(c.node());
    if (node == null) {
      return ControlResult.notFound("no node " + c.node());
    }
    if (node.epoch != c.epoch() || node.state == NodeState.DOWN) {
      return ControlResult.conflict("node " + c.node() + " re-registered or is already down");
    }
    node.state = NodeState.DOWN;
    node.reason = c.reason();
    node.epoch = nextEpoch++; // fences the lost agent: it must register again
    mustApply(new Command.CordonNode(sec(c.atMs()), c.node(), true));
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
    for (JobRecord job : jobsHoldingGpusOn(nodeName)) {
      for (TaskPlacement t : job.placement) {
        if (t.node().equals(nodeName) && job.taskExits.get(t.task()) == null) {
          job.taskExits.set(t.task(), LOST_EXIT_CODE);
        }
      }
      if (job.releasing) {
        holdUntilStopped(job, atMs);
      } else if (job.requeueing) {
        job.nextEligibleMs = Math.max(job.nextEligibleMs, safeAfterMs);
        job.nextAvoidNodes = avoiding(job, job.nextAvoidNodes, nodeName);
        completeRequeueWhenStopped(job, atMs);
      } else if (job.state == JobState.RUNNING) {
        requeue(job, atMs, safeAfterMs, why, nodeName);
      }
    }
  }

  /**
   * Starts a requeue: the job's tasks are stopped (the reconciler kills them), and once all have
   * stopped it goes back to PENDING, eligible after the backoff and {@code safeAfterMs}, away from
   * {@code failedNode}.
   */
  private void requeue(JobRecord job, long atMs, long safeAfterMs, String why, String failedNode) {
    job.requeueing = true;
    job.requeues++;
    job.message = "requeued: " + why;
    job.nextEligibleMs = Math.max(safeAfterMs, atMs + backoffMs(job.id, job.requeues));
    job.nextAvoidNodes =
        failedNode == null ? job.avoidNodes : avoiding(job, job.avoidNodes, failedNode);
    completeRequeueWhenStopped(job, atMs);
  }

  private void completeRequeueWhenStopped(JobRecord job, long atMs) {
    if (job.taskExits.contains(null)) {
      return;
    }
    finishInStore(job, atMs);
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
    job.queuedSeq = nextQueueSeq++;
    enqueue(job);
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
  private List<String> avoiding(JobRecord job, List<String> avoid, String node) {
    if (avoid.contains(node) || job.request.excludeNodes().contains(node)) {
      return avoid;
    }
    long usable =
        nodes.values().stream()
            .filter(
                n ->
                    n.registration != null
                        && !n.name.equals(node)
                        && !avoid.contains(n.name)
                        && !job.request.excludeNodes().contains(n.name))
            .count();
    if (usable < job.request.tasks()) {
      return avoid;
    }
    var more = new java.util.TreeSet<>(avoid);
    more.add(node);
    return List.copyOf(more);
  }

  /**
   * Records that {@code job} failed on {@code node} and then succeeded on other nodes: evidence
   * against the node rather than the job. (A job that fails everywhere blames no node, so a buggy
   * job or array cannot drain a cluster.) {@value #SUSPECT_JOBS} different jobs doing so within an
   * hour make the node suspect: it is drained (running jobs finish), with the jobs named, until an
   * admin resumes it.
   */
  private void blame(NodeRecord node, JobRecord job, long atMs) {
    node.failures.removeIf(f -> f[0] < atMs - SUSPECT_WINDOW_MS);
    node.failures.add(new long[] {atMs, job.id});
    if (node.failures.size() > 64) {
      node.failures.removeFirst();
    }
    var jobsFailed = new java.util.TreeSet<Long>();
    for (long[] f : node.failures) {
      jobsFailed.add(f[1]);
    }
    if (node.state != NodeState.UP || jobsFailed.size() < SUSPECT_JOBS) {
      return;
    }
    node.state = NodeState.DRAINED;
    node.reason =
        "suspect: jobs "
            + jobsFailed
            + " failed here and then succeeded on other nodes"
            + " within an hour";
    mustApply(new Command.CordonNode(sec(atMs), node.name, true));
  }

  private ControlResult drain(DrainNode c) {
    NodeRecord node = nodes.get(c.node());
    if (node == null) {
      return ControlResult.notFound("no node " + c.node());
    }
    if (node.state == NodeState.UP) {
      mustApply(new Command.CordonNode(sec(c.atMs()), c.node(), true));
    }
    if (node.state != NodeState.DOWN) {
      node.state = NodeState.DRAINED;
    }
    node.reason = c.reason() == null || c.reason().isBlank() ? "drained by an admin" : c.reason();
    if (c.requeue()) {
      for (JobRecord job : jobsHoldingGpusOn(c.node())) {
        if (job.state == JobState.RUNNING && !job.requeueing) {
          requeue(
              job, c.atMs(), c.atMs(), "node " + c.node() + " drained: " + node.reason, c.node());
        }
      }
    }
    return ControlResult.OK;
  }

  private ControlResult resume(ResumeNode c) {
    NodeRecord node = nodes.get(c.node());
    if (node == null) {
      return ControlResult.notFound("no node " + c.node());
    }
    if (node.state == NodeState.DRAINED) {
      node.state = NodeState.UP;
      node.reason = null;
      node.failures.clear();
      mustApply(new Command.CordonNode(sec(c.atMs()), c.node(), false));
    }
    return ControlResult.OK;
  }

  private ControlResult addToken(AddToken c) {
    tokens.putIfAbsent(c.token().sha256(), c.token());
    return ControlResult.OK;
  }

  /**
   * For a job that just ended, or one already releasing: keeps its GPUs while any task has not
   * reported its end, and frees them once all have.
   */
  private void holdUntilStopped(JobRecord job, long atMs) {
    if (job.taskExits.contains(null)) {
      job.releasing = true;
      releasing.put(job.id, job);
    } else {
      job.releasing = false;
      releasing.remove(job.id);
      finishInStore(job, atMs);
    }
  }

  private void end(JobRecord job, JobState state, long atMs, Integer exitCode, String message) {
    job.requeueing = false;
    job.preemptedBy = 0;
    job.state = state;
    job.endMs = atMs;
    job.exitCode = exitCode;
    job.message = message;
    active.remove(job.id);
    changed.add(job.id);
    releaseArraySlot(job);
  }

  private void indexHolding(JobRecord job) {
    for (TaskPlacement t : job.placement) {
      holdingByNode.computeIfAbsent(t.node(), n -> new java.util.TreeSet<>()).add(job.id);
    }
  }

  private void unindexHolding(JobRecord job) {
    for (TaskPlacement t : job.placement) {
      var ids = holdingByNode.get(t.node());
      if (ids != null) {
        ids.remove(job.id);
        if (ids.isEmpty()) {
          holdingByNode.remove(t.node());
        }
      }
    }
  }

  private void finishInStore(JobRecord job, long atMs) {
    unindexHolding(job);
    mustApply(new Command.FinishJob(sec(atMs), JobId.of(job.id), job.exitCode == null ? 0 : 1));
  }

  /** Puts a pending job into the store, or aside when no registered node could hold it. */
  private void enqueue(JobRecord job) {
    Job core = toCore(job);
    var spec = core.spec();
    if (store == null
        || !store.cluster().canEverHold(spec.gang(), spec.gpuModel(), spec.excludedNodes())) {
      unplaceable.put(job.id, job);
      return;
    }
    mustApply(new Command.SubmitJob(sec(job.submitMs), core));
  }

  /** The store from the records: running jobs first (with their placements), then pending. */
  private void rebuildStore() {
    var specs = new ArrayList<NodeSpec>();
    for (NodeRecord n : nodes.values()) {
      if (n.registration != null) {
        specs.add(toNodeSpec(n.registration));
      }
    }
    unplaceable.clear();
    holdingByNode.clear();
    waits.clear();
    throttles.clear();
    var queued = queuedAfterRebuild();
    List<JobRecord> holding = jobsHoldingGpus();
    holding.forEach(this::indexHolding);
    if (specs.isEmpty()) {
      store = null;
      if (!holding.isEmpty()) {
        throw new IllegalStateException("jobs hold GPUs, but no node is registered");
      }
      queued.forEach(j -> unplaceable.put(j.id, j));
      return;
    }
    store = new ClusterStore(Cluster.of(specs));
    for (JobRecord job : holding) {
      mustApply(new Command.SubmitJob(sec(job.submitMs), toCore(job)));
      Placement placement = toPlacement(job.placement);
      if (placement == null) {
        throw new IllegalStateException("job " + job.id + " runs on an unknown node");
      }
      mustApply(new Command.StartJob(sec(job.startMs), JobId.of(job.id), placement));
    }
    for (NodeRecord n : nodes.values()) {
      if (n.state != NodeState.UP && n.registration != null) {
        mustApply(new Command.CordonNode(0, n.name, true));
      }
    }
    queued.sort(
        java.util.Comparator.comparingLong((JobRecord j) -> j.queuedSeq)
            .thenComparingLong(j -> j.id));
    queued.forEach(this::enqueue);
  }

  /**
   * For a rebuild: the pending jobs that belong in the queue, after setting aside those whose
   * dependencies do not hold, and array elements beyond their array's limit (the lowest task ids
   * are admitted first, as they were live).
   */
  private List<JobRecord> queuedAfterRebuild() {
    for (JobRecord job : active.values()) {
      if (job.array != null && job.array.limit() > 0 && job.state == JobState.RUNNING) {
        throttles.computeIfAbsent(job.array.arrayJobId(), k -> new Throttle()).admitted.add(job.id);
      }
    }
    var queued = new ArrayList<JobRecord>();
    for (JobRecord job : active.values()) {
      if (job.state != JobState.PENDING) {
        continue;
      }
      // A consistent state holds no job whose dependency can never hold (it was cancelled), so
      // anything but HOLDS waits.
      if (job.request.dependency() != null
          && waits.open(job, true).verdict() != DependencyWaits.Verdict.HOLDS) {
        continue;
      }
      ArrayElement a = job.array;
      if (a != null && a.limit() > 0) {
        var t = throttles.computeIfAbsent(a.arrayJobId(), k -> new Throttle());
        if (t.admitted.size() >= a.limit()) {
          t.held.put(job.id, job);
          continue;
        }
        t.admitted.add(job.id);
      }
      queued.add(job);
    }
    return queued;
  }

  private void mustApply(Command command) {
    var applied = Reducer.apply(store, command);
    if (!applied.isAccepted()) {
      throw new IllegalStateException("state and store disagree: " + command + ": " + applied);
    }
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

  /** Core placement from named tasks; null when a node is unknown or used twice. */
  private Placement toPlacement(List<TaskPlacement> tasks) {
    var cluster = store.cluster();
    var byNode = new TreeMap<Integer, Long>();
    for (TaskPlacement t : tasks) {
      var index = cluster.indexOf(t.node());
      if (index.isEmpty() || byNode.containsKey(index.get())) {
        return null;
      }
      long mask = 0;
      for (int g : t.gpus()) {
        if (g < 0 || g >= cluster.gpuCount(index.get()) || (mask & (1L << g)) != 0) {
          return null;
        }
        mask |= 1L << g;
      }
      byNode.put(index.get(), mask);
    }
    int n = byNode.size();
    int[] nodeIdx = new int[n];
    int[] taskCounts = new int[n];
    long[] masks = new long[n];
    int i = 0;
    for (var e : byNode.entrySet()) {
      nodeIdx[i] = e.getKey();
      taskCounts[i] = 1;
      masks[i] = e.getValue();
      i++;
    }
    return Placement.adopt(nodeIdx, taskCounts, masks);
  }

  /** The core's view of a job: one task per node, each with its GPUs, CPUs and memory. */
  public static Job toCore(JobRecord job) {
    var spec = spec(job.request, job.avoidNodes);
    var core = new Job(JobId.of(job.id), spec, sec(job.submitMs));
    // Rounded up: a job held until 12.3 s must not start at 12 s.
    long eligibleSec = Math.floorDiv(job.eligibleMs + 999, 1000);
    return eligibleSec > core.submitSec() ? core.withEligibleSec(eligibleSec) : core;
  }

  /** The core's spec of a request, kept away from {@code avoidNodes} too. */
  public static JobSpec spec(JobRequest r, List<String> avoidNodes) {
    var shape = new TaskShape(r.gpusPerTask(), r.cpus(), r.memoryMb() * MIB);
    var gang = new GangSpec(r.tasks(), shape, true);
    // A GPU model binds only tasks that take GPUs (as in the store and the placer): a CPU-only
    // job that names one may run on any node, so a rebuild must not find it unplaceable.
    String model = r.gpusPerTask() == 0 ? "" : r.gpuModel();
    java.util.Set<String> excluded =
        avoidNodes.isEmpty() && r.excludeNodes().isEmpty()
            ? java.util.Set.of()
            : new java.util.TreeSet<>(r.excludeNodes());
    if (!avoidNodes.isEmpty()) {
      excluded.addAll(avoidNodes);
    }
    return new JobSpec(
        r.user(),
        r.queue(),
        r.priority(),
        gang,
        r.timeLimitSec(),
        model,
        excluded,
        r.account(),
        r.priorityClass());
  }

  static NodeSpec toNodeSpec(Registration r) {
    int gpus = r.gpus().size();
    String model = gpus == 0 ? "" : r.gpus().get(0).model();
    long gpuMemory = gpus == 0 ? 0 : r.gpus().get(0).memoryBytes();
    int domain =
        r.nvlinkDomainSize() > 0 && gpus % r.nvlinkDomainSize() == 0
            ? r.nvlinkDomainSize()
            : Math.max(gpus, gpus == 0 ? 0 : 1);
    return new NodeSpec(
        r.node(),
        model,
        gpus,
        gpuMemory,
        r.cpus(),
        r.memoryBytes(),
        r.labels() == null ? java.util.Map.of() : r.labels(),
        r.zone(),
        r.block(),
        r.rack(),
        domain);
  }

  static long sec(long ms) {
    return Math.floorDiv(ms, 1000);
  }

  // --- reads (callers hold the read lock) ---

  public long version() {
    return version;
  }

  /** The core's store of active jobs on registered nodes; null while no node is registered. */
  public ClusterStore store() {
    return store;
  }

  public Optional<JobRecord> job(long id) {
    return Optional.ofNullable(jobs.get(id));
  }

  /** Every job, by id. */
  public Collection<JobRecord> jobs() {
    return Collections.unmodifiableCollection(jobs.values());
  }

  /** Jobs holding GPUs: running, and ended ones whose tasks are still stopping; by id. */
  public List<JobRecord> jobsHoldingGpus() {
    var out = new ArrayList<JobRecord>();
    for (JobRecord j : active.values()) {
      if (j.state == JobState.RUNNING) {
        out.add(j);
      }
    }
    out.addAll(releasing.values());
    out.sort(java.util.Comparator.comparingLong(j -> j.id));
    return out;
  }

  /** Jobs holding GPUs on {@code node} (running, or ended and still stopping), by id. */
  public List<JobRecord> jobsHoldingGpusOn(String node) {
    var ids = holdingByNode.get(node);
    if (ids == null) {
      return List.of();
    }
    var out = new ArrayList<JobRecord>(ids.size());
    for (long id : ids) {
      out.add(jobs.get(id));
    }
    return out;
  }

  /** Pending and running jobs, by id. */
  public Collection<JobRecord> activeJobs() {
    return Collections.unmodifiableCollection(active.values());
  }

  public boolean isUnplaceable(long jobId) {
    return unplaceable.containsKey(jobId);
  }

  /** Whether a pending job waits for its dependencies (and is not in the store). */
  public boolean isWaitingOnDependency(long jobId) {
    return waits.contains(jobId);
  }

  /** What a pending job's dependency waits for, in words; empty when it does not wait. */
  public Optional<String> dependencyDetail(long jobId) {
    return waits.detail(jobId);
  }

  /** Whether a pending array element waits for its array's limit (and is not in the store). */
  public boolean isHeldByArrayLimit(long jobId) {
    var j = jobs.get(jobId);
    return j != null && isHeld(jobId, j.array);
  }

  /** An array's elements running or queued, against its limit; 0 for an array without one. */
  public int arrayAdmitted(long arrayJobId) {
    var t = throttles.get(arrayJobId);
    return t == null ? 0 : t.admitted.size();
  }

  public Collection<NodeRecord> nodes() {
    return Collections.unmodifiableCollection(nodes.values());
  }

  public Optional<NodeRecord> node(String name) {
    return Optional.ofNullable(nodes.get(name));
  }

  public Optional<TokenRecord> token(String sha256) {
    return Optional.ofNullable(tokens.get(sha256));
  }

  public int tokenCount() {
    return tokens.size();
  }

  public long nextJobId() {
    return nextJobId;
  }

  // --- snapshots ---

  /**
   * A copy of the records, for a snapshot: taken under the read lock (a few milliseconds for
   * 100,000 jobs), serialized after it is released, so writes are not held up by the encoding.
   * Finished jobs never change again and are shared; active ones are copied.
   */
  public StateImage image() {
    var jobCopies = new ArrayList<JobRecord>(jobs.size());
    for (JobRecord j : jobs.values()) {
      jobCopies.add(j.isActive() || j.releasing ? j.copy() : j);
    }
    var nodeCopies = new ArrayList<NodeRecord>(nodes.size());
    for (NodeRecord n : nodes.values()) {
      nodeCopies.add(n.copy());
    }
    return new StateImage(
        StateImage.VERSION,
        nextJobId,
        nextEpoch,
        jobCopies,
        nodeCopies,
        List.copyOf(tokens.values()));
  }

  public static ControlState of(StateImage image) {
    if (image.version() != StateImage.VERSION) {
      throw new IllegalArgumentException("snapshot version " + image.version() + " is unknown");
    }
    var state = new ControlState();
    state.nextJobId = image.nextJobId();
    state.nextEpoch = image.nextEpoch();
    for (JobRecord job : image.jobs()) {
      state.nextQueueSeq = Math.max(state.nextQueueSeq, job.queuedSeq + 1);
      state.jobs.put(job.id, job);
      if (job.isActive()) {
        state.active.put(job.id, job);
      }
      if (job.releasing) {
        state.releasing.put(job.id, job);
      }
    }
    for (NodeRecord node : image.nodes()) {
      state.nodes.put(node.name, node);
    }
    for (TokenRecord token : image.tokens()) {
      state.tokens.put(token.sha256(), token);
    }
    state.rebuildStore();
    return state;
  }
}
