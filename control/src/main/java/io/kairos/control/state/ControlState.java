package io.kairos.control.state;

import io.kairos.control.state.ControlCommand.AddToken;
import io.kairos.control.state.ControlCommand.CancelJob;
import io.kairos.control.state.ControlCommand.DrainNode;
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

/**
 * The controller's replicated state and its deterministic transitions.
 *
 * <p>Holds every job (active and finished), every node and every token, plus the core's {@link
 * ClusterStore} for the active jobs on the registered nodes. The store is derived: it is rebuilt
 * from the records when the set of nodes changes (a registration), and otherwise kept in step
 * by applying core commands through the core's {@link Reducer}. So the store never disagrees
 * with the records, and a snapshot needs only the records.
 *
 * <p>Single writer (the Ratis apply thread), not thread-safe: {@code StateMachine} guards it
 * with a read-write lock. No clock, no I/O, no randomness; ids and epochs are counters in the
 * state, so every replica assigns the same ones.
 */
public final class ControlState {
  private static final long MIB = 1L << 20;

  private long nextJobId = 1;
  private long nextEpoch = 1;
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
  private long version;

  public ControlState() {
    rebuildStore();
  }

  /** Applies one command; a command whose preconditions fail changes nothing. */
  public ControlResult apply(ControlCommand command) {
    version++;
    return switch (command) {
      case SubmitJobs c -> submit(c);
      case CancelJob c -> cancel(c);
      case StartJobs c -> start(c);
      case TaskEnded c -> taskEnded(c);
      case RegisterNode c -> register(c);
      case DrainNode c -> drain(c);
      case ResumeNode c -> resume(c);
      case AddToken c -> addToken(c);
    };
  }

  private ControlResult submit(SubmitJobs c) {
    var ids = new ArrayList<Long>(c.jobs().size());
    for (JobRequest request : c.jobs()) {
      var job = new JobRecord(nextJobId++, request, c.atMs());
      jobs.put(job.id, job);
      active.put(job.id, job);
      enqueue(job);
      ids.add(job.id);
    }
    return ControlResult.ok(ids);
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
    if (!wasRunning && unplaceable.remove(job.id) == null) {
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
          || unplaceable.containsKey(job.id)) {
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
      started.add(job.id);
    }
    return ControlResult.ok(started);
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
    boolean failed = c.exitCode() != 0 || c.reason() != null;
    if (failed) {
      end(job, JobState.FAILED, c.atMs(), c.exitCode(), failureMessage(c, job));
      holdUntilStopped(job, c.atMs());
    } else if (!job.taskExits.contains(null)) {
      finishInStore(job, c.atMs());
      end(job, JobState.SUCCEEDED, c.atMs(), 0, "all " + job.taskExits.size() + " tasks exited 0");
    }
    return ControlResult.OK;
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
    // Jobs that ran on this node under its previous epoch died with that agent: requeue them.
    for (JobRecord job : List.copyOf(active.values())) {
      if (job.state == JobState.RUNNING && job.runsOn(r.node())) {
        requeue(job, "node " + r.node() + " re-registered (agent restarted)");
      }
    }
    // Tasks of ended jobs that were still stopping there died with that agent too. The job's
    // GPUs are freed as a whole (the store frees gangs, not single tasks): a task of it still
    // stopping on another node is killed there, as for any job that ended.
    for (JobRecord job : List.copyOf(releasing.values())) {
      if (job.runsOn(r.node())) {
        for (TaskPlacement t : job.placement) {
          if (job.taskExits.get(t.task()) == null) {
            job.taskExits.set(t.task(), -1);
          }
        }
        job.releasing = false;
        releasing.remove(job.id);
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

  private void requeue(JobRecord job, String why) {
    job.state = JobState.PENDING;
    job.requeues++;
    job.message = "requeued: " + why;
    job.placement = List.of();
    job.taskExits = new ArrayList<>();
  }

  private ControlResult drain(DrainNode c) {
    NodeRecord node = nodes.get(c.node());
    if (node == null) {
      return ControlResult.notFound("no node " + c.node());
    }
    node.state = NodeState.DRAINED;
    node.reason = c.reason() == null || c.reason().isBlank() ? "drained by an admin" : c.reason();
    mustApply(new Command.CordonNode(sec(c.atMs()), c.node(), true));
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
    job.state = state;
    job.endMs = atMs;
    job.exitCode = exitCode;
    job.message = message;
    active.remove(job.id);
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
      if (n.state != NodeState.DOWN && n.registration != null) {
        specs.add(toNodeSpec(n.registration));
      }
    }
    unplaceable.clear();
    holdingByNode.clear();
    List<JobRecord> holding = jobsHoldingGpus();
    holding.forEach(this::indexHolding);
    if (specs.isEmpty()) {
      store = null;
      if (!holding.isEmpty()) {
        throw new IllegalStateException("jobs hold GPUs, but no node is registered");
      }
      unplaceable.putAll(active);
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
      if (n.state == NodeState.DRAINED && n.registration != null) {
        mustApply(new Command.CordonNode(0, n.name, true));
      }
    }
    for (JobRecord job : active.values()) {
      if (job.state == JobState.PENDING) {
        enqueue(job);
      }
    }
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
    JobRequest r = job.request;
    var shape = new TaskShape(r.gpusPerTask(), r.cpus(), r.memoryMb() * MIB);
    var gang = new GangSpec(r.tasks(), shape, true);
    // A GPU model binds only tasks that take GPUs (as in the store and the placer): a CPU-only
    // job that names one may run on any node, so a rebuild must not find it unplaceable.
    String model = r.gpusPerTask() == 0 ? "" : r.gpuModel();
    var spec = new JobSpec(r.user(), r.queue(), r.priority(), gang, r.timeLimitSec(), model);
    return new Job(JobId.of(job.id), spec, sec(job.submitMs));
  }

  static NodeSpec toNodeSpec(Registration r) {
    int gpus = r.gpus().size();
    String model = gpus == 0 ? "" : r.gpus().get(0).model();
    long gpuMemory = gpus == 0 ? 0 : r.gpus().get(0).memoryBytes();
    int domain = r.nvlinkDomainSize() > 0 && gpus % r.nvlinkDomainSize() == 0
        ? r.nvlinkDomainSize()
        : Math.max(gpus, gpus == 0 ? 0 : 1);
    return new NodeSpec(
        r.node(), model, gpus, gpuMemory, r.cpus(), r.memoryBytes(),
        r.labels() == null ? java.util.Map.of() : r.labels(),
        r.zone(), r.block(), r.rack(), domain);
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
