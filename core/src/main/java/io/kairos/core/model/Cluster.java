package io.kairos.core.model;

import io.kairos.core.Checks;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The static shape of a cluster: nodes with dense indexes and the topology tree above them.
 *
 * <p>Design note. Nodes are sorted by (zone, block, rack, name) when the cluster is built, so every
 * topology domain is a contiguous range of node indexes. A domain is then two ints, sums over a
 * domain are loops over a range, and "the smallest domain that holds a gang" is a scan over a few
 * hundred ranges rather than a tree walk. Domains at each level are numbered densely in node order:
 * {@code domainStart(level, d)} and {@code domainEnd(level, d)} give the range.
 *
 * <p>Immutable and shared by every snapshot and pass.
 */
public final class Cluster {
  /** The levels that group nodes, innermost first. */
  public static final List<TopologyLevel> GROUP_LEVELS =
      List.of(TopologyLevel.RACK, TopologyLevel.BLOCK, TopologyLevel.ZONE, TopologyLevel.CLUSTER);

  private final NodeSpec[] nodes;
  private final Map<String, Integer> indexByName;
  private final int[] gpuCount;
  private final int[] cpuCount;
  private final long[] memoryBytes;
  private final int[] nvlinkDomainSize;
  private final String[] gpuModel;
  private final int[] gpuModelId;
  private final Map<String, Integer> modelIds = new HashMap<>();
  private final int maxGpusPerNode;
  private final long totalGpus;
  // [level ordinal][domain] -> first node index, plus one extra entry holding the node count.
  private final int[][] domainStarts = new int[TopologyLevel.values().length][];
  // [level ordinal][node] -> domain index at that level.
  private final int[][] domainOfNode = new int[TopologyLevel.values().length][];

  private Cluster(List<NodeSpec> specs) {
    Checks.argument(!specs.isEmpty(), () -> "a cluster needs at least one node");
    var sorted = new ArrayList<>(specs);
    sorted.sort(
        Comparator.comparing(NodeSpec::zone)
            .thenComparing(NodeSpec::block)
            .thenComparing(NodeSpec::rack)
            .thenComparing(NodeSpec::name));
    int n = sorted.size();
    nodes = sorted.toArray(NodeSpec[]::new);
    indexByName = new HashMap<>(n * 2);
    gpuCount = new int[n];
    cpuCount = new int[n];
    memoryBytes = new long[n];
    nvlinkDomainSize = new int[n];
    gpuModel = new String[n];
    gpuModelId = new int[n];
    int maxGpus = 0;
    long total = 0;
    for (int i = 0; i < n; i++) {
      var node = nodes[i];
      var previous = indexByName.put(node.name(), i);
      Checks.argument(previous == null, () -> "node name " + node.name() + " is used twice");
      gpuCount[i] = node.gpuCount();
      cpuCount[i] = node.cpuCount();
      memoryBytes[i] = node.memoryBytes();
      nvlinkDomainSize[i] = Math.max(1, node.nvlinkDomainSize());
      gpuModel[i] = node.gpuModel();
      gpuModelId[i] = modelIds.computeIfAbsent(node.gpuModel(), _ -> modelIds.size());
      maxGpus = Math.max(maxGpus, node.gpuCount());
      total += node.gpuCount();
    }
    maxGpusPerNode = maxGpus;
    totalGpus = total;
    for (TopologyLevel level : GROUP_LEVELS) {
      buildLevel(level);
    }
    // NODE level: each node is its own domain.
    int[] starts = new int[n + 1];
    int[] of = new int[n];
    for (int i = 0; i <= n; i++) {
      starts[i] = i;
    }
    for (int i = 0; i < n; i++) {
      of[i] = i;
    }
    domainStarts[TopologyLevel.NODE.ordinal()] = starts;
    domainOfNode[TopologyLevel.NODE.ordinal()] = of;
  }

