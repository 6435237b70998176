package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.UserUpdate;
import io.kairos.protocol.UserView;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code kairos users set NAME --unix-user ACCOUNT}: maps a user to a Unix account. */
@Command(
    name = "set",
    mixinStandardHelpOptions = true,
    description = {
      "Map a user to the Unix account their jobs run as (admins only), for sites whose Kairos"
          + " and Unix names differ. Jobs submitted from now on run as it; jobs already submitted"
          + " keep the account recorded when they were submitted.",
      "Example: kairos users set alice --unix-user asmith",
      ""
    })
final class UsersSetCommand extends ApiCommand {
  @Parameters(paramLabel = "NAME", description = "The user, as their tokens name them.")
  String user;

  @Option(
      names = "--unix-user",
      required = true,
      paramLabel = "ACCOUNT",
      description = "The Unix account on the nodes (passwd or LDAP), e.g. asmith.")
  String unixUser;

  @Override
  int run(ApiClient api, PrintWriter out) {
    JsonNode reply = api.put("/api/v1/users/" + ApiClient.segment(user), new UserUpdate(unixUser));
    if (isJson()) {
      Json.print(out, reply);
      return 0;
    }
    UserView view = Json.convert(reply, UserView.class);
    out.println(view.name() + "'s jobs now run as the Unix account " + view.unixUser());
    return 0;
  }
}
