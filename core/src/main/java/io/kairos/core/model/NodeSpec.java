package io.kairos.core.model;

import io.kairos.core.Checks;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * One host: its GPUs, CPUs, memory, labels and place in the topology.
 *
 * @param nvlinkDomainSize GPUs per NVLink domain inside the node (equal to {@code gpuCount} when
 *     all GPUs of the node share one NVLink domain)
 */
public record NodeSpec(
    String name,
    String gpuModel,
    int gpuCount,
    long gpuMemoryBytes,
    int cpuCount,
    long memoryBytes,
    Map<String, String> labels,
    String zone,
    String block,
    String rack,
    int nvlinkDomainSize) {
  /** GPUs per node are tracked in a 64-bit mask. */
  public static final int MAX_GPUS = 64;

  public NodeSpec {
    Objects.requireNonNull(name, "node.name");
    Checks.argument(!name.isBlank(), () -> "node.name must not be blank");
    Objects.requireNonNull(gpuModel, "node.gpuModel");
    Checks.inRange(gpuCount, 0, MAX_GPUS, "node.gpuCount");
    Checks.nonNegative(gpuMemoryBytes, "node.gpuMemoryBytes");
    Checks.nonNegative(cpuCount, "node.cpuCount");
    Checks.nonNegative(memoryBytes, "node.memoryBytes");
    labels =
        Collections.unmodifiableSortedMap(
            new TreeMap<>(Objects.requireNonNull(labels, "node.labels")));
    Objects.requireNonNull(zone, "node.zone");
    Objects.requireNonNull(block, "node.block");
    Objects.requireNonNull(rack, "node.rack");
    int gpus = gpuCount;
    Checks.argument(
        gpus == 0 ? nvlinkDomainSize >= 0 : nvlinkDomainSize >= 1 && gpus % nvlinkDomainSize == 0,
        () -> "node.nvlinkDomainSize must divide gpuCount " + gpus + ", got " + nvlinkDomainSize);
  }

  /** A node with {@code gpus} GPUs of one NVLink domain, ample CPU and memory. */
  public static NodeSpec simple(String name, int gpus, String zone, String block, String rack) {
    return new NodeSpec(
        name,
        "gpu",
        gpus,
        0,
        1 << 20,
        Long.MAX_VALUE / 4,
        Map.of(),
        zone,
        block,
        rack,
        Math.max(gpus, 1));
  }
}
