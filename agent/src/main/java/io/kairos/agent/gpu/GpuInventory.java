package io.kairos.agent.gpu;

import io.kairos.protocol.GpuDevice;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The GPUs of one node at one moment: their details in index order, the {@code topo -m} matrix, and
 * the NVLink domains derived from it.
 *
 * <p>An <em>NVLink domain</em> is a set of GPUs connected by NVLink, directly or through other GPUs
 * (the transitive closure of every {@code NV#} cell). On a DGX H100 every pair is {@code NV18}
 * through NVSwitch, so the eight GPUs are one domain; a PCIe box with bridged pairs has domains of
 * two; a GPU with no NVLink is a domain of one. The controller models a node as equal domains of
 * one size that divides the GPU count, hence {@link #nvlinkDomainSize()}.
 *
 * <p>Immutable. Built by {@link Discovery}, or by {@link #of} from parsed output in tests.
 *
 * @param driverVersion e.g. {@code 535.129.03}; "" when unknown (the CSV fallback)
 * @param gpus one entry per GPU, in index order, indexes unique
 * @param topology the matrix; {@link Topology#EMPTY} when {@code topo -m} failed
 * @param nvlinkDomains GPU indexes per domain, each sorted, domains ordered by first index
 * @param warnings what discovery noticed but survived (nvidia-smi stderr lines, a failed {@code
 *     topo -m}); the health checker reads lost-GPU lines from here
 */
public record GpuInventory(
    String driverVersion,
    List<GpuDetails> gpus,
    Topology topology,
    List<List<Integer>> nvlinkDomains,
    List<String> warnings) {
  public GpuInventory {
    Objects.requireNonNull(driverVersion, "driverVersion");
    gpus = List.copyOf(gpus);
    Objects.requireNonNull(topology, "topology");
    nvlinkDomains = nvlinkDomains.stream().map(List::copyOf).toList();
    warnings = List.copyOf(warnings);
    for (int i = 1; i < gpus.size(); i++) {
      if (gpus.get(i - 1).index() >= gpus.get(i).index()) {
        throw new IllegalArgumentException(
            "inventory: GPUs must be in strictly increasing index order, got "
                + gpus.stream().map(GpuDetails::index).toList());
      }
    }
  }

  /** An inventory with the NVLink domains computed from {@code topology}. */
  public static GpuInventory of(
      String driverVersion, List<GpuDetails> gpus, Topology topology, List<String> warnings) {
    List<GpuDetails> sorted =
        gpus.stream().sorted(Comparator.comparingInt(GpuDetails::index)).toList();
    return new GpuInventory(driverVersion, sorted, topology, domains(sorted, topology), warnings);
  }

  /** The wire records, in index order. */
  public List<GpuDevice> devices() {
    return gpus.stream().map(GpuDetails::device).toList();
  }

  public int gpuCount() {
    return gpus.size();
  }

  public Optional<GpuDetails> gpu(int index) {
    return gpus.stream().filter(g -> g.index() == index).findFirst();
  }

  public Optional<GpuDetails> byUuid(String uuid) {
    return gpus.stream().filter(g -> g.uuid().equals(uuid)).findFirst();
  }

  /**
   * The size the controller should model the node's NVLink domains as: the common size when every
   * domain has the same size and that size divides the GPU count; otherwise 1, meaning "treat every
   * GPU as its own domain". The fallback never over-promises NVLink bandwidth: a gang that asks for
   * one domain of 4 is not placed on a node whose domains are 3 and 1. It is also what a node with
   * no GPUs or no topology reports.
   */
  public int nvlinkDomainSize() {
    if (nvlinkDomains.isEmpty()) {
      return 1;
    }
    int size = nvlinkDomains.getFirst().size();
    boolean equal = nvlinkDomains.stream().allMatch(d -> d.size() == size);
    return equal && gpuCount() % size == 0 ? size : 1;
  }

  // Union-find over GPU indexes; an NV# cell in either direction joins two GPUs. GPUs absent from
  // the matrix stay alone.
  private static List<List<Integer>> domains(List<GpuDetails> gpus, Topology topology) {
    List<Integer> indexes = gpus.stream().map(GpuDetails::index).toList();
    int[] parent = new int[indexes.size()];
    for (int i = 0; i < parent.length; i++) {
      parent[i] = i;
    }
    for (int a = 0; a < indexes.size(); a++) {
      for (int b = a + 1; b < indexes.size(); b++) {
        if (topology.link(indexes.get(a), indexes.get(b)).isNvlink()
            || topology.link(indexes.get(b), indexes.get(a)).isNvlink()) {
          parent[find(parent, a)] = find(parent, b);
        }
      }
    }
    var byRoot = new TreeMap<Integer, List<Integer>>();
    for (int i = 0; i < indexes.size(); i++) {
      byRoot.computeIfAbsent(find(parent, i), _ -> new ArrayList<>()).add(indexes.get(i));
    }
    return byRoot.values().stream()
        .sorted(Comparator.comparingInt(List::getFirst))
        .map(List::copyOf)
        .toList();
  }

  private static int find(int[] parent, int i) {
    while (parent[i] != i) {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
    return i;
  }
}
