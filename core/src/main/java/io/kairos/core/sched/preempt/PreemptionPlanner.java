package io.kairos.core.sched.preempt;

import io.kairos.core.Checks;
import io.kairos.core.model.Cluster;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.JobId;
import io.kairos.core.model.Placement;
import io.kairos.core.model.RunningJob;
import io.kairos.core.model.TopologyLevel;
import io.kairos.core.sched.place.Capacity;
import io.kairos.core.sched.place.GangPlacer;
import io.kairos.core.sched.place.Ledger;
import io.kairos.core.sched.place.PlacementStrategy;
import io.kairos.core.state.ClusterSnapshot;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;

/**
 * Finds which running jobs to preempt so that a blocked gang can be placed: a small victim set that
 * frees a valid placement, never "eight scattered one-GPU jobs that cannot make room for an
 * eight-GPU gang".
 *
 * <p>Design note. {@link GangPlacer} succeeds exactly when the tasks every node can take add up to
 * the gang (it falls back to the whole cluster when no smaller domain holds it), so feasibility is
 * <em>monotone</em>: freeing more never makes a gang unplaceable. The planner leans on that:
 *
 * <ol>
 *   <li>If the gang fits in what is free, the plan has no victims.
 *   <li>Candidates: the caller's list in its preference order (lowest priority first, most recently
 *       started first, ...), less the protected ones ({@code protectedUntilSec > nowSec}) and those
 *       holding nothing on a node the gang could use (wrong GPU model, excluded node); at most
 *       {@code maxCandidates} (default 512) of them, the first in the caller's order, which bounds
 *       the work below.
 *   <li>Greedy by preference: free candidates in order on a what-if capacity ({@link
 *       FreedCapacity}) until the placer finds a placement. If freeing all of them does not, no
 *       subset can (monotone): the answer is empty and nobody is preempted.
 *   <li>Targeted by node: for each node, the cheapest victims on it (by cost) that let it take its
 *       share of the gang (one task for a per-node gang; as many as the node can hold otherwise).
 *       Within each rack, block, zone and the cluster, take the nodes with the least cost per task
 *       until the gang is covered; the few cheapest unions are tried. This finds "clear one node"
 *       plans that the preference order misses, e.g. the four one-GPU jobs on one node rather than
 *       the first four in the list, spread over two nodes.
 *   <li>Reduce each feasible set to a 1-minimal one: drop victims with no task on a node of the
 *       placement found (they free nothing it uses), then try to put back each remaining victim
 *       (greedy: reverse preference order, so the least preferred victims are spared first;
 *       targeted: most expensive first), keeping it out when the gang still fits. By monotonicity
 *       one pass suffices: a victim needed when tested is still needed once others are put back.
 *   <li>Return the best reduced set by {@link #PLAN_ORDER}, with the placer's placement for it.
 * </ol>
 *
 * <p>A gang victim is freed whole: all of its GPUs on all of its nodes, or none.
 *
 * <p>Cost, with c candidates (at most {@code maxCandidates}), n nodes and v victims in a set: the
 * greedy step makes at most c placer calls, each reduction at most v + 1, and the targeted step is
 * O(n log n) per topology level before its few reductions; a placer call is O(n). No time budget:
 * the result never depends on how fast the machine is.
 *
 * <p>Stateless after construction and deterministic: ties end in the candidates' order.
 */
public final class PreemptionPlanner {
  /** The most candidates one call considers. */
  public static final int DEFAULT_MAX_CANDIDATES = 512;

  /** How many of the cheapest targeted unions are verified and reduced. */
  private static final int TARGETED_TRIES = 4;

  /**
   * Plan order, best first:
   *
   * <ol>
   *   <li>fewer victims;
   *   <li>less work lost (summed {@code costGpuSec});
   *   <li>victims earlier in the caller's preference order (lexicographic on their positions).
   * </ol>
   */
  static final Comparator<Attempt> PLAN_ORDER =
      Comparator.comparingInt((Attempt a) -> a.ranks().length)
          .thenComparingLong(Attempt::costGpuSec)
          .thenComparing(Attempt::ranks, Arrays::compare);

  private final Cluster cluster;
  private final GangPlacer placer;
  private final int maxCandidates;

  public PreemptionPlanner(Cluster cluster) {
    this(cluster, PlacementStrategy.TOPOLOGY, DEFAULT_MAX_CANDIDATES);
  }

  public PreemptionPlanner(Cluster cluster, PlacementStrategy strategy, int maxCandidates) {
    this.cluster = cluster;
    this.placer = new GangPlacer(cluster, strategy);
    this.maxCandidates = Checks.positive(maxCandidates, "maxCandidates");
  }

