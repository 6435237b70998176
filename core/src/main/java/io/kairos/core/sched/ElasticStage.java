package io.kairos.core.sched;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.RunningJob;
import io.kairos.core.model.TopologyLevel;
import io.kairos.core.sched.place.GpuPicker;
import io.kairos.core.sched.place.PlacementStrategy;
import io.kairos.core.state.ClusterSnapshot;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The pass's elastic stage: after the pass has started, reserved and preempted as for any job, it
 * sizes the elastic jobs ({@link io.kairos.core.model.GangSpec#isElastic()}). The pass itself
 * treats an elastic job as its minimum gang, so its order, quota, reservations and backfill are
 * those of a fixed job of that size; the stage only spends what the pass left idle, or gives back
 * what an elastic job holds above its minimum.
 *
 * <p>Steps:
 *
 * <ol>
 *   <li><b>Who waits.</b> The job the pass would preempt for (its first preemptor), else the first
 *       job in the pass's order blocked for lack of GPUs ({@link Reason#INSUFFICIENT_GPUS}, {@link
 *       Reason#NO_PLACEMENT}, {@link Reason#RESERVED}). Jobs held by quota, begin time or
 *       exclusions do not count: GPUs would not start them.
 *   <li><b>ElasticShrink before preempting.</b> If a job waits, running elastic jobs give up nodes
 *       above their minimum, in victim order (lower priority first, then the most recently started,
 *       then the higher id), last node first, never the job's first node (its rendezvous), until
 *       the waiting job can be placed on what is free; then every removal it does not need is put
 *       back (Kueue's remove-then-fill-back). If shrinking lets it start, each shrunk job gets a
 *       {@link Decision.Resize} naming it as beneficiary and the pass's preemptions for it are
 *       dropped (shrinking costs a checkpoint, not a restart); the job starts in a later pass, once
 *       the nodes are free. If not, nothing shrinks and the preemptions stand.
 *   <li><b>Grow.</b> Only when no job waits (else the GPUs are the waiting job's), elastic jobs
 *       below their maximum, started in this pass or running, in order of priority (higher first),
 *       start time, then id, take whole free nodes one at a time: nodes of their GPU model, not
 *       excluded, not promised to a reservation that starts before the job's time limit ends (and
 *       none at all while an unpinned reservation does), not held for a move under way ({@link
 *       Migrations#held}: nor does a shrink place another job there), in their first node's rack
 *       first, then by index (below a running job's first node too: that node keeps the
 *       rendezvous). With tenancy, each node's GPUs must fit the queue's nominal quota (no
 *       borrowing: an elastic job's extra nodes are never lent quota). A job started in this pass
 *       starts at its grown size (its start decision changes); a running one gets a {@link
 *       Decision.Resize}.
 * </ol>
 *
 * <p>Every resize keeps the job between its minimum and maximum, adds or removes whole nodes (one
 * task each), and keeps the GPUs of the nodes it keeps. Cost: nothing when no job is elastic (one
 * scan of running and pending jobs); else O(nodes) set-up, one placement per removal for the
 * waiting job, and O(nodes) per grown job.
 */
final class ElasticStage {
  static final Set<Reason> WAITS_FOR_GPUS =
      Set.of(Reason.INSUFFICIENT_GPUS, Reason.NO_PLACEMENT, Reason.RESERVED);

  /** Victim order for shrinking: lower priority, then latest start, then higher id. */
  private static final Comparator<ElasticMember> SHRINK_ORDER =
      Comparator.comparingInt(ElasticMember::priority)
          .thenComparing(Comparator.comparingLong(ElasticMember::startSec).reversed())
          .thenComparing(m -> m.job().id(), Comparator.reverseOrder());

  /** Growth order: higher priority, then earlier start, then lower id. */
  private static final Comparator<ElasticMember> GROW_ORDER =
      Comparator.comparingInt(ElasticMember::priority)
          .reversed()
          .thenComparingLong(ElasticMember::startSec)
          .thenComparing(m -> m.job().id());

  private ElasticStage() {}

  /** {@code pass} with the elastic jobs sized; {@code pass} itself when no job is elastic. */
  static PassResult apply(PassInput in, PassResult pass, PlacementStrategy strategy) {
    ClusterSnapshot snapshot = in.snapshot();
    if (!snapshot.anyElastic()) {
      return pass;
    }
    Cluster cluster = snapshot.cluster();
    Map<JobId, Job> pendingById = new HashMap<>();
    for (Job job : snapshot.pendingJobs().jobs()) {
      if (job != null) {
        pendingById.put(job.id(), job);
      }
    }
    ElasticFreeNodes free = freeAfterStarts(snapshot, pass, pendingById);
    Job waiting = waiting(pass, pendingById);
    takeHeld(cluster, free, in.migrations(), waiting == null ? null : waiting.id());
    Set<JobId> victims = new HashSet<>();
    pass.preemptions().forEach(p -> victims.add(p.job()));
    List<ElasticMember> members = new ArrayList<>();
    for (int i = 0; i < snapshot.runningCount(); i++) {
      RunningJob r = snapshot.running(i);
      if (r.job().spec().gang().isElastic()
          && r.releasedTasks() == 0
          && !victims.contains(r.id())) {
        members.add(ElasticMember.running(r));
      }
    }
    for (Decision.Start s : pass.starts()) {
      Job job = pendingById.get(s.job());
      if (job.spec().gang().isElastic()) {
        members.add(ElasticMember.startedNow(job, in.nowSec(), s.placement()));
      }
    }
    var preemptions = pass.preemptions();
    var resizes = new ArrayList<Decision.Resize>();
    if (waiting != null) {
      var shrunk =
          ElasticShrink.forWaiting(cluster, free, members, waiting, strategy, SHRINK_ORDER);
      if (!shrunk.isEmpty()) {
        for (ElasticMember m : shrunk) {
          resizes.add(
              new Decision.Resize(
                  m.job().id(), m.placement(), m.before().totalTasks(), waiting.id()));
        }
        preemptions =
            preemptions.stream().filter(p -> !p.preemptor().equals(waiting.id())).toList();
      }
    } else {
      var quota = ElasticQuota.of(in, snapshot, pass, pendingById);
      members.sort(GROW_ORDER);
      for (ElasticMember m : members) {
        grow(cluster, free, m, pass.reservations(), quota);
        if (!m.startedNow() && m.changed()) {
          resizes.add(
              new Decision.Resize(m.job().id(), m.placement(), m.before().totalTasks(), null));
        }
      }
    }
    if (resizes.isEmpty() && members.stream().noneMatch(m -> m.startedNow() && m.changed())) {
      return pass;
    }
    var starts = new ArrayList<Decision.Start>(pass.starts().size());
    Map<JobId, ElasticMember> startedNow = new HashMap<>();
    members.stream()
        .filter(ElasticMember::startedNow)
        .forEach(m -> startedNow.put(m.job().id(), m));
    for (Decision.Start s : pass.starts()) {
      ElasticMember m = startedNow.get(s.job());
      starts.add(m == null ? s : new Decision.Start(s.job(), m.placement()));
    }
    resizes.sort(Comparator.comparing(Decision.Resize::job));
    return new PassResult(starts, pass.reservations(), preemptions, pass.diagnosis(), resizes);
  }

  static ElasticFreeNodes freeAfterStarts(
      ClusterSnapshot snapshot, PassResult pass, Map<JobId, Job> pendingById) {
    int n = snapshot.cluster().nodeCount();
    long[] mask = new long[n];
    int[] cpus = new int[n];
    long[] memory = new long[n];
    for (int i = 0; i < n; i++) {
      mask[i] = snapshot.freeMask(i);
      cpus[i] = snapshot.freeCpus(i);
      memory[i] = snapshot.freeMemoryBytes(i);
    }
    var free = new ElasticFreeNodes(snapshot.cluster(), mask, cpus, memory);
    for (Decision.Start s : pass.starts()) {
      var shape = pendingById.get(s.job()).spec().gang().shape();
      var p = s.placement();
      for (int i = 0; i < p.nodeCount(); i++) {
        int tasks = p.tasksOn(i);
        free.take(p.node(i), p.gpuMask(i), tasks * shape.cpus(), tasks * shape.memoryBytes());
      }
    }
    return free;
  }

  /**
   * Takes from {@code free} the nodes held for moves under way ({@link Migrations#held}), but those
   * held for {@code except} (may be null): no elastic job grows onto them, and no job but their
   * holder is placed there by a shrink.
   */
  static void takeHeld(
      Cluster cluster, ElasticFreeNodes free, Migrations migrations, JobId except) {
    migrations
        .held()
        .forEach(
            (node, holder) -> {
              if (!holder.equals(except) && node >= 0 && node < cluster.nodeCount()) {
                free.take(node, free.mask(node), free.freeCpus(node), free.freeMemoryBytes(node));
              }
            });
  }

  /** Step 1: the job the pass preempts for, else the first one blocked for lack of GPUs. */
  static Job waiting(PassResult pass, Map<JobId, Job> pendingById) {
    if (!pass.preemptions().isEmpty()) {
      return pendingById.get(pass.preemptions().getFirst().preemptor());
    }
    var d = pass.diagnosis();
    for (int rank = 0; rank < d.size(); rank++) {
      var reason = d.reason(rank);
      if (reason.isPresent() && WAITS_FOR_GPUS.contains(reason.get())) {
        return d.job(rank);
      }
    }
    return null;
  }

  /** Step 3 for one job: whole free nodes, one at a time, up to its maximum. */
  private static void grow(
      Cluster cluster,
      ElasticFreeNodes free,
      ElasticMember m,
      List<Decision.Reserve> reservations,
      ElasticQuota quota) {
    if (m.size() >= m.max()) {
      return;
    }
    Set<Integer> promised = new HashSet<>();
    for (Decision.Reserve r : reservations) {
      if (r.startSec() < m.endLimitSec()) {
        if (r.placement().nodeCount() == 0) {
          return; // an unpinned reservation could need any node
        }
        for (int node : r.placement().nodes()) {
          promised.add(node);
        }
      }
    }
    var spec = m.job().spec();
    var shape = spec.gang().shape();
    int first = m.first();
    int model = cluster.gpuModelId(first);
    int rack = cluster.domainOf(TopologyLevel.RACK, first);
    long[] excluded = cluster.excludedMask(spec.excludedNodes());
    List<Integer> candidates = new ArrayList<>();
    for (int node = 0; node < cluster.nodeCount(); node++) {
      if (!m.nodes().containsKey(node)
          && !promised.contains(node)
          && (excluded == null || !Cluster.isSet(excluded, node))
          && cluster.gpuModelId(node) == model
          && free.holds(node, shape)) {
        candidates.add(node);
      }
    }
    candidates.sort(
        Comparator.comparingInt(
                (Integer node) -> cluster.domainOf(TopologyLevel.RACK, node) == rack ? 0 : 1)
            .thenComparingInt(node -> node));
    for (int node : candidates) {
      if (m.size() >= m.max() || !quota.admits(m.job(), cluster.gpuModel(node), shape.gpus())) {
        return;
      }
      long gpus =
          GpuPicker.pick(
              free.mask(node),
              cluster.gpuCount(node),
              cluster.nvlinkDomainSize(node),
              1,
              shape.gpus());
      free.take(node, gpus, shape);
      quota.charge(m.job(), cluster.gpuModel(node), shape.gpus());
      m.nodes().put(node, gpus);
    }
  }
}
