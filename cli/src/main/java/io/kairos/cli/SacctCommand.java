package io.kairos.cli;

import io.kairos.protocol.HistoryRecord;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.WhoAmI;
import java.io.PrintWriter;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Command;

/**
 * {@code kairos sacct} (installed as {@code sacct}): Slurm's sacct over the Kairos API: the jobs
 * the controller's state holds, and the ended ones it forgot from the accounting store. By default
 * your jobs since midnight; {@code -j} names jobs (any time), {@code -u} users, {@code -a}
 * everyone's, {@code -S}/{@code -E} a time window, {@code -s} states. {@code --format} takes
 * sacct's field names with {@code %WIDTH}; {@code -P}/{@code -p} print them separated by {@code |},
 * {@code -n} without the header, {@code -X} without the batch step's line ({@code ID.batch}, for a
 * batch job).
 */
@Command(name = "sacct", description = "Slurm's sacct: job accounting (kairos sacct --help).")
final class SacctCommand extends SlurmCommand {
  static final String DEFAULT_FORMAT = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode";
  static final String BRIEF_FORMAT = "JobID,State,ExitCode";

  private static final List<SlurmArgs.Spec> SPECS =
      SlurmArgs.specs(
          "jobs",
          "j:",
          "user",
          "u:",
          "allusers",
          "a",
          "format",
          "o:",
          "parsable",
          "p",
          "parsable2",
          "P",
          "noheader",
          "n",
          "allocations",
          "X",
          "starttime",
          "S:",
          "endtime",
          "E:",
          "state",
          "s:",
          "partition",
          "r:",
          "accounts",
          "A:",
          "name",
          ":",
          "brief",
          "b",
          "delimiter",
          ":",
          "allclusters",
          "L",
          "duplicates",
          "D",
          "units",
          ":",
          "noconvert",
          "",
          "verbose",
          "v");

  /** A sacct field: its header, default width (negative: left-justified). */
  private record Column(String header, int width) {}

  private static final Map<String, Column> COLUMNS = columns();

  private static Map<String, Column> columns() {
    var c = new LinkedHashMap<String, Column>();
    for (Object[] f :
        new Object[][] {
          {"JobID", -12},
          {"JobIDRaw", -12},
          {"JobName", 10},
          {"Partition", 10},
          {"Account", 10},
          {"AllocCPUS", 10},
          {"NCPUS", 10},
          {"ReqCPUS", 8},
          {"State", 10},
          {"ExitCode", 8},
          {"User", 9},
          {"Elapsed", 10},
          {"ElapsedRaw", 10},
          {"Start", 19},
          {"End", 19},
          {"Submit", 19},
          {"Eligible", 19},
          {"NNodes", 8},
          {"AllocNodes", 10},
          {"ReqNodes", 8},
          {"NodeList", 15},
          {"Timelimit", 10},
          {"TimelimitRaw", 12},
          {"WorkDir", 20},
          {"QOS", 10},
          {"Priority", 10},
          {"Reason", 20},
          {"AllocTRES", 10},
          {"ReqTRES", 10},
          {"ReqMem", 10},
          {"Comment", 15}
        }) {
      c.put(((String) f[0]).toLowerCase(Locale.ROOT), new Column((String) f[0], (int) f[1]));
    }
    return Map.copyOf(c);
  }

  /** A line: the job's allocation, or its batch step. */
  private record Line(JobView job, boolean batchStep) {}

  @Override
  String name() {
    return "sacct";
  }

  @Override
  String usage() {
    return """
        Usage: sacct [OPTIONS]   (Kairos' sacct; see docs/slurm.md)
          -j, --jobs=LIST        these jobs (12, 12_3), at any time
          -u, --user=LIST        these users' jobs      -a, --allusers   everyone's
          -S, --starttime=TIME   active at or after TIME (default: midnight; YYYY-MM-DD[THH:MM[:SS]])
          -E, --endtime=TIME     active before TIME     -s, --state=LIST  CD, F, CA, TO, PD, R
          -r, --partition=LIST   these queues           -A, --accounts=LIST
          -o, --format=LIST      fields, each with an optional %WIDTH: JobID JobIDRaw JobName
                                 Partition Account AllocCPUS NCPUS ReqCPUS State ExitCode User
                                 Elapsed ElapsedRaw Start End Submit Eligible NNodes AllocNodes
                                 ReqNodes NodeList Timelimit TimelimitRaw WorkDir QOS Priority
                                 Reason AllocTRES ReqTRES ReqMem Comment
          -b, --brief            JobID,State,ExitCode   -X, --allocations  no batch step lines
          -P, --parsable2        '|' between fields     -p, --parsable  and one at the end
          -n, --noheader         no header lines        --delimiter=TEXT  for -p and -P
        """;
  }

