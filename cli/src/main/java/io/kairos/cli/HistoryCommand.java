package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.kairos.protocol.JobView;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kairos history}: finished jobs, like Slurm's sacct. */
@Command(
    name = "history",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "List finished jobs (succeeded, failed, cancelled), the most recently ended last"
          + " (like sacct).",
      "START and END are local times; ELAPSED is END - START; EXIT is the exit code of the"
          + " first failed task, or 0.",
      ""
    })
final class HistoryCommand extends ApiCommand {
  static final String FINAL_STATES = "SUCCEEDED,FAILED,CANCELLED";

  @Option(
      names = "--limit",
      paramLabel = "N",
      defaultValue = "50",
      description = "At most N jobs, the most recent (default: ${DEFAULT-VALUE}).")
  int limit;

  @Option(names = "--user", paramLabel = "USER", description = "Only this user's jobs.")
  String user;

  @Option(names = "--queue", paramLabel = "QUEUE", description = "Only this queue's jobs.")
  String queue;

  @Override
  int run(ApiClient api, PrintWriter out) {
    if (limit < 1) {
      throw new UsageException("--limit must be at least 1, got " + limit);
    }
    var params = new LinkedHashMap<String, String>();
    params.put("state", FINAL_STATES);
    params.put("user", user);
    params.put("queue", queue);
    params.put("limit", String.valueOf(limit));
    JsonNode reply = api.get("/api/v1/jobs" + ApiClient.query(params));
    List<JobView> views = Json.list(reply, JobView.class);
    // Most recently ended last; the server sorts by id, and a job that waited long ends late.
    var order = new ArrayList<Integer>();
    for (int i = 0; i < views.size(); i++) {
      order.add(i);
    }
    Comparator<Integer> byEnd =
        Comparator.comparing(
            (Integer i) -> TimeFormat.parse(views.get(i).endTime()),
            Comparator.nullsFirst(Comparator.<Instant>naturalOrder()));
    order.sort(byEnd.thenComparingLong(i -> views.get(i).id()));
    List<Integer> shown = order.subList(Math.max(0, order.size() - limit), order.size());
    if (isJson()) {
      ArrayNode array = Json.MAPPER.createArrayNode();
      shown.forEach(i -> array.add(reply.get(i)));
      Json.print(out, array);
      return 0;
    }
    Instant now = Environment.clock.instant();
    var table = new Table("ID", "NAME", "USER", "STATE", "GPUS", "START", "END", "ELAPSED", "EXIT");
    for (int i : shown) {
      JobView j = views.get(i);
      table.row(
          j.id(),
          j.name(),
          j.user(),
          j.state(),
          j.gpus(),
          TimeFormat.compact(j.startTime(), now, Environment.zone),
          TimeFormat.compact(j.endTime(), now, Environment.zone),
          TimeFormat.elapsed(j.startTime(), j.endTime()),
          j.exitCode() == null ? "-" : j.exitCode());
    }
    table.print(out);
    return 0;
  }
}