  private void buildLevel(TopologyLevel level) {
    int n = nodes.length;
    int[] of = new int[n];
    var starts = new ArrayList<Integer>();
    String previousKey = null;
    for (int i = 0; i < n; i++) {
      String key = key(nodes[i], level);
      if (!key.equals(previousKey)) {
        starts.add(i);
        previousKey = key;
      }
      of[i] = starts.size() - 1;
    }
    int[] array = new int[starts.size() + 1];
    for (int d = 0; d < starts.size(); d++) {
      array[d] = starts.get(d);
    }
    array[starts.size()] = n;
    domainStarts[level.ordinal()] = array;
    domainOfNode[level.ordinal()] = of;
  }

  private static String key(NodeSpec node, TopologyLevel level) {
    return switch (level) {
      case RACK -> node.zone() + '\u0000' + node.block() + '\u0000' + node.rack();
      case BLOCK -> node.zone() + '\u0000' + node.block();
      case ZONE -> node.zone();
      case CLUSTER -> "";
      case NODE, NVLINK -> throw new IllegalArgumentException("not a grouping level: " + level);
    };
  }

  public static Cluster of(List<NodeSpec> nodes) {
    return new Cluster(List.copyOf(nodes));
  }

  /**
   * {@code count} identical nodes of {@code gpusPerNode} GPUs (one NVLink domain each), in racks of
   * {@code nodesPerRack} and blocks of {@code racksPerBlock} racks, one zone.
   */
  public static Cluster uniform(int count, int gpusPerNode, int nodesPerRack, int racksPerBlock) {
    Checks.positive(count, "nodes");
    Checks.inRange(gpusPerNode, 1, NodeSpec.MAX_GPUS, "gpusPerNode");
    Checks.positive(nodesPerRack, "nodesPerRack");
    Checks.positive(racksPerBlock, "racksPerBlock");
    var specs = new ArrayList<NodeSpec>(count);
    int width = Integer.toString(count - 1).length();
    for (int i = 0; i < count; i++) {
      int rack = i / nodesPerRack;
      int block = rack / racksPerBlock;
      specs.add(
          NodeSpec.simple(
              "n" + pad(i, width), gpusPerNode, "z0", "b" + pad(block, 4), "r" + pad(rack, 5)));
    }
    return new Cluster(specs);
  }

  private static String pad(int value, int width) {
    var s = Integer.toString(value);
    return "0".repeat(Math.max(0, width - s.length())) + s;
  }

  public int nodeCount() {
    return nodes.length;
  }

  public NodeSpec node(int index) {
    return nodes[index];
  }

  public Optional<Integer> indexOf(String nodeName) {
    return Optional.ofNullable(indexByName.get(nodeName));
  }

  public int gpuCount(int node) {
    return gpuCount[node];
  }

  public int cpuCount(int node) {
    return cpuCount[node];
  }

  public long memoryBytes(int node) {
    return memoryBytes[node];
  }

  public int nvlinkDomainSize(int node) {
    return nvlinkDomainSize[node];
  }

  public String gpuModel(int node) {
    return gpuModel[node];
  }

  /** A dense id for the node's GPU model, for cheap comparisons on hot paths. */
  public int gpuModelId(int node) {
    return gpuModelId[node];
  }

  /** How many distinct GPU models the nodes have; model ids are {@code 0..count-1}. */
  public int gpuModelCount() {
    return modelIds.size();
  }

  /** The dense id of a GPU model, -2 when no node has it, -1 for "any" (the empty string). */
  public int modelIdOf(String model) {
    if (model.isEmpty()) {
      return -1;
    }
    Integer id = modelIds.get(model);
    return id == null ? -2 : id;
  }

  public int maxGpusPerNode() {
    return maxGpusPerNode;
  }

  public long totalGpus() {
    return totalGpus;
  }

  public int domainCount(TopologyLevel level) {
    Checks.argument(level != TopologyLevel.NVLINK, () -> "NVLink domains are inside nodes");
    return domainStarts[level.ordinal()].length - 1;
  }

