package io.kairos.core.sched;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.Placement;
import io.kairos.core.model.RunningJob;
import io.kairos.core.model.TopologyLevel;
import io.kairos.core.sched.place.GangPlacer;
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
 * The pass's migration stage (last, after the {@link ElasticStage}): moves running checkpointable
 * jobs when the move pays. Runs only with {@link Migrations#enabled()}; otherwise the pass is
 * unchanged.
 *
 * <p>Candidates: running jobs the driver lists as movable (they declare checkpoints), out of their
 * protection window ({@link Migrations#mayMove}), holding their whole gang, of a fixed size, and
 * neither preempted nor resized by this pass; smallest gang first, then id. What is free is the
 * snapshot's free GPUs less this pass's starts and less the nodes held for moves under way.
 *
 * <ol>
 *   <li><b>Defragmentation.</b> For each of the first {@link #MAX_DEFRAG_WAITING} jobs blocked for
 *       lack of GPUs, in the pass's order (none when the pass preempts; not one it shrinks for),
 *       that does not fit what is free (less what earlier moves took; a job after the first also
 *       off the nodes promised to another job's reservation that starts before it would end). For
 *       each candidate in turn: if the candidate's GPUs given back let the waiting job be placed,
 *       and the candidate itself fits elsewhere (on nodes neither it nor the waiting job's
 *       placement uses, so that a node is held for one job only), the move saves the waiting job
 *       its wait: gain = wait x its GPUs, where the wait is until its reservation when it has one,
 *       else until the candidate's time limit ends (when its GPUs would be free anyway). Cost =
 *       (the candidate's checkpoint time + the restart cost) x its GPUs. At most one such move per
 *       waiting job (a moved job is not tried again for the next), and at most {@link
 *       #MAX_DEFRAG_TRIES} candidates tried (those whose best case cannot pay are skipped
 *       unplaced).
 *   <li><b>Consolidation.</b> A candidate on several nodes whose gang, placed afresh on what is
 *       free (its own GPUs included), spans a narrower topology level (e.g. one rack instead of
 *       two): gain = {@link MigrationSettings#consolidationGain()} x its remaining time limit x its
 *       GPUs; same cost.
 * </ol>
 *
 * A move is decided only when gain &gt; cost. Each {@link Decision.Migrate} names the target nodes,
 * the job it serves and both figures. A target never takes a node promised to a reservation (but
 * the waiting job's) that starts while the moved job would hold it. Cost: nothing when disabled or
 * no job is movable; else O(nodes) set-up and a few placements per candidate.
 */
final class MigrationStage {
  private static final Comparator<RunningJob> CANDIDATE_ORDER =
      Comparator.comparingInt((RunningJob r) -> r.job().totalGpus()).thenComparing(RunningJob::id);

  /** Candidates a pass tries to move for one waiting job, at most (each costs two placements). */
  static final int MAX_DEFRAG_TRIES = 16;

  /** Waiting jobs, first in the pass's order, a pass tries to make room for by moves, at most. */
  static final int MAX_DEFRAG_WAITING = 4;

  private MigrationStage() {}

  /** How wide {@code p} is, as an ordinal: a move for another job never spreads the moved one. */
  private static int spanOf(Cluster cluster, Placement p) {
    return cluster.spanOf(p.nodesUnsafe(), p.nodeCount()).ordinal();
  }

  static PassResult apply(PassInput in, PassResult pass, PlacementStrategy strategy) {
    Migrations migrations = in.migrations();
    if (!migrations.enabled() || migrations.movable().isEmpty()) {
      return pass;
    }
    ClusterSnapshot snapshot = in.snapshot();
    Cluster cluster = snapshot.cluster();
    long now = in.nowSec();
    Map<JobId, Job> pendingById = new HashMap<>();
    for (Job job : snapshot.pendingJobs().jobs()) {
      if (job != null) {
        pendingById.put(job.id(), job);
      }
    }
    ElasticFreeNodes free = ElasticStage.freeAfterStarts(snapshot, pass, pendingById);
    ElasticStage.takeHeld(cluster, free, migrations, null);
    Set<JobId> touched = new HashSet<>();
    pass.preemptions().forEach(p -> touched.add(p.job()));
    pass.resizes().forEach(z -> touched.add(z.job()));
    List<RunningJob> candidates = new ArrayList<>();
    for (int i = 0; i < snapshot.runningCount(); i++) {
      RunningJob r = snapshot.running(i);
      if (r.releasedTasks() == 0
          && !r.job().spec().gang().isElastic()
          && !touched.contains(r.id())
          && !migrations.held().containsValue(r.id())
          && migrations.mayMove(r.id(), now)) {
        candidates.add(r);
      }
    }
    if (candidates.isEmpty()) {
      return pass;
    }
    candidates.sort(CANDIDATE_ORDER);
    var placer = new GangPlacer(cluster, strategy);
    var decided = new ArrayList<Decision.Migrate>();
    Set<JobId> moved = new HashSet<>();
    if (pass.preemptions().isEmpty()) { // else the pass already makes room by preempting
      var left = new ArrayList<>(candidates);
      int rank = 0;
      for (Job waiting : waitingForGpus(pass, MAX_DEFRAG_WAITING)) {
        Decision.Migrate defrag = defragment(in, pass, waiting, rank++ > 0, free, left, placer);
        if (defrag != null) {
          decided.add(defrag);
          moved.add(defrag.job());
          left.removeIf(r -> r.id().equals(defrag.job()));
        }
      }
    }
    for (RunningJob r : candidates) {
      if (!moved.contains(r.id())) {
        Decision.Migrate m = consolidate(in, cluster, free, r, placer, pass.reservations());
        if (m != null) {
          decided.add(m);
        }
      }
    }
    if (decided.isEmpty()) {
      return pass;
    }
    decided.sort(Comparator.comparing(Decision.Migrate::job));
    return pass.withMigrations(decided);
  }

  /**
   * The first {@code max} jobs in the pass's order blocked for lack of GPUs ({@link
   * ElasticStage#waiting}'s reasons), without preemptions.
   */
  private static List<Job> waitingForGpus(PassResult pass, int max) {
    var out = new ArrayList<Job>();
    var d = pass.diagnosis();
    for (int rank = 0; rank < d.size() && out.size() < max; rank++) {
      var reason = d.reason(rank);
      if (reason.isPresent() && ElasticStage.WAITS_FOR_GPUS.contains(reason.get())) {
        out.add(d.job(rank));
      }
    }
    return out;
  }

  /**
   * Step 1 for one waiting job: one move that lets it start, or null. A job after the first ({@code
   * later}) is placed off the nodes promised to another job's reservation that starts before it
   * would end, so that a move never lets it jump ahead of a reserved job.
   */
  private static Decision.Migrate defragment(
      PassInput in,
      PassResult pass,
      Job waiting,
      boolean later,
      ElasticFreeNodes free,
      List<RunningJob> candidates,
      GangPlacer placer) {
    if (waiting == null
        || !waiting.isEligibleAt(in.nowSec())
        || pass.resizes().stream().anyMatch(z -> waiting.id().equals(z.beneficiary()))) {
      return null;
    }
    Cluster cluster = in.snapshot().cluster();
    var wGang = waiting.spec().gang();
    int wModel = cluster.modelIdOf(waiting.spec().gpuModel());
    long[] wExcluded = cluster.excludedMask(waiting.spec().excludedNodes());
    if (later) {
      wExcluded =
          promised(
              cluster,
              wExcluded,
              pass.reservations(),
              waiting.id(),
              in.nowSec() + waiting.timeLimitSec());
      if (wExcluded == null) {
        return null; // an unpinned reservation of an earlier job could need any node
      }
    }
    if (placer.place(wGang, wModel, free, true, wExcluded) != null) {
      return null; // GPUs are not what it waits for (a reservation, CPUs elsewhere)
    }
    long reservedStart = -1;
    for (Decision.Reserve r : pass.reservations()) {
      if (r.job().equals(waiting.id())) {
        reservedStart = r.startSec();
      }
    }
    long now = in.nowSec();
    int tried = 0;
    for (RunningJob r : candidates) {
      long bestWait = reservedStart >= 0 ? reservedStart - now : r.endLimitSec() - now;
      if (bestWait * waiting.totalGpus() <= in.migrations().costSec(r.id()) * r.job().totalGpus()) {
        continue; // even a move that works would not pay
      }
      if (++tried > MAX_DEFRAG_TRIES) {
        break;
      }
      give(free, r);
      Placement forWaiting =
          withGpus(cluster, free, placer.place(wGang, wModel, free, true, wExcluded), waiting);
      if (forWaiting != null) {
        take(free, forWaiting, waiting);
        var spec = r.job().spec();
        long[] avoid =
            promised(
                cluster,
                withNodes(
                    cluster,
                    withNodes(cluster, cluster.excludedMask(spec.excludedNodes()), r.placement()),
                    forWaiting),
                pass.reservations(),
                waiting.id(),
                now + r.job().timeLimitSec());
        Placement target =
            avoid == null
                ? null
                : withGpus(
                    cluster,
                    free,
                    placer.place(
                        spec.gang(), cluster.modelIdOf(spec.gpuModel()), free, true, avoid),
                    r.job());
        if (target != null && spanOf(cluster, target) <= spanOf(cluster, r.placement())) {
          long waitSec = reservedStart >= 0 ? reservedStart - now : r.endLimitSec() - now;
          long gain = Math.max(0, waitSec) * waiting.totalGpus();
          long cost = in.migrations().costSec(r.id()) * r.job().totalGpus();
          if (gain > cost) {
            take(free, target, r.job());
            return new Decision.Migrate(r.id(), target, waiting.id(), gain, cost);
          }
        }
        give(free, forWaiting, waiting);
      }
      take(free, r.placement(), r.job());
    }
    return null;
  }

  /** Step 2 for one candidate: a narrower placement that pays, or null. */
  private static Decision.Migrate consolidate(
      PassInput in,
      Cluster cluster,
      ElasticFreeNodes free,
      RunningJob r,
      GangPlacer placer,
      List<Decision.Reserve> reservations) {
    Placement now = r.placement();
    if (now.nodeCount() < 2) {
      return null;
    }
    long[] avoid =
        promised(
            cluster,
            cluster.excludedMask(r.job().spec().excludedNodes()),
            reservations,
            null,
            in.nowSec() + r.job().timeLimitSec());
    if (avoid == null) {
      return null;
    }
    TopologyLevel span = cluster.spanOf(now.nodesUnsafe(), now.nodeCount());
    var spec = r.job().spec();
    give(free, r);
    Placement target =
        withGpus(
            cluster,
            free,
            placer.place(spec.gang(), cluster.modelIdOf(spec.gpuModel()), free, true, avoid),
            r.job());
    Decision.Migrate decided = null;
    if (target != null
        && cluster.spanOf(target.nodesUnsafe(), target.nodeCount()).compareTo(span) < 0) {
      long remainingSec = Math.max(0, r.endLimitSec() - in.nowSec());
      int gpus = r.job().totalGpus();
      long gain =
          (long) (in.migrations().settings().consolidationGain() * remainingSec * (double) gpus);
      long cost = in.migrations().costSec(r.id()) * gpus;
      if (gain > cost) {
        decided = new Decision.Migrate(r.id(), target, r.id(), gain, cost);
      }
    }
    // The job holds its GPUs until it stops; a target is held from now on.
    take(free, now, r.job());
    if (decided != null) {
      take(free, target, r.job());
    }
    return decided;
  }

  /**
   * {@code p} (placed on {@code free}, which has no GPU indexes to give) with GPUs chosen on each
   * node from what is free there, as a start chooses them; null for null.
   */
  private static Placement withGpus(Cluster cluster, ElasticFreeNodes free, Placement p, Job job) {
    if (p == null) {
      return null;
    }
    int perTask = job.spec().gang().shape().gpus();
    long[] masks = new long[p.nodeCount()];
    for (int i = 0; i < p.nodeCount(); i++) {
      int node = p.node(i);
      masks[i] =
          GpuPicker.pick(
              free.mask(node),
              cluster.gpuCount(node),
              cluster.nvlinkDomainSize(node),
              p.tasksOn(i),
              perTask);
    }
    return p.withGpuMasks(masks);
  }

  /**
   * {@code base} (may be null) with the nodes promised to reservations (but {@code except}'s) that
   * start before {@code untilSec}, when the moved job would still hold its target; null when an
   * unpinned reservation (a count of GPUs anywhere) does: then no target is safe.
   */
  private static long[] promised(
      Cluster cluster,
      long[] base,
      List<Decision.Reserve> reservations,
      JobId except,
      long untilSec) {
    long[] mask = base;
    for (Decision.Reserve r : reservations) {
      if (r.job().equals(except) || r.startSec() >= untilSec) {
        continue;
      }
      if (r.placement().nodeCount() == 0) {
        return null;
      }
      mask = withNodes(cluster, mask, r.placement());
    }
    return mask == null ? new long[(cluster.nodeCount() + 63) >>> 6] : mask;
  }

  /** {@code base} (may be null) with every node of {@code p} set. */
  private static long[] withNodes(Cluster cluster, long[] base, Placement p) {
    long[] mask = base == null ? new long[(cluster.nodeCount() + 63) >>> 6] : base.clone();
    for (int node : p.nodesUnsafe()) {
      mask[node >>> 6] |= 1L << node;
    }
    return mask;
  }

  private static void give(ElasticFreeNodes free, RunningJob r) {
    give(free, r.placement(), r.job());
  }

  private static void give(ElasticFreeNodes free, Placement p, Job job) {
    var shape = job.spec().gang().shape();
    for (int i = 0; i < p.nodeCount(); i++) {
      int tasks = p.tasksOn(i);
      free.give(p.node(i), p.gpuMask(i), tasks * shape.cpus(), tasks * shape.memoryBytes());
    }
  }

  private static void take(ElasticFreeNodes free, Placement p, Job job) {
    var shape = job.spec().gang().shape();
    for (int i = 0; i < p.nodeCount(); i++) {
      int tasks = p.tasksOn(i);
      free.take(p.node(i), p.gpuMask(i), tasks * shape.cpus(), tasks * shape.memoryBytes());
    }
  }
}
