package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.TokenView;
import java.io.PrintWriter;
import picocli.CommandLine.Command;

/** {@code kairos token list}: every credential the cluster knows, never the tokens themselves. */
@Command(
    name = "list",
    mixinStandardHelpOptions = true,
    description = {
      "List the cluster's tokens and extender certificates (admins only): ID (what `kairos token"
          + " revoke` takes), user, role, state, when made, when they expire and their last use"
          + " (written about once a minute, so it may lag a minute). The tokens themselves are"
          + " never shown: the controller keeps only their hashes.",
      ""
    })
final class TokenListCommand extends ApiCommand {
  @Override
  int run(ApiClient api, PrintWriter out) {
    JsonNode reply = api.get("/api/v1/tokens");
    if (isJson()) {
      Json.print(out, reply);
      return 0;
    }
    var table = new Table("ID", "USER", "ROLE", "KIND", "STATE", "CREATED", "EXPIRES", "LAST USED");
    for (TokenView t : Json.list(reply, TokenView.class)) {
      table.row(
          t.id(),
          t.user(),
          t.role(),
          t.kind(),
          t.state() + (t.revokedAt() == null ? "" : " " + t.revokedAt()),
          t.createdAt() == null ? "(bootstrap)" : t.createdAt(),
          t.expiresAt() == null ? "never" : t.expiresAt(),
          t.lastUsedAt() == null ? "-" : t.lastUsedAt());
    }
    table.print(out);
    return 0;
  }
}
