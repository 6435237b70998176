package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.NodeState;
import io.kairos.protocol.NodeView;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code kairos nodes resume NAME}: a drained node takes work again; with {@code --gpu N}, one GPU
 * out of service returns to service.
 */
@Command(
    name = "resume",
    mixinStandardHelpOptions = true,
    description = {
      "Resume a drained node: it takes new work again. With --gpu N, return GPU N of the node to"
          + " service instead (taken out alone by a failed health check). Admins only.",
      ""
    })
final class NodeResumeCommand extends ApiCommand {
  @Parameters(paramLabel = "NAME", description = "The node.")
  String node;

  @Option(
      names = "--gpu",
      paramLabel = "N",
      description = "Return GPU N (its index, as `kairos nodes` shows it) to service.")
  Integer gpu;

  @Override
  int run(ApiClient api, PrintWriter out) {
    if (gpu != null) {
      JsonNode reply =
          api.post("/api/v1/nodes/" + ApiClient.segment(node) + "/gpus/" + gpu + "/resume", null);
      if (isJson()) {
        Json.print(out, reply);
      } else {
        out.println("GPU " + gpu + " of node " + node + " is back in service");
      }
      return 0;
    }
    JsonNode reply = api.post("/api/v1/nodes/" + ApiClient.segment(node) + "/resume", null);
    if (isJson()) {
      Json.print(out, reply);
    } else {
      NodeView view = Json.convert(reply, NodeView.class);
      out.println(
          "Resumed node "
              + node
              + (view.state() == NodeState.DOWN
                  ? " (it is DOWN: it takes work once its agent is back)"
                  : ""));
    }
    return 0;
  }
}