  public int domainStart(TopologyLevel level, int domain) {
    return domainStarts[level.ordinal()][domain];
  }

  public int domainEnd(TopologyLevel level, int domain) {
    return domainStarts[level.ordinal()][domain + 1];
  }

  public int domainOf(TopologyLevel level, int node) {
    return domainOfNode[level.ordinal()][node];
  }

  /**
   * The lowest level whose one domain holds all of {@code nodeIndexes}: NODE for one node, RACK
   * when they share a rack, and so on.
   */
  public TopologyLevel spanOf(int[] nodeIndexes, int count) {
    if (count <= 1) {
      return TopologyLevel.NODE;
    }
    for (TopologyLevel level : GROUP_LEVELS) {
      int first = domainOf(level, nodeIndexes[0]);
      boolean same = true;
      for (int i = 1; i < count && same; i++) {
        same = domainOf(level, nodeIndexes[i]) == first;
      }
      if (same) {
        return level;
      }
    }
    return TopologyLevel.CLUSTER;
  }

  /**
   * Whether the empty cluster could hold {@code gang} on GPUs of {@code model} (empty for any): a
   * job that fails this can never start and is rejected at submission.
   */
  public boolean canEverHold(GangSpec gang, String model) {
    return maxTasksEver(gang.shape(), gang.distinctNodes(), modelIdOf(model), null, gang.tasks())
        >= gang.tasks();
  }

  /**
   * {@link #canEverHold(GangSpec, String)} without the nodes named in {@code excludedNodes}: a job
   * whose exclusions leave too few nodes can never start either.
   */
  public boolean canEverHold(GangSpec gang, String model, Set<String> excludedNodes) {
    long[] excluded = excludedMask(excludedNodes);
    int modelId = modelIdOf(model);
    return maxTasksEver(gang.shape(), gang.distinctNodes(), modelId, excluded, gang.tasks())
        >= gang.tasks();
  }

  /**
   * How many tasks of {@code shape} ({@code distinct}: one per node) the empty cluster could hold
   * on GPUs of model {@code modelId} ({@link #modelIdOf}), leaving out the nodes set in {@code
   * excluded} (a mask from {@link #excludedMask}, or null); counting stops at {@code cap}.
   * O(nodes); CPU and memory are not counted (placement checks them).
   */
  public long maxTasksEver(
      TaskShape shape, boolean distinct, int modelId, long[] excluded, long cap) {
    if (modelId == -2) {
      return 0;
    }
    int perTask = shape.gpus();
    long capacity = 0;
    for (int i = 0; i < nodes.length && capacity < cap; i++) {
      if (excluded != null && isSet(excluded, i)) {
        continue;
      }
      if (modelId >= 0 && gpuModelId[i] != modelId) {
        continue;
      }
      if (perTask > gpuCount[i]) {
        continue;
      }
      long fit = perTask == 0 ? cap : gpuCount[i] / perTask;
      capacity += distinct ? Math.min(1, fit) : fit;
    }
    return Math.min(capacity, cap);
  }

  /**
   * The node indexes named in {@code names} as a bit set ({@code (mask[i >>> 6] >>> i & 1) == 1}
   * for node {@code i}), or null when none of the names is a node of this cluster: callers keep
   * null as the "nothing excluded" fast path.
   */
  public long[] excludedMask(Set<String> names) {
    if (names.isEmpty()) {
      return null;
    }
    long[] mask = null;
    for (String name : names) {
      Integer index = indexByName.get(name);
      if (index != null) {
        if (mask == null) {
          mask = new long[(nodes.length + 63) >>> 6];
        }
        mask[index >>> 6] |= 1L << index;
      }
    }
    return mask;
  }

  /** Whether node {@code node} is set in a mask from {@link #excludedMask}. */
  public static boolean isSet(long[] mask, int node) {
    return (mask[node >>> 6] & (1L << node)) != 0;
  }
}
