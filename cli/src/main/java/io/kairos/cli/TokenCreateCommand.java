package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.TokenCreated;
import io.kairos.protocol.TokenRequest;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kairos token create --user NAME}: a new bearer token, printed once. */
@Command(
    name = "create",
    mixinStandardHelpOptions = true,
    description = {
      "Create a bearer token for a user (admins only). The token is printed once on stdout (the"
          + " controller keeps only its hash); a hint on how to use it goes to stderr.",
      "Example: TOKEN=$(kairos token create --user alice)",
      ""
    })
final class TokenCreateCommand extends ApiCommand {
  @Option(
      names = "--user",
      required = true,
      paramLabel = "NAME",
      description = "Who the token is for.")
  String user;

  @Option(
      names = "--admin",
      description =
          "The token may also act as an admin (create tokens, drain nodes, submit for others).")
  boolean admin;

  @Override
  int run(ApiClient api, PrintWriter out) {
    JsonNode reply =
        api.post("/api/v1/tokens", new TokenRequest(user, admin ? Boolean.TRUE : null));
    if (isJson()) {
      Json.print(out, reply);
      return 0;
    }
    TokenCreated created = Json.convert(reply, TokenCreated.class);
    out.println(created.token());
    out.flush();
    PrintWriter err = spec.commandLine().getErr();
    err.println(
        "Token for "
            + created.user()
            + (created.admin() ? " (admin)" : "")
            + ", shown once. Use it with: export KAIROS_TOKEN="
            + created.token());
    err.flush();
    return 0;
  }
}
