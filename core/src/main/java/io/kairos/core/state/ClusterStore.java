package io.kairos.core.state;

import io.kairos.core.command.Applied;
import io.kairos.core.command.Applied.Refused;
import io.kairos.core.model.Cluster;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.Placement;
import io.kairos.core.model.RunningJob;
import io.kairos.core.model.TaskShape;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Optional;

/**
 * The authoritative, mutable cluster state: free GPUs, CPUs and memory per node, pending jobs in
 * arrival order, running jobs in start order.
 *
 * <p>Exactly one writer (the simulator's event loop, the controller's apply thread, a test
 * harness), and only through {@link Reducer}. Not thread-safe. Every mutator re-checks its
 * preconditions and refuses, changing nothing, when they do not hold: the scheduler may be
 * optimistic, the store is not.
 *
 * <p>A start is refused before the job's eligible time and on any node the job excludes, so the
 * store never holds a job that broke either (the invariant checker verifies it).
 *
 * <p>Free GPUs per node are a 64-bit mask (bit i set = GPU i free), so "no GPU is allocated to two
 * running tasks" is a mask intersection. A stopping job may let its GPUs go node by node as its
 * tasks confirm their end ({@link #releaseTasks}); a GPU out of service ({@link #gpuService}) stays
 * in the free mask once its job left, but no snapshot offers it.
 */
public final class ClusterStore {
  private final Cluster cluster;
  private final long[] freeMask;
  private final int[] freeCpus;
  private final long[] freeMemoryBytes;
  private final boolean[] cordoned;
  private int cordonedCount;
  // GPUs out of service per node (bit i set = GPU i unhealthy): never offered to a pass.
  private final long[] outOfService;
  private int nodesWithOutOfService;
  private long freeGpus;
  private final PendingTable pending = new PendingTable();
  private final LinkedHashMap<JobId, RunningJob> running = new LinkedHashMap<>();

  // Users' recent share of their limits, for start forecasts; per tenant key of the pending table
  // (its dense ids), the user's entry, so a snapshot copies shares without hashing.
  private RunHistory history = new RunHistory();
  private RunHistory.Entry[] tenantEntries = new RunHistory.Entry[16];
  private int knownTenants;

  public ClusterStore(Cluster cluster) {
    this.cluster = cluster;
    int n = cluster.nodeCount();
    freeMask = new long[n];
    freeCpus = new int[n];
    freeMemoryBytes = new long[n];
    cordoned = new boolean[n];
    outOfService = new long[n];
    for (int i = 0; i < n; i++) {
      freeMask[i] = fullMask(cluster.gpuCount(i));
      freeCpus[i] = cluster.cpuCount(i);
      freeMemoryBytes[i] = cluster.memoryBytes(i);
    }
    freeGpus = cluster.totalGpus();
  }

  static long fullMask(int gpus) {
    return gpus == 64 ? -1L : (1L << gpus) - 1;
  }

  public Cluster cluster() {
    return cluster;
  }

  Applied addPending(Job job, long atSec) {
    if (pending.contains(job.id()) || running.containsKey(job.id())) {
      return new Refused("job " + job.id() + " already exists");
    }
    var spec = job.spec();
    if (!cluster.canEverHold(spec.gang(), spec.gpuModel())) {
      return new Refused("job " + job.id() + " is larger than the cluster");
    }
    if (spec.hasExclusions()
        && !cluster.canEverHold(spec.gang(), spec.gpuModel(), spec.excludedNodes())) {
      return new Refused(
          "job "
              + job.id()
              + " does not fit the cluster without its excluded nodes "
              + spec.excludedNodes());
    }
    pending.add(job);
    knowTenants();
    return Applied.ACCEPTED;
  }

  /** Gives tenant keys the pending table interned since the last call their user's entry. */
  private void knowTenants() {
    int count = pending.tenantCount();
    if (count == knownTenants) {
      return;
    }
    if (count > tenantEntries.length) {
      tenantEntries =
          java.util.Arrays.copyOf(tenantEntries, Math.max(count, 2 * tenantEntries.length));
    }
    for (int t = knownTenants; t < count; t++) {
      tenantEntries[t] = history.of(pending.tenantKey(t).user());
    }
    knownTenants = count;
  }

