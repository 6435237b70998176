package io.kairos.cli;

import io.kairos.protocol.NodeState;
import io.kairos.protocol.NodeView;
import io.kairos.protocol.QueueView;
import io.kairos.protocol.names.GpuModels;
import io.kairos.protocol.slurm.HostList;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;

/**
 * {@code kairos sinfo} (installed as {@code sinfo}): Slurm's sinfo over the Kairos API. Each queue
 * is a partition of every node (Kairos does not split nodes among queues); {@code default}, or the
 * first queue, is the default partition ({@code *}). Nodes are grouped by state as sinfo groups
 * them ({@code idle}, {@code mix}, {@code alloc}, {@code drain}, {@code drng}, {@code down});
 * {@code -N} lists them one per line, {@code -o} takes sinfo's fields, and GPUs show as {@code
 * gpu:KEY:N} with the model's key ({@link GpuModels}).
 */
@Command(name = "sinfo", description = "Slurm's sinfo: list partitions and nodes (--help).")
final class SinfoCommand extends SlurmCommand {
  static final String DEFAULT_FORMAT = "%#P %.5a %.10l %.6D %.6t %N";
  static final String NODE_FORMAT = "%#N %.6D %#P %6t";
  static final String SUMMARY_FORMAT = "%#P %.5a %.10l %.16F  %N";
  static final String LONG_FORMAT = "%#P %.5a %.10l %.6D %.11T %N";
  static final String REASON_FORMAT = "%#E %N";

  private static final List<SlurmArgs.Spec> SPECS =
      SlurmArgs.specs(
          "Node",
          "N",
          "format",
          "o:",
          "noheader",
          "h",
          "long",
          "l",
          "summarize",
          "s",
          "partition",
          "p:",
          "nodes",
          "n:",
          "states",
          "t:",
          "list-reasons",
          "R",
          "exact",
          "e",
          "all",
          "a",
          "responding",
          "r",
          "dead",
          "d",
          "verbose",
          "v");

  private static final Map<Character, String> HEADERS =
      Map.ofEntries(
          Map.entry('P', "PARTITION"),
          Map.entry('R', "PARTITION"),
          Map.entry('a', "AVAIL"),
          Map.entry('l', "TIMELIMIT"),
          Map.entry('D', "NODES"),
          Map.entry('t', "STATE"),
          Map.entry('T', "STATE"),
          Map.entry('N', "NODELIST"),
          Map.entry('n', "HOSTNAMES"),
          Map.entry('G', "GRES"),
          Map.entry('c', "CPUS"),
          Map.entry('m', "MEMORY"),
          Map.entry('F', "NODES(A/I/O/T)"),
          Map.entry('E', "REASON"));

  /** One row: a partition and the nodes of one state in it (one node with {@code -N}). */
  private record Row(String partition, boolean isDefault, String state, List<NodeView> nodes) {}

  @Override
  String name() {
    return "sinfo";
  }

  @Override
  String usage() {
    return """
        Usage: sinfo [OPTIONS]   (Kairos' sinfo; see docs/slurm.md)
          -N, --Node           one line per node        -s, --summarize   A/I/O/T counts
          -l, --long           the long format          -R, --list-reasons  drained and down nodes
          -p, --partition=LIST these queues             -n, --nodes=LIST    these nodes
          -t, --states=LIST    idle, mix, alloc, drain, drng, down
          -o, --format=FORMAT  %[#][.][width]letter: P R a l D t T N n G c m F E
          -h, --noheader       no header line
        """;
  }

  @Override
  int run(ApiClient api, List<String> words, PrintWriter out, PrintWriter err) {
    var a = SlurmArgs.parse(name(), words, SPECS, true);
    List<NodeView> nodes = Json.list(api.get("/api/v1/nodes"), NodeView.class);
    if (a.has("nodes")) {
      var wanted = new ArrayList<String>();
      a.list("nodes").forEach(n -> wanted.addAll(HostList.expand(n)));
      nodes = nodes.stream().filter(n -> wanted.contains(n.name())).toList();
    }
    if (a.has("states")) {
      List<String> states = a.list("states").stream().map(String::toLowerCase).toList();
      nodes =
          nodes.stream()
              .filter(n -> states.contains(compactState(n)) || states.contains(longState(n)))
              .toList();
    }
    if (a.has("list-reasons")) {
      nodes = nodes.stream().filter(n -> n.state() != NodeState.UP).toList();
    }
    List<String> partitions = partitions(api);
    String defaultPartition = partitions.contains("default") ? "default" : partitions.getFirst();
    if (a.has("partition")) {
      List<String> wanted = a.list("partition");
      partitions =
          partitions.stream().filter(p -> wanted.stream().anyMatch(p::equalsIgnoreCase)).toList();
    }
    boolean perNode = a.has("Node");
    var rows = new ArrayList<Row>();
    for (String p : partitions) {
      boolean isDefault = p.equals(defaultPartition);
      if (perNode || a.has("summarize")) {
        if (perNode) {
          nodes.forEach(n -> rows.add(new Row(p, isDefault, compactState(n), List.of(n))));
        } else {
          rows.add(new Row(p, isDefault, "", nodes));
        }
        continue;
      }
      var byState = new LinkedHashMap<String, List<NodeView>>();
      for (NodeView n : nodes) {
        String key = a.has("list-reasons") ? n.reason() + "\0" + compactState(n) : compactState(n);
        byState.computeIfAbsent(key, k -> new ArrayList<>()).add(n);
      }
      byState.forEach(
          (state, group) -> rows.add(new Row(p, isDefault, compactState(group.getFirst()), group)));
    }
    String format =
        a.value("format") != null
            ? a.value("format")
            : a.has("list-reasons")
                ? REASON_FORMAT
                : perNode
                    ? NODE_FORMAT
                    : a.has("summarize")
                        ? SUMMARY_FORMAT
                        : a.has("long") ? LONG_FORMAT : DEFAULT_FORMAT;
    List<SlurmFormat.Field> fields = SlurmFormat.percentFormat(format);
    var sized = new ArrayList<SlurmFormat.Field>();
    for (SlurmFormat.Field f : fields) {
      if (f.literal() != null) {
        sized.add(f);
        continue;
      }
      char letter = f.key().charAt(0);
      if (!HEADERS.containsKey(letter)) {
        throw new UsageException("Invalid node format specification: " + letter);
      }
      if (f.width() == SlurmFormat.AUTO) {
        int w = HEADERS.get(letter).length();
        for (Row r : rows) {
          w = Math.max(w, value(letter, r).length());
        }
        sized.add(f.withWidth(w));
      } else {
        sized.add(f);
      }
    }
    if (!a.has("noheader")) {
      out.println(line(sized, f -> HEADERS.get(f.key().charAt(0))));
    }
    for (Row r : rows) {
      out.println(line(sized, f -> value(f.key().charAt(0), r)));
    }
    return 0;
  }

