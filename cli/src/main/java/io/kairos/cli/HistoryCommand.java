package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.HistoryRecord;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kairos history}: ended jobs from the accounting store, like Slurm's sacct. */
@Command(
    name = "history",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "List ended jobs (succeeded, failed, cancelled) from the accounting store, the most"
          + " recently ended last (like sacct). A user sees their own jobs (and, if the server's"
          + " --private-data allows, their accounts'); an admin sees all.",
      "START and END are local times; ELAPSED is END - START of the last attempt; EXIT is the"
          + " exit code of the first failed task, or 0. TIME options take an ISO-8601 instant"
          + " (2026-12-01T08:00:00Z), a date (2026-12-01, UTC), a duration before now (90m, 12h,"
          + " 7d) or now. -o csv or -o json for scripts.",
      ""
    })
final class HistoryCommand extends ApiCommand {
  /** The columns --format takes, in the order of the default. */
  static final Map<String, Column> COLUMNS = columns();

  static final String DEFAULT_FORMAT = "id,name,user,state,gpus,start,end,elapsed,exit";

  record Column(String header, Function<Row, Object> value) {}

  /** One record and the clock the times are shown against. */
  record Row(HistoryRecord r, Instant now) {}

  @Option(
      names = "--limit",
      paramLabel = "N",
      defaultValue = "50",
      description = "At most N jobs, the most recently ended (default: ${DEFAULT-VALUE}).")
  int limit;

  @Option(names = "--user", paramLabel = "USER[,USER]", description = "Only these users' jobs.")
  String user;

  @Option(
      names = "--account",
      paramLabel = "ACCOUNT[,ACCOUNT]",
      description = "Only jobs charged to these accounts.")
  String account;

  @Option(names = "--queue", paramLabel = "QUEUE[,QUEUE]", description = "Only these queues' jobs.")
  String queue;

  @Option(
      names = "--state",
      paramLabel = "STATE[,STATE]",
      description = "Only these states: SUCCEEDED, FAILED, CANCELLED.")
  String state;

  @Option(names = "--since", paramLabel = "TIME", description = "Jobs that ended at or after TIME.")
  String since;

  @Option(names = "--until", paramLabel = "TIME", description = "Jobs submitted before TIME.")
  String until;

  @Option(
      names = "--format",
      paramLabel = "COL[,COL]",
      description = {
        "The columns (default: "
            + DEFAULT_FORMAT
            + "). Any of: id, name, user, account,"
            + " queue, class, state, exit, message, submit, start, end, elapsed, gpus, model,"
            + " tasks, cpus, memory, nodes, attempts, requeues, preemptions, gpu-hours,"
            + " gpu-hours-by-model, cpu-hours."
      })
  String format;

  @Override
  int run(ApiClient api, PrintWriter out) {
    if (limit < 1) {
      throw new UsageException("--limit must be at least 1, got " + limit);
    }
    List<Column> columns = columns(format == null ? DEFAULT_FORMAT : format);
    var params = new LinkedHashMap<String, String>();
    params.put("user", user);
    params.put("account", account);
    params.put("queue", queue);
    params.put("state", state == null ? null : state.toUpperCase(Locale.ROOT));
    params.put("since", since);
    params.put("until", until);
    params.put("limit", String.valueOf(limit));
    JsonNode reply = api.get("/api/v1/history" + ApiClient.query(params));
    if (isJson()) {
      Json.print(out, reply);
      return 0;
    }
    List<HistoryRecord> records = Json.list(reply, HistoryRecord.class);
    Instant now = Environment.clock.instant();
    var table = new Table(columns.stream().map(Column::header).toArray(String[]::new));
    for (HistoryRecord r : records) {
      var row = new Row(r, now);
      table.row(columns.stream().map(c -> c.value().apply(row)).toArray());
    }
    if (isCsv()) {
      table.printCsv(out);
    } else {
      table.print(out);
    }
    return 0;
  }

  static List<Column> columns(String format) {
    var out = new ArrayList<Column>();
    for (String name : format.split(",")) {
      String key = name.strip().toLowerCase(Locale.ROOT);
      if (key.isEmpty()) {
        continue;
      }
      Column c = COLUMNS.get(key);
      if (c == null) {
        throw new UsageException(
            "--format: unknown column '"
                + name.strip()
                + "'; use "
                + String.join(", ", COLUMNS.keySet()));
      }
      out.add(c);
    }
    if (out.isEmpty()) {
      throw new UsageException("--format names no column; e.g. --format " + DEFAULT_FORMAT);
    }
    return out;
  }

  private static Map<String, Column> columns() {
    var c = new LinkedHashMap<String, Column>();
    c.put("id", new Column("ID", w -> w.r().id()));
    c.put("name", new Column("NAME", w -> w.r().name()));
    c.put("user", new Column("USER", w -> w.r().user()));
    c.put("account", new Column("ACCOUNT", w -> w.r().account()));
    c.put("queue", new Column("QUEUE", w -> w.r().queue()));
    c.put("class", new Column("CLASS", w -> w.r().priorityClass()));
    c.put("state", new Column("STATE", w -> w.r().state()));
    c.put("exit", new Column("EXIT", w -> w.r().exitCode() == null ? "-" : w.r().exitCode()));
    c.put("message", new Column("MESSAGE", w -> w.r().message()));
    c.put("submit", new Column("SUBMIT", w -> time(w.r().submitTime(), w.now())));
    c.put("start", new Column("START", w -> time(w.r().startTime(), w.now())));
    c.put("end", new Column("END", w -> time(w.r().endTime(), w.now())));
    c.put(
        "elapsed",
        new Column("ELAPSED", w -> TimeFormat.elapsed(w.r().startTime(), w.r().endTime())));
    c.put("gpus", new Column("GPUS", w -> w.r().gpus()));
    c.put("model", new Column("MODEL", w -> w.r().gpuModel()));
    c.put("tasks", new Column("TASKS", w -> w.r().tasks()));
    c.put("cpus", new Column("CPUS", w -> w.r().cpus()));
    c.put("memory", new Column("MEMORY_MB", w -> w.r().memoryMb()));
    c.put("nodes", new Column("NODES", w -> String.join(",", w.r().nodes())));
    c.put("attempts", new Column("ATTEMPTS", w -> w.r().attempts()));
    c.put("requeues", new Column("REQUEUES", w -> w.r().requeues()));
    c.put("preemptions", new Column("PREEMPTIONS", w -> w.r().preemptions()));
    c.put("gpu-hours", new Column("GPU_HOURS", w -> hours(w.r().gpuSeconds())));
    c.put(
        "gpu-hours-by-model",
        new Column("GPU_HOURS_BY_MODEL", w -> byModel(w.r().gpuSecondsByModel())));
    c.put("cpu-hours", new Column("CPU_HOURS", w -> hours(w.r().cpuSeconds())));
    return java.util.Collections.unmodifiableMap(c);
  }

  private static String time(String iso, Instant now) {
    return TimeFormat.compact(iso, now, Environment.zone);
  }

  /** Seconds as hours with two decimals. */
  static String hours(double seconds) {
    return String.format(Locale.ROOT, "%.2f", seconds / 3600.0);
  }

  /** {@code H100=1.50;A100=0.25} (hours). */
  static String byModel(Map<String, Double> seconds) {
    var parts = new ArrayList<String>();
    seconds.forEach((m, s) -> parts.add(m + "=" + hours(s)));
    return String.join(";", parts);
  }
}