  /**
   * Takes over the users' run history of {@code other} (a copy): for a store rebuilt from records,
   * so that start forecasts keep what the old store had learnt. Call before queueing jobs.
   */
  public void adoptHistory(ClusterStore other) {
    history = other.history.copy();
    for (int t = 0; t < knownTenants; t++) {
      tenantEntries[t] = history.of(pending.tenantKey(t).user());
    }
  }

  Applied start(JobId id, Placement placement, long atSec) {
    Job job = pending.get(id);
    if (job == null) {
      return new Refused("job " + id + " is not pending");
    }
    if (atSec < job.eligibleSec()) {
      return new Refused(
          "job " + id + " is held until t=" + job.eligibleSec() + ", cannot start at t=" + atSec);
    }
    var gang = job.spec().gang();
    int size = placement.totalTasks();
    if (size < gang.tasks() || size > gang.maxTasks()) {
      return new Refused(
          "job "
              + id
              + ": placement has "
              + size
              + " tasks, gang has "
              + (gang.isElastic() ? gang.tasks() + " to " + gang.maxTasks() : gang.tasks()));
    }
    for (int i = 0; i < placement.nodeCount(); i++) {
      String refusal = refuseSlot(job, placement, i);
      if (refusal != null) {
        return new Refused(refusal);
      }
    }
    for (int i = 0; i < placement.nodeCount(); i++) {
      take(gang.shape(), placement, i);
    }
    pending.remove(id);
    running.put(id, new RunningJob(job, placement, atSec));
    return Applied.ACCEPTED;
  }

  /**
   * Why slot {@code i} of {@code placement} cannot be taken for {@code job} now; null if it can.
   */
  private String refuseSlot(Job job, Placement placement, int i) {
    var id = job.id();
    var gang = job.spec().gang();
    var excluded = job.spec().excludedNodes();
    int gpusPerTask = gang.shape().gpus();
    int node = placement.node(i);
    int tasks = placement.tasksOn(i);
    long mask = placement.gpuMask(i);
    if (node < 0 || node >= cluster.nodeCount()) {
      return "job " + id + ": no node with index " + node;
    }
    if (cordoned[node]) {
      return "job " + id + ": node " + cluster.node(node).name() + " is cordoned";
    }
    if (!excluded.isEmpty() && excluded.contains(cluster.node(node).name())) {
      return "job " + id + ": node " + cluster.node(node).name() + " is excluded";
    }
    if (gang.distinctNodes() && tasks > 1) {
      return "job " + id + ": " + tasks + " tasks on one node, gang needs distinct";
    }
    if (Long.bitCount(mask) != tasks * gpusPerTask) {
      return "job " + id + ": node " + node + " mask does not match task GPUs";
    }
    if ((mask & ~freeMask[node]) != 0) {
      return "job " + id + ": GPUs on node " + node + " are no longer free";
    }
    if ((mask & outOfService[node]) != 0) {
      return "job " + id + ": a GPU on node " + node + " is out of service";
    }
    if (!job.spec().gpuModel().isEmpty()
        && gpusPerTask > 0
        && !job.spec().gpuModel().equals(cluster.gpuModel(node))) {
      return "job " + id + ": node " + node + " has another GPU model";
    }
    if ((long) tasks * gang.shape().cpus() > freeCpus[node]
        || (long) tasks * gang.shape().memoryBytes() > freeMemoryBytes[node]) {
      return "job " + id + ": node " + node + " lacks CPU or memory";
    }
    return null;
  }

  private void take(TaskShape shape, Placement placement, int i) {
    int node = placement.node(i);
    freeMask[node] &= ~placement.gpuMask(i);
    freeCpus[node] -= placement.tasksOn(i) * shape.cpus();
    freeMemoryBytes[node] -= placement.tasksOn(i) * shape.memoryBytes();
    freeGpus -= Long.bitCount(placement.gpuMask(i));
  }

