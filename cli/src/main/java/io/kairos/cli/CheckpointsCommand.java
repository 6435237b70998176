package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.CheckpointList;
import io.kairos.protocol.CheckpointView;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code kairos checkpoints ID}: a checkpointing job's complete checkpoints, newest last. */
@Command(
    name = "checkpoints",
    mixinStandardHelpOptions = true,
    description = {
      "List a job's complete checkpoints as Kairos recorded them (step, when, size, manifest),"
          + " oldest first: the last is the one the job's next attempt restores.",
      ""
    })
final class CheckpointsCommand extends ApiCommand {
  @Parameters(paramLabel = "ID", description = "The job id.")
  long id;

  @Override
  int run(ApiClient api, PrintWriter out) {
    JsonNode reply = api.get("/api/v1/jobs/" + id + "/checkpoints");
    if (isJson()) {
      Json.print(out, reply);
      return 0;
    }
    CheckpointList list = Json.convert(reply, CheckpointList.class);
    if (list.signal() == null) {
      out.println("job " + id + " does not declare checkpoints");
      out.flush();
      return 0;
    }
    out.printf(
        "job %d: checkpoint on SIG%s (timeout %ds), every %s, keeps %d%n",
        id,
        list.signal(),
        list.timeoutSec(),
        list.everySec() == 0 ? "time it is asked" : list.everySec() + "s",
        list.keep());
    var table = new Table("STEP", "ATTEMPT", "RECORDED", "SIZE", "FILES", "MANIFEST");
    for (CheckpointView c : list.checkpoints()) {
      table.row(
          c.step(),
          c.attempt(),
          TimeFormat.full(c.time(), Environment.zone),
          size(c.sizeBytes()),
          c.files(),
          c.manifest());
    }
    table.print(out);
    return 0;
  }

  static String size(long bytes) {
    if (bytes < 1024) {
      return bytes + " B";
    }
    String[] units = {"KiB", "MiB", "GiB", "TiB"};
    double v = bytes;
    int u = -1;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return String.format(java.util.Locale.ROOT, "%.1f %s", v, units[u]);
  }
}
