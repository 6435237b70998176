package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.UserView;
import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine.Command;

/**
 * {@code kairos users}: the user table (admins only): who each user's jobs run as on the nodes.
 * Lists it; {@code users set} changes a row.
 */
@Command(
    name = "users",
    mixinStandardHelpOptions = true,
    subcommands = {UsersSetCommand.class},
    description = {
      "List the users (admins only): every user holding a token or set in the user table, and the"
          + " Unix account their jobs run as on the nodes. By default a user's jobs run as the"
          + " account of the same name; `kairos users set` maps them to another.",
      ""
    })
final class UsersCommand extends ApiCommand {
  @Override
  int run(ApiClient api, PrintWriter out) {
    JsonNode reply = api.get("/api/v1/users");
    if (isJson()) {
      Json.print(out, reply);
      return 0;
    }
    List<UserView> users = Json.list(reply, UserView.class);
    var table = new Table("USER", "UNIX ACCOUNT", "SET BY");
    for (UserView u : users) {
      table.row(u.name(), u.unixUser(), u.mapped() ? "admin" : "default");
    }
    table.print(out);
    return 0;
  }
}