  /**
   * A plan for {@code gang} on GPUs of {@code modelId} ({@link Cluster#modelIdOf}; -1 for any) over
   * what is free in {@code snapshot}, CPU and memory checked.
   */
  public Optional<PreemptionPlan> plan(
      ClusterSnapshot snapshot,
      GangSpec gang,
      int modelId,
      List<VictimCandidate> candidates,
      long nowSec) {
    Checks.argument(snapshot.cluster() == cluster, () -> "snapshot of another cluster");
    return plan(new Ledger(snapshot, nowSec).now(0), gang, modelId, null, true, candidates, nowSec);
  }

  /**
   * A plan for {@code gang} over {@code free} (what the gang may use now, before any victim goes),
   * avoiding the nodes set in {@code excluded} ({@link Cluster#excludedMask}; null for none), or
   * empty when preempting the allowed candidates cannot make room.
   *
   * @param candidates running jobs the caller allows to be preempted, most preferred victim first;
   *     no job twice
   */
  public Optional<PreemptionPlan> plan(
      Capacity free,
      GangSpec gang,
      int modelId,
      long[] excluded,
      boolean checkCpuMemory,
      List<VictimCandidate> candidates,
      long nowSec) {
    // 1. Fits without victims.
    Placement direct = placer.place(gang, modelId, free, checkCpuMemory, excluded);
    if (direct != null) {
      return Optional.of(new PreemptionPlan(List.of(), direct, 0));
    }
    // 2. The candidates that may help.
    var search =
        new Search(
            free,
            gang,
            modelId,
            excluded,
            checkCpuMemory,
            usable(candidates, nowSec, gang, modelId, excluded));
    if (search.candidates.length == 0) {
      return Optional.empty();
    }
    // 3. Greedy by preference; infeasible with every candidate freed means infeasible.
    Attempt best = search.greedy();
    if (best == null) {
      return Optional.empty();
    }
    // 4-5. Targeted by node, each reduced; 6. the best.
    for (Attempt attempt : search.targeted()) {
      if (PLAN_ORDER.compare(attempt, best) < 0) {
        best = attempt;
      }
    }
    var victims = new ArrayList<RunningJob>(best.ranks().length);
    for (int rank : best.ranks()) {
      victims.add(search.candidates[rank].job());
    }
    return Optional.of(new PreemptionPlan(victims, best.placement(), best.costGpuSec()));
  }

  private VictimCandidate[] usable(
      List<VictimCandidate> candidates, long nowSec, GangSpec gang, int modelId, long[] excluded) {
    var seen = new HashSet<JobId>();
    var kept = new ArrayList<VictimCandidate>();
    for (VictimCandidate c : candidates) {
      Checks.argument(seen.add(c.id()), () -> "candidate job " + c.id() + " is listed twice");
      if (kept.size() < maxCandidates
          && !c.isProtectedAt(nowSec)
          && touchesUsableNode(c, gang, modelId, excluded)) {
        kept.add(c);
      }
    }
    return kept.toArray(VictimCandidate[]::new);
  }

  private boolean touchesUsableNode(
      VictimCandidate c, GangSpec gang, int modelId, long[] excluded) {
    Placement p = c.job().placement();
    for (int i = 0; i < p.nodeCount(); i++) {
      if (isUsable(p.node(i), gang, modelId, excluded)) {
        return true;
      }
    }
    return false;
  }

  private boolean isUsable(int node, GangSpec gang, int modelId, long[] excluded) {
    if (excluded != null && Cluster.isSet(excluded, node)) {
      return false;
    }
    return gang.shape().gpus() == 0 || modelId < 0 || cluster.gpuModelId(node) == modelId;
  }

  /** A feasible, reduced victim set: candidate positions (ascending), cost and placement. */
  record Attempt(int[] ranks, long costGpuSec, Placement placement) {}

  /** What one node offers the targeted search: {@code tasks} of the gang for these victims. */
  private record Offer(int node, int tasks, long costGpuSec, int[] ranks) {}

  /** One planning call's working state. */
  private final class Search {
    private final Capacity free;
    private final GangSpec gang;
    private final int modelId;
    private final long[] excluded;
    private final boolean checkCpuMemory;
    final VictimCandidate[] candidates;
    private final FreedCapacity what;
    private final boolean[] in;

    Search(
        Capacity free,
        GangSpec gang,
        int modelId,
        long[] excluded,
        boolean checkCpuMemory,
        VictimCandidate[] candidates) {
      this.free = free;
      this.gang = gang;
      this.modelId = modelId;
      this.excluded = excluded;
      this.checkCpuMemory = checkCpuMemory;
      this.candidates = candidates;
      this.what = new FreedCapacity(cluster, free);
      this.in = new boolean[candidates.length];
    }

