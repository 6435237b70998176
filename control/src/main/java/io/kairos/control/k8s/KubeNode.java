package io.kairos.control.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Objects;

/**
 * A Kubernetes node as the extender sees it: its allocatable GPUs and its place in the topology,
 * read from labels (see {@link GpuDemand#node}). {@code raw} is the object as it came, answered
 * back unchanged by filter; null for nodes known only by name.
 */
public record KubeNode(
    String name,
    int gpus,
    String gpuModel,
    String zone,
    String block,
    String rack,
    int nvlinkDomainSize,
    JsonNode raw) {
  public KubeNode {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(gpuModel, "gpuModel");
    Objects.requireNonNull(zone, "zone");
    Objects.requireNonNull(block, "block");
    Objects.requireNonNull(rack, "rack");
  }
}
