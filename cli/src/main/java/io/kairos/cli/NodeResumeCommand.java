package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.NodeState;
import io.kairos.protocol.NodeView;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code kairos nodes resume NAME}: a drained node takes work again. */
@Command(
    name = "resume",
    mixinStandardHelpOptions = true,
    description = {"Resume a drained node: it takes new work again. Admins only.", ""})
final class NodeResumeCommand extends ApiCommand {
  @Parameters(paramLabel = "NAME", description = "The node.")
  String node;

  @Override
  int run(ApiClient api, PrintWriter out) {
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