  /** The queues: the controller's (its tenancy file's, else those in use), else "default". */
  private static List<String> partitions(ApiClient api) {
    var names = new ArrayList<String>();
    for (QueueView q : Json.list(api.get("/api/v1/queues"), QueueView.class)) {
      names.add(q.name());
    }
    if (names.isEmpty()) {
      names.add("default");
    }
    return names;
  }

  private static String line(
      List<SlurmFormat.Field> fields, java.util.function.Function<SlurmFormat.Field, String> v) {
    var sb = new StringBuilder();
    for (SlurmFormat.Field f : fields) {
      sb.append(f.literal() != null ? f.literal() : f.fit(v.apply(f)));
    }
    return sb.toString().stripTrailing();
  }

  private static String value(char letter, Row r) {
    List<NodeView> nodes = r.nodes();
    return switch (letter) {
      case 'P' -> r.partition() + (r.isDefault() ? "*" : "");
      case 'R' -> r.partition();
      case 'a' -> "up";
      case 'l' -> "infinite";
      case 'D' -> Integer.toString(nodes.size());
      case 't' -> nodes.isEmpty() ? "n/a" : compactState(nodes.getFirst());
      case 'T' -> nodes.isEmpty() ? "n/a" : longState(nodes.getFirst());
      case 'N' -> HostList.compress(nodes.stream().map(NodeView::name).toList());
      case 'n' -> String.join(",", nodes.stream().map(NodeView::name).toList());
      case 'G' -> nodes.isEmpty() ? "(null)" : gres(nodes.getFirst());
      case 'c' -> nodes.isEmpty() ? "0" : Integer.toString(nodes.getFirst().cpus());
      case 'm' -> nodes.isEmpty() ? "0" : Long.toString(nodes.getFirst().memoryBytes() / (1 << 20));
      case 'F' -> counts(nodes);
      case 'E' ->
          nodes.isEmpty() || nodes.getFirst().reason() == null ? "none" : nodes.getFirst().reason();
      default -> "";
    };
  }

  /** Nodes allocated (some GPU in use), idle, other (drained, down) and in all: {@code A/I/O/T}. */
  private static String counts(List<NodeView> nodes) {
    int alloc = 0;
    int idle = 0;
    int other = 0;
    for (NodeView n : nodes) {
      if (n.state() != NodeState.UP) {
        other++;
      } else if (n.gpusUsed() > 0 || (n.jobs() != null && !n.jobs().isEmpty())) {
        alloc++;
      } else {
        idle++;
      }
    }
    return alloc + "/" + idle + "/" + other + "/" + nodes.size();
  }

  /** A node's GPUs as sinfo's GRES: {@code gpu:h100:8}; {@code (null)} without GPUs. */
  static String gres(NodeView n) {
    if (n.gpus() == 0) {
      return "(null)";
    }
    String key = n.gpuModel() == null ? "" : GpuModels.key(n.gpuModel());
    return "gpu:" + (key.isEmpty() ? "" : key + ":") + n.gpus();
  }

  static String compactState(NodeView n) {
    boolean busy = n.gpusUsed() > 0 || (n.jobs() != null && !n.jobs().isEmpty());
    return switch (n.state()) {
      case DOWN -> "down";
      case DRAINED -> busy ? "drng" : "drain";
      case UP -> !busy ? "idle" : n.gpus() > 0 && n.gpusUsed() >= n.gpus() ? "alloc" : "mix";
    };
  }

  static String longState(NodeView n) {
    return switch (compactState(n)) {
      case "down" -> "down";
      case "drng" -> "draining";
      case "drain" -> "drained";
      case "idle" -> "idle";
      case "alloc" -> "allocated";
      default -> "mixed";
    };
  }
}
