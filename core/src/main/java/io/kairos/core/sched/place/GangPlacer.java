package io.kairos.core.sched.place;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.model.TopologyLevel;
import java.util.Arrays;

/**
 * Finds an all-or-nothing placement for a gang, or none.
 *
 * <p>Design note. Candidates are tried lowest topology level first:
 *
 * <ol>
 *   <li>one node: the node with the fewest free GPUs that holds the whole gang (best fit keeps
 *       large holes for large gangs), found through the ledger's free-count buckets when the view
 *       has them;
 *   <li>one rack, then one block, then one zone, then the cluster: among domains whose usable tasks
 *       add up to the gang, the one with the least left over (best fit), ties to the lowest domain
 *       index. Per-domain upper bounds skip domains that cannot hold it without visiting their
 *       nodes.
 * </ol>
 *
 * <p>Inside the chosen domain, nodes that can take the most tasks are used first (fewest nodes),
 * and the last, partial node is the best fit for what remains. Placement succeeds exactly when the
 * usable tasks over the cluster add up to the gang, so success is monotone in capacity: a gang that
 * fails cannot succeed with less.
 *
 * <p>Stateless; the returned placement has no GPU masks (the ledger chooses GPUs on commit).
 */
public final class GangPlacer {
  private static final int FIT_BITS = 20;
  private static final int MAX_FIT = (1 << FIT_BITS) - 1;

  private final Cluster cluster;
  private final PlacementStrategy strategy;

  public GangPlacer(Cluster cluster) {
    this(cluster, PlacementStrategy.TOPOLOGY);
  }

  public GangPlacer(Cluster cluster, PlacementStrategy strategy) {
    this.cluster = cluster;
    this.strategy = strategy;
  }

  /**
   * A placement for {@code gang} on GPUs of model {@code modelId} ({@link Cluster#modelIdOf}; -1
   * for any), or null when none exists in {@code capacity}. Null rather than Optional: this is
   * called on the pass's hot path.
   */
  public Placement place(GangSpec gang, int modelId, Capacity capacity, boolean checkCpuMemory) {
    return place(gang, modelId, capacity, checkCpuMemory, null);
  }

  /**
   * {@link #place(GangSpec, int, Capacity, boolean)} on nodes not set in {@code excluded} (a mask
   * from {@link Cluster#excludedMask}; null when the job excludes no node, which costs one null
   * check per node visited). No task of the placement is on an excluded node.
   */
  public Placement place(
      GangSpec gang, int modelId, Capacity capacity, boolean checkCpuMemory, long[] excluded) {
    if (modelId == -2) {
      return null;
    }
    if (strategy == PlacementStrategy.FIRST_FIT) {
      return firstFit(gang, modelId, capacity, checkCpuMemory, excluded);
    }
    int tasks = gang.tasks();
    int gpusPerTask = gang.shape().gpus();
    boolean oneNodeMayHold =
        tasks == 1
            || (!gang.distinctNodes() && (long) tasks * gpusPerTask <= cluster.maxGpusPerNode());
    if (oneNodeMayHold) {
      int node = bestSingleNode(gang, modelId, capacity, checkCpuMemory, excluded);
      if (node >= 0) {
        return Placement.adopt(new int[] {node}, new int[] {tasks}, new long[1]);
      }
      if (tasks == 1) {
        return null;
      }
    }
    long neededGpus = (long) tasks * gpusPerTask;
    int previousDomains = -1;
    for (TopologyLevel level : Cluster.GROUP_LEVELS) {
      int domains = cluster.domainCount(level);
      if (domains == previousDomains) {
        continue; // nested partitions with as many parts are the same partition: already tried
      }
      previousDomains = domains;
      if (domains == 1) {
        // One domain is the whole cluster: no choice to make, select (null if it cannot hold).
        return selectNodes(
            gang, modelId, capacity, checkCpuMemory, excluded, 0, cluster.nodeCount());
      }
      int bestDomain = -1;
      long bestLeftover = Long.MAX_VALUE;
      for (int d = 0; d < domains; d++) {
        if (capacity.domainUpperBound(level, d) < neededGpus) {
          continue;
        }
        long fit = 0;
        long usable = 0;
        int end = cluster.domainEnd(level, d);
        for (int node = cluster.domainStart(level, d); node < end; node++) {
          int f = tasksFit(node, gang, modelId, capacity, checkCpuMemory, excluded);
          if (f > 0) {
            fit += f;
            usable += capacity.usableGpus(node);
          }
        }
        if (fit >= tasks && usable - neededGpus < bestLeftover) {
          bestLeftover = usable - neededGpus;
          bestDomain = d;
        }
      }
      if (bestDomain >= 0) {
        return selectNodes(
            gang,
            modelId,
            capacity,
            checkCpuMemory,
            excluded,
            cluster.domainStart(level, bestDomain),
            cluster.domainEnd(level, bestDomain));
      }
    }
    return null;
  }

  private Placement firstFit(
      GangSpec gang, int modelId, Capacity capacity, boolean checkCpuMemory, long[] excluded) {
    int remaining = gang.tasks();
    int[] nodes = new int[Math.min(remaining, cluster.nodeCount())];
    int[] tasks = new int[nodes.length];
    int used = 0;
    for (int node = 0; node < cluster.nodeCount() && remaining > 0; node++) {
      int fit =
          Math.min(remaining, tasksFit(node, gang, modelId, capacity, checkCpuMemory, excluded));
      if (fit > 0) {
        nodes[used] = node;
        tasks[used++] = fit;
        remaining -= fit;
      }
    }
    return remaining > 0 ? null : sortedPlacement(nodes, tasks, used);
  }

