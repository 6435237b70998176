package io.kairos.cli;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonMappingException;
import io.kairos.config.StrictYaml;
import io.kairos.core.model.Cluster;
import io.kairos.core.model.NodeSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Turns {@code --cluster} into a {@link Cluster}: either {@code NxG} (N nodes of G GPUs) or a YAML
 * file with node groups and topology sizes (see docs/configuration.md).
 */
final class ClusterSpecs {
  private static final Pattern SHORT = Pattern.compile("(\\d+)x(\\d+)");
  private static final long GIB = 1L << 30;

  private ClusterSpecs() {}

  /** A parsed cluster and the name reports show for it. */
  record Named(Cluster cluster, String name) {}

  static Named parse(String spec, int nodesPerRack, int racksPerBlock) {
    var m = SHORT.matcher(spec.trim());
    if (m.matches()) {
      int nodes = parseInt(m.group(1), "nodes in --cluster " + spec);
      int gpus = parseInt(m.group(2), "GPUs per node in --cluster " + spec);
      if (nodes < 1 || nodes > 1_000_000) {
        throw new UsageException(
            "--cluster " + spec + ": node count must be between 1 and 1000000, got " + nodes);
      }
      if (gpus < 1 || gpus > NodeSpec.MAX_GPUS) {
        throw new UsageException(
            "--cluster " + spec + ": GPUs per node must be between 1 and 64, got " + gpus);
      }
      return new Named(Cluster.uniform(nodes, gpus, nodesPerRack, racksPerBlock), spec.trim());
    }
    Path file = Path.of(spec);
    if (!Files.isRegularFile(file)) {
      throw new UsageException(
          "--cluster "
              + spec
              + ": not NxG (e.g. 64x8) and no such file; give NxG or a YAML"
              + " cluster file");
    }
    return new Named(readYaml(file), file.getFileName().toString());
  }

  private static int parseInt(String s, String what) {
    try {
      return Integer.parseInt(s);
    } catch (NumberFormatException e) {
      throw new UsageException(what + " is too large: " + s);
    }
  }

  /** A group of identical nodes. */
  record NodeGroup(
      @JsonProperty(required = true) int count,
      @JsonProperty(required = true) int gpus,
      String gpuModel,
      Double gpuMemoryGiB,
      Integer nvlinkDomain,
      Integer cpus,
      Double memoryGiB,
      String namePrefix,
      Map<String, String> labels) {}

  /** How nodes group into racks, blocks and zones (in node order). */
  record Topology(Integer nodesPerRack, Integer racksPerBlock, Integer blocksPerZone) {}

  /** The whole file. */
  record ClusterFile(@JsonProperty(required = true) List<NodeGroup> nodes, Topology topology) {}

  static Cluster readYaml(Path file) {
    ClusterFile parsed;
    try {
      parsed = StrictYaml.readValue(file, ClusterFile.class);
    } catch (JsonMappingException e) {
      throw new UsageException(
          file
              + ": field '"
              + path(e)
              + "': "
              + e.getOriginalMessage()
                  .replaceAll("\\s*\\(class [^)]*\\)", "")
                  .lines()
                  .findFirst()
                  .orElse(""));
    } catch (JacksonException e) {
      throw new UsageException(file + ": not valid YAML: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw new UsageException(file + ": cannot read file: " + e.getMessage());
    }
    if (parsed == null || parsed.nodes() == null || parsed.nodes().isEmpty()) {
      throw new UsageException(file + ": field 'nodes': list at least one node group");
    }
    var topology = parsed.topology() == null ? new Topology(null, null, null) : parsed.topology();
    int perRack = positive(file, "topology.nodesPerRack", topology.nodesPerRack(), 16);
    int perBlock = positive(file, "topology.racksPerBlock", topology.racksPerBlock(), 8);
    int perZone = positive(file, "topology.blocksPerZone", topology.blocksPerZone(), 1 << 20);
    var specs = new ArrayList<NodeSpec>();
    int index = 0;
    for (int g = 0; g < parsed.nodes().size(); g++) {
      var group = parsed.nodes().get(g);
      String at = "nodes[" + g + "]";
      if (group.count() < 1 || group.count() > 1_000_000) {
        throw new UsageException(
            file + ": field '" + at + ".count': must be 1..1000000, got " + group.count());
      }
      if (group.gpus() < 0 || group.gpus() > NodeSpec.MAX_GPUS) {
        throw new UsageException(
            file + ": field '" + at + ".gpus': must be 0..64, got " + group.gpus());
      }
      int nvlink = group.nvlinkDomain() == null ? Math.max(1, group.gpus()) : group.nvlinkDomain();
      if (group.gpus() > 0 && (nvlink < 1 || group.gpus() % nvlink != 0)) {
        throw new UsageException(
            file
                + ": field '"
                + at
                + ".nvlinkDomain': must divide gpus ("
                + group.gpus()
                + "), got "
                + nvlink);
      }
      String prefix = group.namePrefix() == null ? "n" : group.namePrefix();
      for (int i = 0; i < group.count(); i++, index++) {
        int rack = index / perRack;
        int block = rack / perBlock;
        int zone = block / perZone;
        specs.add(
            new NodeSpec(
                prefix + String.format("%05d", index),
                group.gpuModel() == null ? "gpu" : group.gpuModel(),
                group.gpus(),
                group.gpuMemoryGiB() == null ? 0 : (long) (group.gpuMemoryGiB() * GIB),
                group.cpus() == null ? 1 << 20 : group.cpus(),
                group.memoryGiB() == null ? Long.MAX_VALUE / 4 : (long) (group.memoryGiB() * GIB),
                group.labels() == null ? Map.of() : group.labels(),
                String.format("z%03d", zone),
                String.format("b%04d", block),
                String.format("r%05d", rack),
                nvlink));
      }
    }
    try {
      return Cluster.of(specs);
    } catch (IllegalArgumentException e) {
      throw new UsageException(file + ": " + e.getMessage());
    }
  }

  private static int positive(Path file, String field, Integer value, int fallback) {
    if (value == null) {
      return fallback;
    }
    if (value < 1) {
      throw new UsageException(file + ": field '" + field + "': must be >= 1, got " + value);
    }
    return value;
  }

  private static String path(JsonMappingException e) {
    String path = StrictYaml.keyPath(e);
    return path.isEmpty() ? "(top level)" : path;
  }
}
