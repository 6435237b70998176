package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code kairos nodes reset NAME}: forget a node's credential, so a join token registers it. */
@Command(
    name = "reset",
    mixinStandardHelpOptions = true,
    description = {
      "Reset a node (admins only): forget the credential its agent proves itself with, and fence"
          + " that agent. The node is DOWN and its jobs are requeued (once the fenced agent's"
          + " lease has run out); an agent may then register the name again with a join token."
          + " For an agent whose data directory (and so credential) was lost, or a credential"
          + " that leaked.",
      ""
    })
final class NodeResetCommand extends ApiCommand {
  @Parameters(paramLabel = "NAME", description = "The node.")
  String node;

  @Override
  int run(ApiClient api, PrintWriter out) {
    JsonNode reply = api.post("/api/v1/nodes/" + ApiClient.segment(node) + "/reset", null);
    if (isJson()) {
      Json.print(out, reply);
    } else {
      out.println(
          "Reset node "
              + node
              + ": its credential is forgotten and it is DOWN until an agent joins as "
              + node
              + " with a join token");
    }
    return 0;
  }
}
