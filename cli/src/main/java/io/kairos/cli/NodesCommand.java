package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.NodeView;
import java.io.PrintWriter;
import java.util.List;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;

/** {@code kairos nodes}: the cluster's nodes, like Slurm's sinfo; drain and resume below it. */
@Command(
    name = "nodes",
    mixinStandardHelpOptions = true,
    subcommands = {NodeDrainCommand.class, NodeResumeCommand.class},
    description = {
      "List nodes (like sinfo): state, GPUs in use of all, GPU model, the jobs running there and"
          + " why a node is drained or down.",
      "UP nodes take new work; DRAINED ones finish what they run and take nothing new; DOWN ones"
          + " lost their agent.",
      ""
    })
final class NodesCommand extends ApiCommand {
  @Override
  int run(ApiClient api, PrintWriter out) {
    JsonNode reply = api.get("/api/v1/nodes");
    List<NodeView> nodes = Json.list(reply, NodeView.class);
    if (isJson()) {
      Json.print(out, reply);
      return 0;
    }
    // The account column only where some agent is not root: it runs only that account's jobs.
    boolean accounts = nodes.stream().anyMatch(n -> n.runsOnlyAs() != null);
    var table =
        accounts
            ? new Table(
                "NODE", "STATE", "GPUS", "MODEL", "JOBS", "LIVENESS", "RUNS JOBS OF", "REASON")
            : new Table("NODE", "STATE", "GPUS", "MODEL", "JOBS", "LIVENESS", "REASON");
    for (NodeView n : nodes) {
      var cells =
          new java.util.ArrayList<Object>(
              List.of(n.name(), n.state(), n.gpusUsed() + "/" + n.gpus()));
      cells.add(n.gpuModel());
      cells.add(jobs(n.jobs()));
      cells.add(liveness(n));
      if (accounts) {
        cells.add(n.runsOnlyAs() == null ? "any user" : n.runsOnlyAs() + " only");
      }
      cells.add(n.reason());
      table.row(cells.toArray());
    }
    table.print(out);
    return 0;
  }

  /**
   * The leader's failure detector: "ALIVE", or "SUSPECT phi=4.2" when heartbeats are late; "-" on a
   * follower.
   */
  static String liveness(NodeView n) {
    if (n.liveness() == null) {
      return "-";
    }
    return n.liveness().equals("SUSPECT") && n.phi() != null
        ? String.format(java.util.Locale.ROOT, "SUSPECT phi=%.1f", n.phi())
        : n.liveness();
  }

  /** Job ids, at most four, then {@code +N}; "-" when none. */
  static String jobs(List<Long> ids) {
    if (ids == null || ids.isEmpty()) {
      return "-";
    }
    String shown = ids.stream().limit(4).map(String::valueOf).collect(Collectors.joining(","));
    return ids.size() > 4 ? shown + ",+" + (ids.size() - 4) : shown;
  }
}
