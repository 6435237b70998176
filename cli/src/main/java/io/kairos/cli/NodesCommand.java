package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.NodeView;
import java.io.PrintWriter;
import java.util.List;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;

/** {@code kairos nodes}: the cluster's nodes, like Slurm's sinfo; drain, resume, reset below it. */
@Command(
    name = "nodes",
    mixinStandardHelpOptions = true,
    subcommands = {NodeDrainCommand.class, NodeResumeCommand.class, NodeResetCommand.class},
    description = {
      "List nodes (like sinfo): state, GPUs in use of all, GPU model, the jobs running there and"
          + " why a node is drained or down.",
      "UP nodes take new work; DRAINED ones finish what they run and take nothing new; DOWN ones"
          + " lost their agent. A GPU out of service (its health check failed) takes no work while"
          + " the node serves its other GPUs: GPUS shows how many are out, REASON why.",
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
      var cells = new java.util.ArrayList<Object>(List.of(n.name(), n.state(), gpus(n)));
      cells.add(n.gpuModel());
      cells.add(jobs(n.jobs()));
      cells.add(liveness(n));
      if (accounts) {
        cells.add(n.runsOnlyAs() == null ? "any user" : n.runsOnlyAs() + " only");
      }
      cells.add(reason(n));
      table.row(cells.toArray());
    }
    table.print(out);
    return 0;
  }

  /** GPUs in use of all, and how many are out of service: "3/8", "3/8 (1 out)". */
  static String gpus(NodeView n) {
    var out = n.gpusOutOfService();
    return n.gpusUsed()
        + "/"
        + n.gpus()
        + (out == null || out.isEmpty() ? "" : " (" + out.size() + " out)");
  }

  /**
   * Why the node is drained or down, then each GPU out of service with why: "GPU 2 out of service:
   * uncorrectable ECC errors rose 0 -> 2"; "-" when none.
   */
  static String reason(NodeView n) {
    var parts = new java.util.ArrayList<String>();
    if (n.reason() != null) {
      parts.add(n.reason());
    }
    if (n.gpusOutOfService() != null) {
      new java.util.TreeMap<>(n.gpusOutOfService())
          .forEach((gpu, why) -> parts.add("GPU " + gpu + " out of service: " + why));
    }
    return parts.isEmpty() ? null : String.join("; ", parts);
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
