package io.kairos.control.state;

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
import io.kairos.protocol.NodeState;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.agent.Registration;
import io.kairos.protocol.names.GpuModels;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The controller's records in the core's terms. Owns the core's {@link ClusterStore} of the queued
 * and GPU-holding jobs on the registered nodes, and is the one place that maps records to core
 * types ({@link #toCore}, {@link #spec}, {@link #toNodeSpec}, {@link #toPlacement}) and changes the
 * store, always through the core's {@link Reducer} with times from {@link CoreTime}.
 *
 * <p>GPU models are matched as Slurm sites write them: a job's model is mapped to the name the
 * nodes report by its key ({@link #coreModel}), so {@code a100} runs on "NVIDIA A100-SXM4-80GB".
 *
 * <p>The store is derived: {@link #rebuild} makes it anew from the records when the set of nodes
 * changes (and after a snapshot is loaded); otherwise each change to the records that the store
 * must see is applied here as a core command. A stopping job holds in the store only the nodes
 * whose tasks have not confirmed their end ({@link #releaseStopped}), in a rebuilt store too. A
 * command the store refuses means the two disagree, which is a bug: it throws.
 */
final class CoreBridge {
  private static final long MIB = 1L << 20;

  /** Null while no node is registered. */
  private ClusterStore store;

  /**
   * Registered nodes whose agent is not root, to the one Unix account whose jobs it runs (its
   * registration's {@code runsOnlyAs}); rebuilt with the store. A pending job is kept off the nodes
   * here that run another account than its own, like the nodes it excludes.
   */
  private final TreeMap<String, String> runsOnlyAs = new TreeMap<>();

  /**
   * The GPU model names the registered nodes report, by their key ({@link GpuModels#key}); rebuilt
   * with the store. A job's model is matched to these as Slurm sites write types ({@link
   * #coreModel}).
   */
  private final TreeMap<String, TreeSet<String>> modelsByKey = new TreeMap<>();

  ClusterStore store() {
    return store;
  }

  boolean hasStore() {
    return store != null;
  }

  /**
   * Queues a pending job in the store, unless no registered node could ever hold it (or none is
   * registered): then the store is left alone and the answer is false.
   */
  boolean queue(JobRecord job) {
    Job core = toCore(job, pinned(job, otherAccountNodes(job)), coreModel(job.request.gpuModel()));
    var spec = core.spec();
    if (store == null
        || !store.cluster().canEverHold(spec.gang(), spec.gpuModel(), spec.excludedNodes())) {
      return false;
    }
    mustApply(new Command.SubmitJob(CoreTime.sec(job.submitMs), core));
    return true;
  }

  /**
   * {@code excluded} and, for a job being moved ({@link JobRecord#migrationTarget}), every node but
   * its targets: it restarts there. A target that is no longer registered lifts the pin (the job
   * may then start anywhere rather than wait for a node that is gone).
   */
  private Set<String> pinned(JobRecord job, Set<String> excluded) {
    if (job.migrationTarget.isEmpty() || store == null) {
      return excluded;
    }
    var cluster = store.cluster();
    for (String target : job.migrationTarget) {
      if (cluster.indexOf(target).isEmpty()) {
        return excluded;
      }
    }
    var out = new TreeSet<>(excluded);
    for (int i = 0; i < cluster.nodeCount(); i++) {
      String name = cluster.node(i).name();
      if (!job.migrationTarget.contains(name)) {
        out.add(name);
      }
    }
    return out;
  }

  /**
   * Starts a queued job on {@code tasks} at {@code atMs}, if the store accepts it: false when no
   * node is registered, a task names an unknown node or GPU, or the GPUs are no longer free (a
   * stale decision: the scheduler replans).
   */
  boolean start(JobRecord job, List<TaskPlacement> tasks, long atMs) {
    if (store == null) {
      return false;
    }
    Placement placement = toPlacement(tasks);
    if (placement == null) {
      return false;
    }
    return Reducer.apply(
            store, new Command.StartJob(CoreTime.sec(atMs), JobId.of(job.id), placement))
        .isAccepted();
  }

  /**
   * An elastic job now holds {@code tasks} (its live tasks, in rank order: whole nodes added or let
   * go), if the store accepts it: false when a node is unknown or a new node's GPUs are no longer
   * free. The first task's node stays the job's anchor (its rendezvous) wherever the new nodes are.
   */
  boolean resize(JobRecord job, List<TaskPlacement> tasks, long atMs) {
    if (store == null || tasks.isEmpty()) {
      return false;
    }
    Placement placement = toPlacement(tasks);
    var anchor = store.cluster().indexOf(tasks.getFirst().node());
    return placement != null
        && anchor.isPresent()
        && Reducer.apply(
                store,
                new Command.ResizeJob(
                    CoreTime.sec(atMs), JobId.of(job.id), placement, anchor.get()))
            .isAccepted();
  }

  /** A queued job leaves the store (cancelled before it started). */
  void cancelQueued(JobRecord job, long atMs) {
    mustApply(new Command.CancelJob(CoreTime.sec(atMs), JobId.of(job.id), "cancelled"));
  }

  /** A job's GPUs are free again: its tasks have all stopped. */
  void finish(JobRecord job, long atMs) {
    mustApply(
        new Command.FinishJob(CoreTime.sec(atMs), JobId.of(job.id), job.exitCode == null ? 0 : 1));
  }

  /**
   * Frees, node by node, what a stopping job holds where its tasks have confirmed their end ({@link
   * JobRecord#releasedTask}); the last node it holds is freed with the job ({@link #finish}).
   * O(tasks).
   */
  void releaseStopped(JobRecord job, long atMs) {
    if (store == null || !(job.releasing || job.requeueing)) {
      return;
    }
    var id = JobId.of(job.id);
    var running = store.running(id).orElse(null);
    if (running == null) {
      return;
    }
    int held = running.placement().nodeCount();
    for (int t = 0; t < job.placement.size() && held > 1; t++) {
      if (!job.releasedTask(t)) {
        continue;
      }
      String node = job.placement.get(t).node();
      int index = store.cluster().indexOf(node).orElse(-1);
      if (index >= 0 && running.placement().slotOf(index) >= 0) {
        mustApply(new Command.ReleaseTasks(CoreTime.sec(atMs), id, node));
        running = store.running(id).orElseThrow();
        held--;
      }
    }
  }

  /** Takes GPU {@code gpu} of {@code node} out of service ({@code inService} false) or back. */
  void gpuService(String node, int gpu, boolean inService, long atMs) {
    if (store != null && store.cluster().indexOf(node).isPresent()) {
      mustApply(new Command.GpuService(CoreTime.sec(atMs), node, gpu, inService));
    }
  }

  /** Stops ({@code true}) or resumes placing new jobs on {@code node}. */
  void cordon(String node, long atMs, boolean cordoned) {
    mustApply(new Command.CordonNode(CoreTime.sec(atMs), node, cordoned));
  }

  /**
   * A new store from the records: the registered nodes, the jobs holding GPUs with their
   * placements, the nodes not UP cordoned and the GPUs out of service taken out. Pending jobs are
   * queued afterwards, by the caller, in their queue order. No registered node means no store.
   *
   * @param holding the jobs holding GPUs, by id
   */
  void rebuild(Collection<NodeRecord> nodes, List<JobRecord> holding) {
    var specs = new ArrayList<NodeSpec>();
    runsOnlyAs.clear();
    modelsByKey.clear();
    for (NodeRecord n : nodes) {
      if (n.registration != null) {
        NodeSpec spec = toNodeSpec(n.registration);
        specs.add(spec);
        if (!spec.gpuModel().isEmpty()) {
          modelsByKey
              .computeIfAbsent(GpuModels.key(spec.gpuModel()), k -> new TreeSet<>())
              .add(spec.gpuModel());
        }
        if (n.registration.runsOnlyAs() != null) {
          runsOnlyAs.put(n.name, n.registration.runsOnlyAs());
        }
      }
    }
    if (specs.isEmpty()) {
      store = null;
      if (!holding.isEmpty()) {
        throw new IllegalStateException("jobs hold GPUs, but no node is registered");
      }
      return;
    }
    var old = store;
    store = new ClusterStore(Cluster.of(specs));
    if (old != null) {
      store.adoptHistory(old); // start forecasts keep what they learnt of users' run times
    }
    for (JobRecord job : holding) {
      // Placed already: its account is no reason to refuse the nodes it runs on, and its model is
      // that of the nodes it runs on (the names registered since do not change that).
      String model = job.placement.isEmpty() ? "" : modelOf(specs, job.placement.get(0).node());
      Job core = toCore(job, Set.of(), job.request.gpuModel().isEmpty() ? "" : model);
      List<TaskPlacement> held = heldPart(job);
      Placement placement = toPlacement(held);
      if (placement == null) {
        throw new IllegalStateException("job " + job.id + " runs on an unknown node");
      }
      long startSec = CoreTime.sec(job.startMs);
      if (held.size() == job.placement.size() || !(job.releasing || job.requeueing)) {
        mustApply(new Command.SubmitJob(CoreTime.sec(job.submitMs), core));
        mustApply(new Command.StartJob(startSec, JobId.of(job.id), placement));
        if (job.request.isElastic() && !held.isEmpty()) {
          // Its first task may not be on its lowest node (it grew below it): name it again.
          mustApply(
              new Command.ResizeJob(
                  startSec,
                  JobId.of(job.id),
                  placement,
                  store.cluster().indexOf(held.getFirst().node()).orElseThrow()));
        }
      } else {
        // Stopping, some nodes let go: only the rest is held (it may not fit the cluster now). An
        // elastic job that is not stopping starts on its live nodes (those that left are free).
        mustApply(new Command.ResumeStopping(startSec, core, placement));
      }
    }
    for (NodeRecord n : nodes) {
      if (n.state != NodeState.UP && n.registration != null) {
        mustApply(new Command.CordonNode(0, n.name, true));
      }
      if (n.registration != null) {
        for (int gpu : n.gpusOutOfService.keySet()) {
          mustApply(new Command.GpuService(0, n.name, gpu, false));
        }
      }
    }
  }

  /** The tasks of a GPU-holding job that still hold their GPUs (all of a running job's). */
  private static List<TaskPlacement> heldPart(JobRecord job) {
    var held = new ArrayList<TaskPlacement>(job.placement.size());
    for (int t = 0; t < job.placement.size(); t++) {
      if (!job.releasedTask(t)) {
        held.add(job.placement.get(t));
      }
    }
    return held;
  }

  private static String modelOf(List<NodeSpec> specs, String node) {
    for (NodeSpec spec : specs) {
      if (spec.name().equals(node)) {
        return spec.gpuModel();
      }
    }
    return "";
  }

  /**
   * The registered model name a job's GPU model means: the same name when a node reports it (as
   * before); else the one name whose key is the same ({@code a100} for "NVIDIA A100-SXM4-80GB");
   * else, when no node or several different names have that key, the name as asked (no node matches
   * it, and the job waits as one no node can hold).
   */
  String coreModel(String requested) {
    if (requested.isEmpty()) {
      return requested;
    }
    TreeSet<String> names = modelsByKey.get(GpuModels.key(requested));
    if (names == null || names.contains(requested) || names.size() != 1) {
      return requested;
    }
    return names.first();
  }

  private void mustApply(Command command) {
    var applied = Reducer.apply(store, command);
    if (!applied.isAccepted()) {
      throw new IllegalStateException("state and store disagree: " + command + ": " + applied);
    }
  }

  // --- records to core types ---

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

  /**
   * The registered nodes that cannot run {@code job}: their agent runs as another Unix account than
   * the job's. Empty on a cluster of root agents.
   */
  Set<String> otherAccountNodes(JobRecord job) {
    if (runsOnlyAs.isEmpty()) {
      return Set.of();
    }
    String account = job.request.unixAccount();
    var out = new TreeSet<String>();
    runsOnlyAs.forEach(
        (node, only) -> {
          if (!only.equals(account)) {
            out.add(node);
          }
        });
    return out;
  }

  /**
   * For a job held as unplaceable: when the nodes that run another account are what keeps it out
   * (some registered node could hold it without that), who they are, in words: "no node can run
   * jobs as bob: n1, n2 run as alice (not root) and run only alice's jobs".
   */
  Optional<String> accountBlock(JobRecord job, Collection<NodeRecord> nodes) {
    Set<String> others = otherAccountNodes(job);
    if (store == null || others.isEmpty()) {
      return Optional.empty();
    }
    var spec = spec(job.request, job.avoidNodes, Set.of(), coreModel(job.request.gpuModel()));
    if (!store.cluster().canEverHold(spec.gang(), spec.gpuModel(), spec.excludedNodes())) {
      return Optional.empty();
    }
    var byAccount = new TreeMap<String, List<String>>();
    for (String node : others) {
      byAccount.computeIfAbsent(runsOnlyAs.get(node), a -> new ArrayList<>()).add(node);
    }
    var parts = new ArrayList<String>();
    byAccount.forEach(
        (account, names) ->
            parts.add(
                String.join(", ", names)
                    + (names.size() == 1 ? " runs as " : " run as ")
                    + account
                    + " (not root) and "
                    + (names.size() == 1 ? "runs" : "run")
                    + " only "
                    + account
                    + "'s jobs"));
    return Optional.of(
        "no node can run jobs as "
            + job.request.unixAccount()
            + ": "
            + String.join("; ", parts)
            + (nodes.size() > others.size() ? "; the other nodes cannot hold it" : ""));
  }

  /**
   * The core's view of a job: one task per node, each with its GPUs, CPUs and memory, kept off
   * {@code alsoExcluded} too.
   */
  static Job toCore(JobRecord job, Set<String> alsoExcluded, String model) {
    var spec = spec(job.request, job.avoidNodes, alsoExcluded, model);
    var core = new Job(JobId.of(job.id), spec, CoreTime.sec(job.submitMs));
    long eligibleSec = CoreTime.notBeforeSec(job.eligibleMs);
    return eligibleSec > core.submitSec() ? core.withEligibleSec(eligibleSec) : core;
  }

  /** The core's spec of a request, kept away from {@code avoidNodes} too. */
  static JobSpec spec(JobRequest r, List<String> avoidNodes) {
    return spec(r, avoidNodes, Set.of());
  }

  /** The core's spec of a request, kept away from {@code avoidNodes} and {@code alsoExcluded}. */
  static JobSpec spec(JobRequest r, List<String> avoidNodes, Set<String> alsoExcluded) {
    return spec(r, avoidNodes, alsoExcluded, r.gpuModel());
  }

  /** As {@link #spec(JobRequest, List, Set)}, asking for GPU model {@code gpuModel}. */
  static JobSpec spec(
      JobRequest r, List<String> avoidNodes, Set<String> alsoExcluded, String gpuModel) {
    // Several processes per node (--ntasks-per-node): cpus is per process, so the node's share
    // is the most processes any node runs times it; memory stays per node, as Slurm's --mem.
    int cpus = r.layout() == null ? r.cpus() : r.cpus() * Collections.max(r.tasksPerNode());
    var shape = new TaskShape(r.gpusPerTask(), cpus, r.memoryMb() * MIB);
    var gang = new GangSpec(r.tasks(), shape, true, r.maxTasks());
    // A GPU model binds only tasks that take GPUs (as in the store and the placer): a CPU-only
    // job that names one may run on any node, so a rebuild must not find it unplaceable.
    String model = r.gpusPerTask() == 0 ? "" : gpuModel;
    Set<String> excluded =
        avoidNodes.isEmpty() && r.excludeNodes().isEmpty() && alsoExcluded.isEmpty()
            ? Set.of()
            : new TreeSet<>(r.excludeNodes());
    if (!avoidNodes.isEmpty()) {
      excluded.addAll(avoidNodes);
    }
    if (!alsoExcluded.isEmpty()) {
      excluded.addAll(alsoExcluded);
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
        r.labels() == null ? Map.of() : r.labels(),
        r.zone(),
        r.block(),
        r.rack(),
        domain);
  }
}