  @Override
  int run(ApiClient api, List<String> words, PrintWriter out, PrintWriter err) {
    var a = SlurmArgs.parse(name(), words, SPECS, true);
    String format =
        a.value("format") != null
            ? a.value("format")
            : a.has("brief") ? BRIEF_FORMAT : DEFAULT_FORMAT;
    var fields = new ArrayList<SlurmFormat.Field>();
    for (String spec : format.split(",")) {
      String s = spec.strip();
      if (s.isEmpty()) {
        continue;
      }
      int pct = s.indexOf('%');
      String key = (pct < 0 ? s : s.substring(0, pct)).toLowerCase(Locale.ROOT);
      Column c = COLUMNS.get(key);
      if (c == null) {
        throw new UsageException("Invalid field requested: \"" + s + "\"");
      }
      int width = c.width();
      if (pct >= 0) {
        try {
          width = Integer.parseInt(s.substring(pct + 1));
        } catch (NumberFormatException e) {
          throw new UsageException("Invalid field requested: \"" + s + "\"");
        }
      }
      fields.add(new SlurmFormat.Field(key, Math.abs(width), width > 0, null));
    }
    List<String> ids = a.list("jobs");
    var users = new ArrayList<>(a.list("user"));
    if (users.isEmpty() && ids.isEmpty() && !a.has("allusers")) {
      users.add(Json.convert(api.get("/api/v1/whoami"), WhoAmI.class).user());
    }
    Instant from =
        a.has("starttime")
            ? instant(a.value("starttime"), "--starttime")
            : ids.isEmpty()
                ? LocalDate.ofInstant(Environment.clock.instant(), Environment.zone)
                    .atStartOfDay(Environment.zone)
                    .toInstant()
                : Instant.EPOCH;
    Instant to = a.has("endtime") ? instant(a.value("endtime"), "--endtime") : null;
    List<JobState> states = a.has("state") ? SlurmFormat.states(a.list("state")) : null;
    List<JobView> jobs = new ArrayList<>(Json.list(api.get("/api/v1/jobs"), JobView.class));
    jobs.addAll(forgotten(api, jobs, from, to));
    var lines = new ArrayList<Line>();
    for (JobView j : jobs) {
      if ((ids.isEmpty() || SqueueCommand.matchesId(ids, j))
          && (users.isEmpty() || users.contains(j.user()) || users.contains(j.runAs()))
          && (states == null || states.contains(j.state()))
          && (!a.has("partition")
              || a.list("partition").stream().anyMatch(q -> q.equalsIgnoreCase(j.queue())))
          && (!a.has("accounts") || a.list("accounts").contains(j.account()))
          && (!a.has("name") || a.list("name").contains(j.name()))
          && activeIn(j, from, to)) {
        lines.add(new Line(j, false));
        if (!a.has("allocations") && j.scriptBytes() != null && j.startTime() != null) {
          lines.add(new Line(j, true));
        }
      }
    }
    boolean parsable = a.has("parsable") || a.has("parsable2");
    String delimiter = a.value("delimiter") != null ? a.value("delimiter") : "|";
    if (!a.has("noheader")) {
      print(
          out, fields, f -> COLUMNS.get(f.key()).header(), parsable, a.has("parsable"), delimiter);
      if (!parsable) {
        var dashes = new StringBuilder();
        for (SlurmFormat.Field f : fields) {
          dashes.append("-".repeat(f.width())).append(' ');
        }
        out.println(dashes);
      }
    }
    Instant now = Environment.clock.instant();
    for (Line l : lines) {
      print(out, fields, f -> value(f.key(), l, now), parsable, a.has("parsable"), delimiter);
    }
    return 0;
  }

