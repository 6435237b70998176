package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.WhoAmI;
import java.io.PrintWriter;
import picocli.CommandLine.Command;

/** {@code kairos whoami}: who the token belongs to, and which controller answered. */
@Command(
    name = "whoami",
    mixinStandardHelpOptions = true,
    description = {"Show who the token belongs to, and which controller answered.", ""})
final class WhoAmICommand extends ApiCommand {
  @Override
  int run(ApiClient api, PrintWriter out) {
    JsonNode reply = api.get("/api/v1/whoami");
    if (isJson()) {
      Json.print(out, reply);
      return 0;
    }
    WhoAmI me = Json.convert(reply, WhoAmI.class);
    out.println(me.user() + (me.admin() ? " (admin)" : "") + " at " + api.server());
    return 0;
  }
}
