package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.UsageReport;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kairos report}: usage per account, user or queue over a period, like Slurm's sreport. */
@Command(
    name = "report",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Usage per account, user or queue over a period, from the accounting store (like"
          + " sreport): GPU-hours (in all and by GPU model), CPU-hours and the jobs that ran."
          + " Each attempt counts for the part of it inside the period. A user sees their own"
          + " use (and, if the server's --private-data allows, their accounts'); an admin sees"
          + " all. -o csv or -o json for scripts.",
      ""
    })
final class ReportCommand extends ApiCommand {
  @Option(
      names = "--by",
      paramLabel = "account|user|queue",
      defaultValue = "account",
      description = "What the rows are (default: ${DEFAULT-VALUE}).")
  String by;

  @Option(
      names = "--since",
      paramLabel = "TIME",
      description =
          "The period's start (default: a day before --until): an ISO-8601 instant, a date"
              + " (UTC), a duration before now (12h, 7d) or now.")
  String since;

  @Option(
      names = "--until",
      paramLabel = "TIME",
      description = "The period's end, exclusive (default: now).")
  String until;

  @Override
  int run(ApiClient api, PrintWriter out) {
    String group = by.strip().toLowerCase(Locale.ROOT);
    if (!group.equals("account") && !group.equals("user") && !group.equals("queue")) {
      throw new UsageException("--by must be account, user or queue, got '" + by + "'");
    }
    var params = new LinkedHashMap<String, String>();
    params.put("by", group);
    params.put("since", since);
    params.put("until", until);
    JsonNode reply = api.get("/api/v1/report" + ApiClient.query(params));
    if (isJson()) {
      Json.print(out, reply);
      return 0;
    }
    UsageReport report = Json.convert(reply, UsageReport.class);
    var table =
        new Table(
            group.toUpperCase(Locale.ROOT), "JOBS", "GPU_HOURS", "GPU_HOURS_BY_MODEL", "CPU_HOURS");
    for (UsageReport.UsageRow r : report.rows()) {
      row(table, r.key().isEmpty() ? "(none)" : r.key(), r);
    }
    if (isCsv()) {
      table.printCsv(out);
      return 0;
    }
    row(table, "TOTAL", report.total());
    out.println("Usage from " + report.from() + " to " + report.to() + " by " + report.by());
    table.print(out);
    return 0;
  }

  private static void row(Table table, String key, UsageReport.UsageRow r) {
    table.row(
        key,
        r.jobs(),
        HistoryCommand.hours(r.gpuSeconds()),
        HistoryCommand.byModel(r.gpuSecondsByModel()),
        HistoryCommand.hours(r.cpuSeconds()));
  }
}