    private Placement place() {
      return placer.place(gang, modelId, what, checkCpuMemory, excluded);
    }

    private void add(int rank) {
      if (!in[rank]) {
        in[rank] = true;
        what.add(candidates[rank]);
      }
    }

    private void remove(int rank) {
      if (in[rank]) {
        in[rank] = false;
        what.remove(candidates[rank]);
      }
    }

    private void clear() {
      for (int r = 0; r < in.length; r++) {
        remove(r);
      }
    }

    /** Step 3: candidates in preference order until the gang fits, then reduced. */
    Attempt greedy() {
      Placement placement = null;
      int added = 0;
      while (placement == null && added < candidates.length) {
        add(added++);
        placement = place();
      }
      if (placement == null) {
        return null;
      }
      int[] order = new int[added];
      for (int i = 0; i < added; i++) {
        order[i] = added - 1 - i; // put back the least preferred first
      }
      return reduce(placement, order);
    }

    /** Step 4: per-node offers, cheapest nodes per domain, a few unions reduced. */
    List<Attempt> targeted() {
      Offer[] offers = offers();
      var unions = new ArrayList<int[]>();
      int previousDomains = -1;
      for (TopologyLevel level : Cluster.GROUP_LEVELS) {
        int domains = cluster.domainCount(level);
        if (domains == previousDomains) {
          continue; // the same partition as the level below
        }
        previousDomains = domains;
        for (int d = 0; d < domains; d++) {
          int[] union = cover(offers, cluster.domainStart(level, d), cluster.domainEnd(level, d));
          if (union != null && unions.stream().noneMatch(u -> Arrays.equals(u, union))) {
            unions.add(union);
          }
        }
      }
      unions.sort(
          Comparator.comparingInt((int[] u) -> u.length)
              .thenComparingLong(this::cost)
              .thenComparing(Arrays::compare));
      var attempts = new ArrayList<Attempt>();
      for (int i = 0; i < Math.min(TARGETED_TRIES, unions.size()); i++) {
        clear();
        for (int rank : unions.get(i)) {
          add(rank);
        }
        Placement placement = place();
        if (placement == null) {
          continue; // cannot happen while the placer is monotone; skip rather than trust it
        }
        Integer[] order = Arrays.stream(unions.get(i)).boxed().toArray(Integer[]::new);
        Arrays.sort(
            order,
            Comparator.comparingLong((Integer r) -> candidates[r].costGpuSec())
                .reversed()
                .thenComparing(Comparator.reverseOrder()));
        attempts.add(reduce(placement, Arrays.stream(order).mapToInt(Integer::intValue).toArray()));
      }
      return attempts;
    }

    /** For each usable node: the cheapest victims on it that give it its share of the gang. */
    private Offer[] offers() {
      int n = cluster.nodeCount();
      var onNode = new ArrayList<List<Integer>>(n);
      for (int i = 0; i < n; i++) {
        onNode.add(null);
      }
      for (int r = 0; r < candidates.length; r++) {
        Placement p = candidates[r].job().placement();
        for (int i = 0; i < p.nodeCount(); i++) {
          int node = p.node(i);
          if (onNode.get(node) == null) {
            onNode.set(node, new ArrayList<>());
          }
          onNode.get(node).add(r);
        }
      }
      Offer[] offers = new Offer[n];
      for (int node = 0; node < n; node++) {
        if (!isUsable(node, gang, modelId, excluded)) {
          continue;
        }
        List<Integer> ranks = onNode.get(node) == null ? new ArrayList<>() : onNode.get(node);
        ranks.sort(
            Comparator.comparingLong((Integer r) -> candidates[r].costGpuSec())
                .thenComparingInt(r -> r));
        long[] freed = new long[3]; // GPUs, CPUs, memory freed on this node
        for (int r : ranks) {
          addOnNode(freed, r, node, 1);
        }
        int target = tasksFit(node, freed); // all it could take (one for a per-node gang)
        if (target == 0) {
          continue;
        }
        Arrays.fill(freed, 0);
        int used = 0;
        long cost = 0;
        while (tasksFit(node, freed) < target) {
          int r = ranks.get(used++);
          addOnNode(freed, r, node, 1);
          cost = saturatedAdd(cost, candidates[r].costGpuSec());
        }
        int[] chosen = new int[used];
        for (int i = 0; i < used; i++) {
          chosen[i] = ranks.get(i);
        }
        offers[node] = new Offer(node, tasksFit(node, freed), cost, chosen);
      }
      return offers;
    }

