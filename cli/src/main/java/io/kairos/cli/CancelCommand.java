package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code kairos cancel ID...}: cancels jobs, each on its own; one failing does not stop the rest.
 */
@Command(
    name = "cancel",
    mixinStandardHelpOptions = true,
    description = {
      "Cancel jobs: pending ones never start, running ones are stopped. Each id is cancelled on"
          + " its own; an error for one is printed and the rest go ahead (exit 1 if any failed).",
      "With --output json, prints a JSON array of the jobs as the controller returned them.",
      ""
    })
final class CancelCommand extends ApiCommand {
  @Parameters(paramLabel = "ID", arity = "1..*", description = "Job ids.")
  List<Long> ids;

  @Override
  int run(ApiClient api, PrintWriter out) {
    PrintWriter err = spec.commandLine().getErr();
    ArrayNode replies = Json.MAPPER.createArrayNode();
    int code = 0;
    for (long id : ids) {
      try {
        JsonNode reply = api.post("/api/v1/jobs/" + id + "/cancel", null);
        replies.add(reply);
        if (!isJson()) {
          JobView job = Json.convert(reply, JobView.class);
          out.println(
              job.state().isFinal() && job.state() != JobState.CANCELLED
                  ? "Job " + id + " had already ended: " + job.state()
                  : "Cancelled job " + id);
          out.flush();
        }
      } catch (ApiException e) {
        if (e.isUnreachable()) {
          throw e; // the same for every id: say it once
        }
        err.println("kairos: job " + id + ": " + e.getMessage());
        err.flush();
        code = 1;
      }
    }
    if (isJson()) {
      Json.print(out, replies);
    }
    return code;
  }
}
