package io.kairos.testkit;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.NodeSpec;
import io.kairos.core.model.TopologyLevel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Cluster helpers for tests.
 *
 * <p>The builder names nodes {@code n0000, n0001, ...} in the order they are added, so when blocks
 * and racks are added in name order (as in every example) node index {@code i} is the i-th node
 * added:
 *
 * <pre>{@code
 * Cluster c = Clusters.builder()
 *     .rack("b0", "r0", 2, 8)        // nodes 0, 1: 8 GPUs in one NVLink domain
 *     .rack("b0", "r1", 2, 8, 4)     // nodes 2, 3: 8 GPUs in two NVLink domains of 4
 *     .rack("b1", "r2", 1, 4)        // node 4
 *     .build();
 * }</pre>
 */
public final class Clusters {
  private Clusters() {}

  /** {@link Cluster#uniform}: {@code nodes} nodes of {@code gpus} GPUs in racks and blocks. */
  public static Cluster uniform(int nodes, int gpus, int nodesPerRack, int racksPerBlock) {
    return Cluster.uniform(nodes, gpus, nodesPerRack, racksPerBlock);
  }

  /** {@code nodes} nodes of {@code gpus} GPUs, all in one rack. */
  public static Cluster oneRack(int nodes, int gpus) {
    return Cluster.uniform(nodes, gpus, nodes, 1);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A node of {@code gpus} GPUs in NVLink domains of {@code nvlink}, ample CPU and memory. */
  public static NodeSpec node(
      String name, int gpus, int nvlink, String zone, String block, String rack) {
    return new NodeSpec(
        name, "gpu", gpus, 0, 1 << 20, Long.MAX_VALUE / 4, Map.of(), zone, block, rack, nvlink);
  }

  /** A compact description for failure messages: racks and their nodes' GPU counts. */
  public static String describe(Cluster c) {
    var sb = new StringBuilder();
    sb.append(c.nodeCount()).append(" nodes, ").append(c.totalGpus()).append(" GPUs: ");
    for (int r = 0; r < c.domainCount(TopologyLevel.RACK); r++) {
      int start = c.domainStart(TopologyLevel.RACK, r);
      var first = c.node(start);
      sb.append('[')
          .append(first.zone())
          .append('/')
          .append(first.block())
          .append('/')
          .append(first.rack())
          .append(':');
      for (int i = start; i < c.domainEnd(TopologyLevel.RACK, r); i++) {
        sb.append(' ').append(c.gpuCount(i));
        if (c.nvlinkDomainSize(i) != Math.max(1, c.gpuCount(i))) {
          sb.append("/nv").append(c.nvlinkDomainSize(i));
        }
      }
      sb.append(']');
    }
    return sb.toString();
  }

  /** Adds nodes rack by rack. */
  public static final class Builder {
    private final List<NodeSpec> nodes = new ArrayList<>();
    private String zone = "z0";

    private Builder() {}

    /** Nodes added from now on are in {@code zone} (default "z0"). */
    public Builder zone(String zone) {
      this.zone = zone;
      return this;
    }

    /** {@code count} nodes of {@code gpus} GPUs (one NVLink domain each) in one rack. */
    public Builder rack(String block, String rack, int count, int gpus) {
      return rack(block, rack, count, gpus, Math.max(1, gpus));
    }

    /** {@code count} nodes of {@code gpus} GPUs in NVLink domains of {@code nvlink}. */
    public Builder rack(String block, String rack, int count, int gpus, int nvlink) {
      for (int i = 0; i < count; i++) {
        node(block, rack, gpus, nvlink);
      }
      return this;
    }

    /** One node with a generated name. */
    public Builder node(String block, String rack, int gpus, int nvlink) {
      nodes.add(
          Clusters.node(String.format("n%04d", nodes.size()), gpus, nvlink, zone, block, rack));
      return this;
    }

    public Builder add(NodeSpec node) {
      nodes.add(node);
      return this;
    }

    public List<NodeSpec> nodes() {
      return List.copyOf(nodes);
    }

    public Cluster build() {
      return Cluster.of(nodes);
    }
  }
}
