package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.TokenView;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code kairos token revoke ID}: the token is refused from now on, on every replica. */
@Command(
    name = "revoke",
    mixinStandardHelpOptions = true,
    description = {
      "Revoke a token or an extender certificate (admins only): every replica refuses it (401)"
          + " once the revocation is committed. ID is what `kairos token list` shows (or more of"
          + " the hash). The bootstrap DATA/admin.token and DATA/join.token can be revoked too;"
          + " delete the file and restart for a new one.",
      ""
    })
final class TokenRevokeCommand extends ApiCommand {
  @Parameters(paramLabel = "ID", description = "The token's ID, from `kairos token list`.")
  String id;

  @Override
  int run(ApiClient api, PrintWriter out) {
    JsonNode reply = api.delete("/api/v1/tokens/" + ApiClient.segment(id));
    if (isJson()) {
      Json.print(out, reply);
      return 0;
    }
    TokenView t = Json.convert(reply, TokenView.class);
    out.println(
        "Revoked "
            + t.role()
            + " token "
            + t.id()
            + " of "
            + t.user()
            + " ("
            + t.revokedAt()
            + ")");
    return 0;
  }
}
