package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.NodeView;
import java.io.PrintWriter;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code kairos nodes drain NAME}: the node finishes its jobs and takes no new ones. */
@Command(
    name = "drain",
    mixinStandardHelpOptions = true,
    description = {
      "Drain a node: jobs running there finish, nothing new is placed on it until"
          + " `kairos nodes resume NAME`. Admins only.",
      ""
    })
final class NodeDrainCommand extends ApiCommand {
  @Parameters(paramLabel = "NAME", description = "The node.")
  String node;

  @Option(
      names = "--reason",
      paramLabel = "TEXT",
      description = "Why, for others to read in `kairos nodes`.")
  String reason;

  @Override
  int run(ApiClient api, PrintWriter out) {
    JsonNode reply =
        api.post(
            "/api/v1/nodes/" + ApiClient.segment(node) + "/drain",
            reason == null ? null : Map.of("reason", reason));
    if (isJson()) {
      Json.print(out, reply);
    } else {
      NodeView view = Json.convert(reply, NodeView.class);
      out.println(
          "Drained node "
              + node
              + (view.jobs() == null || view.jobs().isEmpty()
                  ? ""
                  : " (" + view.jobs().size() + " jobs still running there)"));
    }
    return 0;
  }
}