  /**
   * How many tasks of the gang {@code node} can take now, at most the gang's size; 0 on a node set
   * in {@code excluded}. Every placement decision goes through here.
   */
  int tasksFit(
      int node,
      GangSpec gang,
      int modelId,
      Capacity capacity,
      boolean checkCpuMemory,
      long[] excluded) {
    if (excluded != null && Cluster.isSet(excluded, node)) {
      return 0;
    }
    var shape = gang.shape();
    int fit = gang.tasks();
    if (shape.gpus() > 0) {
      if (modelId >= 0 && cluster.gpuModelId(node) != modelId) {
        return 0;
      }
      fit = Math.min(fit, capacity.usableGpus(node) / shape.gpus());
    }
    if (checkCpuMemory) {
      if (shape.cpus() > 0) {
        fit = Math.min(fit, capacity.freeCpus(node) / shape.cpus());
      }
      if (shape.memoryBytes() > 0) {
        fit = (int) Math.min(fit, capacity.freeMemoryBytes(node) / shape.memoryBytes());
      }
    }
    return gang.distinctNodes() ? Math.min(fit, 1) : fit;
  }

  private int bestSingleNode(
      GangSpec gang, int modelId, Capacity capacity, boolean checkCpuMemory, long[] excluded) {
    int tasks = gang.tasks();
    int needed = tasks * gang.shape().gpus();
    if (capacity.hasBuckets() && needed > 0) {
      // Buckets hold nodes by free GPU count: the first node that passes in the lowest bucket
      // is the best fit by free count. Usable may be below free (reservations), so check each.
      for (int k = needed; k <= cluster.maxGpusPerNode(); k++) {
        for (int node = capacity.nextNodeWithFree(k, 0);
            node >= 0;
            node = capacity.nextNodeWithFree(k, node + 1)) {
          if (tasksFit(node, gang, modelId, capacity, checkCpuMemory, excluded) >= tasks) {
            return node;
          }
        }
      }
      return -1;
    }
    int best = -1;
    int bestLeftover = Integer.MAX_VALUE;
    for (int node = 0; node < cluster.nodeCount(); node++) {
      if (tasksFit(node, gang, modelId, capacity, checkCpuMemory, excluded) >= tasks) {
        int leftover = capacity.usableGpus(node) - needed;
        if (leftover < bestLeftover) {
          best = node;
          bestLeftover = leftover;
          if (leftover == 0) {
            break;
          }
        }
      }
    }
    return best;
  }

  private Placement selectNodes(
      GangSpec gang,
      int modelId,
      Capacity capacity,
      boolean checkCpuMemory,
      long[] excluded,
      int start,
      int end) {
    int gpusPerTask = gang.shape().gpus();
    long[] keys = new long[end - start];
    int count = 0;
    for (int node = start; node < end; node++) {
      int fit = tasksFit(node, gang, modelId, capacity, checkCpuMemory, excluded);
      if (fit > 0) {
        int leftover = Math.min(255, Math.max(0, capacity.usableGpus(node) - fit * gpusPerTask));
        // Most tasks first, then least left over, then lowest index.
        keys[count++] =
            ((long) (MAX_FIT - Math.min(fit, MAX_FIT)) << 32)
                | ((long) leftover << 24)
                | (node - start);
      }
    }
    Arrays.sort(keys, 0, count);
    int[] chosenNodes = new int[count];
    int[] chosenTasks = new int[count];
    int used = 0;
    int remaining = gang.tasks();
    for (int i = 0; i < count && remaining > 0; i++) {
      int node = start + (int) (keys[i] & 0xFF_FFFF);
      int fit = tasksFit(node, gang, modelId, capacity, checkCpuMemory, excluded);
      if (fit <= remaining) {
        chosenNodes[used] = node;
        chosenTasks[used++] = fit;
        remaining -= fit;
        continue;
      }
      // The last, partial node: the best fit for what remains among the nodes not yet used.
      int bestNode = -1;
      int bestLeftover = Integer.MAX_VALUE;
      for (int j = i; j < count; j++) {
        int candidate = start + (int) (keys[j] & 0xFF_FFFF);
        if (tasksFit(candidate, gang, modelId, capacity, checkCpuMemory, excluded) >= remaining) {
          int leftover = capacity.usableGpus(candidate) - remaining * gpusPerTask;
          if (leftover < bestLeftover || (leftover == bestLeftover && candidate < bestNode)) {
            bestLeftover = leftover;
            bestNode = candidate;
          }
        }
      }
      chosenNodes[used] = bestNode;
      chosenTasks[used++] = remaining;
      remaining = 0;
    }
    if (remaining > 0) {
      return null; // only when the domain was not counted first (the whole cluster)
    }
    return sortedPlacement(chosenNodes, chosenTasks, used);
  }

  private static Placement sortedPlacement(int[] nodes, int[] tasks, int used) {
    long[] pairs = new long[used];
    for (int i = 0; i < used; i++) {
      pairs[i] = ((long) nodes[i] << 32) | tasks[i];
    }
    Arrays.sort(pairs);
    int[] sortedNodes = new int[used];
    int[] sortedTasks = new int[used];
    for (int i = 0; i < used; i++) {
      sortedNodes[i] = (int) (pairs[i] >>> 32);
      sortedTasks[i] = (int) pairs[i];
    }
    return Placement.adopt(sortedNodes, sortedTasks, new long[used]);
  }
}