  private void give(TaskShape shape, Placement placement, int i) {
    int node = placement.node(i);
    freeMask[node] |= placement.gpuMask(i);
    freeCpus[node] += placement.tasksOn(i) * shape.cpus();
    freeMemoryBytes[node] += placement.tasksOn(i) * shape.memoryBytes();
    freeGpus += Long.bitCount(placement.gpuMask(i));
  }

  /**
   * Resizes a running elastic job to {@code to} ({@link io.kairos.core.command.Command.ResizeJob}):
   * nodes it keeps must keep their GPUs, nodes it adds must be free as for a start, and the size
   * stays within the gang's range, and {@code anchor} (-1: the job's own) must stay. A stopping job
   * is not resized.
   */
  Applied resize(JobId id, Placement to, int anchor) {
    RunningJob job = running.get(id);
    if (job == null) {
      return new Refused("job " + id + " is not running");
    }
    var gang = job.job().spec().gang();
    if (!gang.isElastic()) {
      return new Refused("job " + id + " is not elastic");
    }
    if (job.releasedTasks() > 0) {
      return new Refused("job " + id + " is stopping");
    }
    int size = to.totalTasks();
    if (size < gang.tasks() || size > gang.maxTasks()) {
      return new Refused(
          "job " + id + ": " + size + " tasks, outside " + gang.tasks() + " to " + gang.maxTasks());
    }
    int keep = anchor >= 0 ? anchor : job.anchorNode();
    if (keep >= 0 && to.slotOf(keep) < 0) {
      return new Refused("job " + id + " must keep node " + keep + ", its first task's");
    }
    Placement from = job.placement();
    for (int i = 0; i < to.nodeCount(); i++) {
      int slot = from.slotOf(to.node(i));
      if (slot >= 0) {
        if (from.gpuMask(slot) != to.gpuMask(i) || from.tasksOn(slot) != to.tasksOn(i)) {
          return new Refused("job " + id + ": node " + to.node(i) + " must keep its GPUs");
        }
        continue;
      }
      String refusal = refuseSlot(job.job(), to, i);
      if (refusal != null) {
        return new Refused(refusal);
      }
    }
    for (int i = 0; i < from.nodeCount(); i++) {
      if (to.slotOf(from.node(i)) < 0) {
        give(gang.shape(), from, i);
      }
    }
    for (int i = 0; i < to.nodeCount(); i++) {
      if (from.slotOf(to.node(i)) < 0) {
        take(gang.shape(), to, i);
      }
    }
    running.put(id, new RunningJob(job.job(), to, job.startSec(), 0, keep));
    return Applied.ACCEPTED;
  }

  Applied cordon(String node, boolean cordon) {
    var index = cluster.indexOf(node);
    if (index.isEmpty()) {
      return new Refused("no node named " + node);
    }
    int i = index.get();
    if (cordoned[i] != cordon) {
      cordoned[i] = cordon;
      cordonedCount += cordon ? 1 : -1;
    }
    return Applied.ACCEPTED;
  }

  public boolean isCordoned(int node) {
    return cordoned[node];
  }

  Applied gpuService(String node, int gpu, boolean inService) {
    var index = cluster.indexOf(node);
    if (index.isEmpty()) {
      return new Refused("no node named " + node);
    }
    int i = index.get();
    if (gpu < 0 || gpu >= cluster.gpuCount(i)) {
      return new Refused("node " + node + " has no GPU " + gpu);
    }
    boolean before = outOfService[i] != 0;
    if (inService) {
      outOfService[i] &= ~(1L << gpu);
    } else {
      outOfService[i] |= 1L << gpu;
    }
    boolean after = outOfService[i] != 0;
    if (before != after) {
      nodesWithOutOfService += after ? 1 : -1;
    }
    return Applied.ACCEPTED;
  }

  /** The node's GPUs out of service (bit i set: GPU i), which no pass is offered. */
  public long outOfServiceMask(int node) {
    return outOfService[node];
  }