  private static void print(
      PrintWriter out,
      List<SlurmFormat.Field> fields,
      java.util.function.Function<SlurmFormat.Field, String> value,
      boolean parsable,
      boolean trailing,
      String delimiter) {
    var sb = new StringBuilder();
    for (int i = 0; i < fields.size(); i++) {
      SlurmFormat.Field f = fields.get(i);
      String v = value.apply(f);
      if (parsable) {
        sb.append(v);
        if (trailing || i + 1 < fields.size()) {
          sb.append(delimiter);
        }
      } else {
        // sacct cuts a long value to its width with a '+' at the end.
        String cut = v.length() > f.width() ? v.substring(0, f.width() - 1) + "+" : v;
        sb.append(f.fit(cut)).append(' ');
      }
    }
    out.println(sb);
  }

  /**
   * The ended jobs the replicated state no longer holds, from the accounting store ({@code GET
   * /api/v1/history}), as the job list shows them: what sacct needs of a job that is not in the
   * list (its private fields, array ids and batch script size are not kept there).
   */
  private static List<JobView> forgotten(
      ApiClient api, List<JobView> listed, Instant from, Instant to) {
    var params = new LinkedHashMap<String, String>();
    params.put("since", from.toString());
    params.put("until", to == null ? null : to.toString());
    params.put("limit", "100000");
    var seen = new java.util.HashSet<Long>();
    listed.forEach(j -> seen.add(j.id()));
    var out = new ArrayList<JobView>();
    for (HistoryRecord r :
        Json.list(api.get("/api/v1/history" + ApiClient.query(params)), HistoryRecord.class)) {
      if (seen.contains(r.id())) {
        continue;
      }
      var placement = new ArrayList<io.kairos.protocol.TaskPlacement>();
      for (int i = 0; i < r.nodes().size(); i++) {
        placement.add(new io.kairos.protocol.TaskPlacement(i, r.nodes().get(i), List.of()));
      }
      out.add(
          new JobView(
              r.id(),
              r.name(),
              r.user(),
              r.queue(),
              0,
              r.state(),
              null,
              null,
              null,
              r.gpus(),
              null,
              r.tasks(),
              r.cpus(),
              r.memoryMb(),
              r.timeLimitSec(),
              r.gpuModel(),
              r.submitTime(),
              r.startTime(),
              r.endTime(),
              null,
              null,
              r.attempts(),
              r.requeues(),
              r.exitCode(),
              r.message(),
              placement.isEmpty() ? null : placement,
              null,
              null,
              null,
              null,
              null,
              null,
              null,
              r.account(),
              r.priorityClass(),
              null,
              null,
              null,
              null,
              null,
              null,
              null));
    }
    return out;
  }

  /** Whether the job was pending or running at some time in [from, to). */
  private static boolean activeIn(JobView j, Instant from, Instant to) {
    Instant submitted = TimeFormat.parse(j.submitTime());
    Instant ended = j.state().isFinal() ? TimeFormat.parse(j.endTime()) : null;
    return (ended == null || !ended.isBefore(from))
        && (to == null || submitted == null || submitted.isBefore(to));
  }

  /** sacct's times: YYYY-MM-DD[THH:MM[:SS]], HH:MM[:SS] today, or now. */
  private static Instant instant(String text, String option) {
    String t = text.strip();
    try {
      if (t.equalsIgnoreCase("now")) {
        return Environment.clock.instant();
      }
      if (t.matches("\\d{4}-\\d{2}-\\d{2}")) {
        return LocalDate.parse(t).atStartOfDay(Environment.zone).toInstant();
      }
      if (t.matches("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2})?")) {
        return LocalDateTime.parse(t.length() == 16 ? t + ":00" : t)
            .atZone(Environment.zone)
            .toInstant();
      }
      if (t.matches("\\d{1,2}:\\d{2}(:\\d{2})?")) {
        String[] p = t.split(":");
        return LocalDate.ofInstant(Environment.clock.instant(), Environment.zone)
            .atTime(
                Integer.parseInt(p[0]),
                Integer.parseInt(p[1]),
                p.length > 2 ? Integer.parseInt(p[2]) : 0)
            .atZone(Environment.zone)
            .toInstant();
      }
    } catch (java.time.DateTimeException e) {
      // fall through to the error
    }
    throw new UsageException(
        option + ": cannot read the time '" + t + "'; write YYYY-MM-DD[THH:MM[:SS]], HH:MM or now");
  }