    private void addOnNode(long[] freed, int rank, int node, int sign) {
      var job = candidates[rank].job();
      var shape = job.job().spec().gang().shape();
      Placement p = job.placement();
      for (int i = 0; i < p.nodeCount(); i++) {
        if (p.node(i) == node) {
          freed[0] += (long) sign * p.tasksOn(i) * shape.gpus();
          freed[1] += (long) sign * p.tasksOn(i) * shape.cpus();
          freed[2] += (long) sign * p.tasksOn(i) * shape.memoryBytes();
        }
      }
    }

    /** How many tasks of the gang {@code node} takes with {@code freed} added (as the placer). */
    private int tasksFit(int node, long[] freed) {
      var shape = gang.shape();
      long fit = gang.tasks();
      if (shape.gpus() > 0) {
        long gpus = Math.min(cluster.gpuCount(node), free.usableGpus(node) + freed[0]);
        fit = Math.min(fit, gpus / shape.gpus());
      }
      if (checkCpuMemory) {
        if (shape.cpus() > 0) {
          fit = Math.min(fit, (free.freeCpus(node) + freed[1]) / shape.cpus());
        }
        if (shape.memoryBytes() > 0) {
          long memory = saturatedAdd(free.freeMemoryBytes(node), freed[2]);
          fit = Math.min(fit, memory / shape.memoryBytes());
        }
      }
      return (int) (gang.distinctNodes() ? Math.min(fit, 1) : fit);
    }

    /**
     * The union of the cheapest offers in nodes {@code [start, end)} that cover the gang, or null.
     * Order: least cost per task, then fewer victims, then lower node index.
     */
    private int[] cover(Offer[] offers, int start, int end) {
      var inDomain = new ArrayList<Offer>();
      long tasks = 0;
      for (int node = start; node < end; node++) {
        if (offers[node] != null) {
          inDomain.add(offers[node]);
          tasks += offers[node].tasks();
        }
      }
      if (tasks < gang.tasks()) {
        return null;
      }
      inDomain.sort(
          Comparator.comparingDouble((Offer o) -> (double) o.costGpuSec() / o.tasks())
              .thenComparingInt(o -> o.ranks().length)
              .thenComparingInt(Offer::node));
      boolean[] chosen = new boolean[candidates.length];
      long covered = 0;
      for (int i = 0; i < inDomain.size() && covered < gang.tasks(); i++) {
        covered += inDomain.get(i).tasks();
        for (int r : inDomain.get(i).ranks()) {
          chosen[r] = true;
        }
      }
      int count = 0;
      for (boolean c : chosen) {
        count += c ? 1 : 0;
      }
      int[] union = new int[count];
      for (int r = 0, k = 0; r < chosen.length; r++) {
        if (chosen[r]) {
          union[k++] = r;
        }
      }
      return union;
    }

    private long cost(int[] ranks) {
      long sum = 0;
      for (int r : ranks) {
        sum = saturatedAdd(sum, candidates[r].costGpuSec());
      }
      return sum;
    }

    /**
     * Step 5: from the current (feasible) set, drop victims off the placement's nodes, then try to
     * put back each victim in {@code order}; the result is 1-minimal.
     */
    private Attempt reduce(Placement found, int[] order) {
      Placement placement = found;
      boolean[] onPlacement = new boolean[cluster.nodeCount()];
      for (int node : placement.nodesUnsafe()) {
        onPlacement[node] = true;
      }
      boolean dropped = false;
      for (int r = 0; r < in.length; r++) {
        if (in[r] && !touches(candidates[r].job().placement(), onPlacement)) {
          remove(r);
          dropped = true;
        }
      }
      if (dropped) {
        // The placement found is still valid (its nodes lost nothing); ask the placer again so
        // the plan carries the placement the placer chooses for the final set.
        placement = place();
        Checks.state(placement != null, () -> "placer is not monotone in capacity");
      }
      for (int r : order) {
        if (!in[r]) {
          continue;
        }
        remove(r);
        Placement without = place();
        if (without == null) {
          add(r);
        } else {
          placement = without;
        }
      }
      int count = 0;
      for (boolean b : in) {
        count += b ? 1 : 0;
      }
      int[] ranks = new int[count];
      for (int r = 0, k = 0; r < in.length; r++) {
        if (in[r]) {
          ranks[k++] = r;
        }
      }
      return new Attempt(ranks, cost(ranks), placement);
    }

    private static boolean touches(Placement p, boolean[] nodes) {
      for (int node : p.nodesUnsafe()) {
        if (nodes[node]) {
          return true;
        }
      }
      return false;
    }
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }
}