  /**
   * Frees what a stopping job holds on {@code node} (its tasks there confirmed their end); it keeps
   * the rest. Refused for a job that is not running, a node it does not hold, or its last node
   * (which {@link #finish} or {@link #requeue} frees with the job).
   */
  Applied releaseTasks(JobId id, String node) {
    RunningJob job = running.get(id);
    if (job == null) {
      return new Refused("job " + id + " is not running");
    }
    var index = cluster.indexOf(node);
    int slot = index.isEmpty() ? -1 : job.placement().slotOf(index.get());
    if (slot < 0) {
      return new Refused("job " + id + " holds nothing on node " + node);
    }
    if (job.placement().nodeCount() == 1) {
      return new Refused("job " + id + " holds only node " + node + ": finish it instead");
    }
    var shape = job.job().spec().gang().shape();
    int i = index.get();
    long mask = job.placement().gpuMask(slot);
    int tasks = job.placement().tasksOn(slot);
    freeMask[i] |= mask;
    freeCpus[i] += tasks * shape.cpus();
    freeMemoryBytes[i] += tasks * shape.memoryBytes();
    freeGpus += Long.bitCount(mask);
    running.put(
        id,
        new RunningJob(
            job.job(), job.placement().without(slot), job.startSec(), job.releasedTasks() + tasks));
    return Applied.ACCEPTED;
  }

  /**
   * Puts {@code job} back as started at {@code startSec} and stopping, holding only {@code held}:
   * for a store rebuilt while the job stops. Refused when the job is known already, the GPUs are
   * not free or the placement does not fit the gang's shape.
   */
  Applied resumeStopping(Job job, Placement held, long startSec) {
    JobId id = job.id();
    if (pending.contains(id) || running.containsKey(id)) {
      return new Refused("job " + id + " already exists");
    }
    var gang = job.spec().gang();
    int tasks = held.totalTasks();
    if (held.nodeCount() == 0 || tasks >= gang.maxTasks()) {
      return new Refused("job " + id + ": a stopping part holds 1 to " + (gang.maxTasks() - 1));
    }
    for (int s = 0; s < held.nodeCount(); s++) {
      int node = held.node(s);
      long mask = held.gpuMask(s);
      if (node < 0
          || node >= cluster.nodeCount()
          || Long.bitCount(mask) != held.tasksOn(s) * gang.shape().gpus()
          || (mask & ~freeMask[node]) != 0) {
        return new Refused("job " + id + ": the stopping part on node " + node + " is not free");
      }
    }
    for (int s = 0; s < held.nodeCount(); s++) {
      int node = held.node(s);
      freeMask[node] &= ~held.gpuMask(s);
      freeCpus[node] -= held.tasksOn(s) * gang.shape().cpus();
      freeMemoryBytes[node] -= held.tasksOn(s) * gang.shape().memoryBytes();
      freeGpus -= Long.bitCount(held.gpuMask(s));
    }
    // An elastic job's size when it stopped is not known here: count it as its minimum, or one
    // more task than it holds.
    running.put(id, new RunningJob(job, held, startSec, Math.max(1, gang.tasks() - tasks)));
    return Applied.ACCEPTED;
  }

  Applied finish(JobId id, long atSec) {
    RunningJob job = running.remove(id);
    if (job == null) {
      return new Refused("job " + id + " is not running");
    }
    release(job);
    history.of(job.job().spec().user()).finished(atSec - job.startSec(), job.job().timeLimitSec());
    return Applied.ACCEPTED;
  }

  /** {@code limitSec} times {@code shareMilli} thousandths, in [1, limitSec]; the limit for -1. */
  static long scaled(long limitSec, int shareMilli) {
    return shareMilli < 0
        ? limitSec
        : Math.max(1, Math.min(limitSec, limitSec * shareMilli / 1000));
  }