  /** One field of one line, as sacct prints it. */
  private static String value(String key, Line l, Instant now) {
    JobView j = l.job();
    long elapsed = SlurmFormat.elapsedSec(j, now);
    return switch (key) {
      case "jobid" -> SlurmFormat.jobId(j) + (l.batchStep() ? ".batch" : "");
      case "jobidraw" -> j.id() + (l.batchStep() ? ".batch" : "");
      case "jobname" -> l.batchStep() ? "batch" : j.name();
      case "partition" -> l.batchStep() ? "" : j.queue();
      case "account" -> j.account() == null ? "" : j.account();
      case "alloccpus", "ncpus" -> j.startTime() == null ? "0" : Integer.toString(cpus(l));
      case "reqcpus" -> Integer.toString(cpus(l));
      case "state" -> SlurmFormat.state(j) + (j.state() == JobState.CANCELLED ? " by 0" : "");
      case "exitcode" -> exitCode(j);
      case "user" -> l.batchStep() ? "" : j.runAs() != null ? j.runAs() : j.user();
      case "elapsed" -> SlurmFormat.sacctDuration(elapsed);
      case "elapsedraw" -> Long.toString(elapsed);
      case "start" -> SlurmFormat.time(j.startTime(), "Unknown");
      case "end" -> j.state().isFinal() ? SlurmFormat.time(j.endTime(), "Unknown") : "Unknown";
      case "submit", "eligible" -> SlurmFormat.time(j.submitTime(), "Unknown");
      case "nnodes", "allocnodes", "reqnodes" ->
          Integer.toString(l.batchStep() ? 1 : SlurmFormat.nodes(j));
      case "nodelist" ->
          j.placement() == null
              ? "None assigned"
              : l.batchStep() ? j.placement().getFirst().node() : SlurmFormat.nodeList(j);
      case "timelimit" -> l.batchStep() ? "" : SlurmFormat.sacctDuration(j.timeLimitSec());
      case "timelimitraw" -> l.batchStep() ? "" : Long.toString(j.timeLimitSec() / 60);
      case "workdir" -> j.workdir() == null ? "" : j.workdir();
      case "qos" -> j.priorityClass() == null ? "normal" : j.priorityClass();
      case "priority" -> Integer.toString(j.priority());
      case "reason" -> SlurmFormat.reason(j);
      case "alloctres", "reqtres" -> tres(j, l.batchStep());
      case "reqmem" -> j.memoryMb() == 0 ? "0" : j.memoryMb() + "M";
      case "comment" -> "";
      default -> "";
    };
  }

  private static int cpus(Line l) {
    return l.batchStep() ? Math.max(1, l.job().cpus()) : SlurmFormat.cpus(l.job());
  }

  /** The job's resources as sacct's TRES: {@code cpu=16,gres/gpu=8,node=2}. */
  private static String tres(JobView j, boolean batchStep) {
    int nodes = batchStep ? 1 : SlurmFormat.nodes(j);
    int gpus = batchStep ? (j.gpusPerNode() != null ? j.gpusPerNode() : j.gpus()) : j.gpus();
    var parts = new ArrayList<String>();
    parts.add("cpu=" + (batchStep ? Math.max(1, j.cpus()) : SlurmFormat.cpus(j)));
    if (gpus > 0) {
      parts.add("gres/gpu=" + gpus);
    }
    if (j.memoryMb() > 0) {
      parts.add("mem=" + (long) nodes * j.memoryMb() + "M");
    }
    parts.add("node=" + nodes);
    return String.join(",", parts);
  }

  /** Slurm's {@code CODE:SIGNAL}: 0:0 for a success, 3:0 for exit 3, 0:15 for a SIGTERM death. */
  static String exitCode(JobView j) {
    if (j.state() == JobState.CANCELLED) {
      return "0:15";
    }
    Integer code = j.exitCode();
    if (code == null || code == 0) {
      return "0:0";
    }
    return code > 128 && code < 160 ? "0:" + (code - 128) : (code & 0xff) + ":0";
  }
}