  /**
   * Stops a running job and puts it back among the pending jobs, eligible from {@code atSec}; it
   * keeps its id, spec and submit time. Refused, changing nothing, for a job that is not running or
   * a time before the job's start.
   */
  Applied requeue(JobId id, long atSec) {
    RunningJob job = running.get(id);
    if (job == null) {
      return new Refused("job " + id + " is not running");
    }
    if (atSec < job.startSec()) {
      return new Refused(
          "job " + id + " started at t=" + job.startSec() + ", cannot requeue at t=" + atSec);
    }
    running.remove(id);
    release(job);
    pending.add(job.job().withEligibleSec(atSec));
    knowTenants();
    return Applied.ACCEPTED;
  }

  Applied cancel(JobId id, long atSec) {
    if (pending.remove(id) != null) {
      return Applied.ACCEPTED;
    }
    return finish(id, atSec);
  }

  private void release(RunningJob job) {
    var shape = job.job().spec().gang().shape();
    var placement = job.placement();
    for (int i = 0; i < placement.nodeCount(); i++) {
      int node = placement.node(i);
      freeMask[node] |= placement.gpuMask(i);
      freeCpus[node] += placement.tasksOn(i) * shape.cpus();
      freeMemoryBytes[node] += placement.tasksOn(i) * shape.memoryBytes();
      freeGpus += Long.bitCount(placement.gpuMask(i));
    }
  }

  public Optional<Job> pending(JobId id) {
    return Optional.ofNullable(pending.get(id));
  }

  public Optional<RunningJob> running(JobId id) {
    return Optional.ofNullable(running.get(id));
  }

  /** Pending jobs in arrival order (a copy). */
  public Collection<Job> pendingJobs() {
    return Collections.unmodifiableCollection(pending.jobs());
  }

  /** Running jobs in start order (read-only view). */
  public Collection<RunningJob> runningJobs() {
    return Collections.unmodifiableCollection(running.values());
  }

  public int pendingCount() {
    return pending.size();
  }

  public int runningCount() {
    return running.size();
  }

  public long freeGpus() {
    return freeGpus;
  }

  public long freeMask(int node) {
    return freeMask[node];
  }

  public int freeCpus(int node) {
    return freeCpus[node];
  }

  public long freeMemoryBytes(int node) {
    return freeMemoryBytes[node];
  }

  /**
   * The last snapshot's pending jobs will not be read again (by anyone): the store may change them
   * in place instead of copying them first (unless an earlier snapshot, never released, shares them
   * too). A simulator calls it after each pass; without it the snapshot stays valid, at the cost of
   * a copy.
   */
  public void releaseSnapshot() {
    pending.release();
  }

  /**
   * A read-only copy for one scheduling pass. Cost: O(nodes + pending + running). A cordoned node
   * shows nothing free, so no pass places work on it. The pending jobs are shared with the store
   * until its next change to them, which copies them first unless {@link #releaseSnapshot} said the
   * snapshot is no longer read.
   */
  public ClusterSnapshot snapshot() {
    long[] masks = freeMask.clone();
    int[] cpus = freeCpus.clone();
    long[] memory = freeMemoryBytes.clone();
    if (cordonedCount > 0 || nodesWithOutOfService > 0) {
      for (int i = 0; i < masks.length; i++) {
        masks[i] &= ~outOfService[i];
        if (cordoned[i]) {
          masks[i] = 0;
          cpus[i] = 0;
          memory[i] = 0;
        }
      }
    }
    int[] shares = new int[knownTenants];
    for (int t = 0; t < shares.length; t++) {
      shares[t] = tenantEntries[t].shareMilli();
    }
    RunningJob[] runningJobs = running.values().toArray(RunningJob[]::new);
    int[] runningShares = new int[runningJobs.length];
    boolean elastic = pending.elasticCount() > 0;
    for (int i = 0; i < runningJobs.length; i++) {
      runningShares[i] = history.shareMilli(runningJobs[i].job().spec().user());
      elastic |= runningJobs[i].job().spec().gang().isElastic();
    }
    return new ClusterSnapshot(
            cluster,
            masks,
            cpus,
            memory,
            pending.copy(),
            runningJobs,
            pending.arrivalOrdered(),
            shares,
            runningShares)
        .knownElastic(elastic);
  }
}
