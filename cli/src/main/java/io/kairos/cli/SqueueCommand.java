package io.kairos.cli;

import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.WhoAmI;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;

/**
 * {@code kairos squeue} (installed as {@code squeue}): Slurm's squeue over the Kairos API. The jobs
 * pending and running (or those {@code -t} names), filtered by user ({@code -u}, {@code --me}), job
 * ({@code -j}), partition (queue, {@code -p}), name ({@code -n}) and account ({@code -A}), printed
 * in squeue's format ({@code -o "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"} by default, {@code -l}
 * for the long one), pending jobs first. A user matches a job's Kairos user or the Unix account it
 * runs as, so {@code squeue -u $USER} works either way.
 */
@Command(name = "squeue", description = "Slurm's squeue: list jobs (kairos squeue --help).")
final class SqueueCommand extends SlurmCommand {
  static final String DEFAULT_FORMAT = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
  static final String LONG_FORMAT = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";

  private static final List<SlurmArgs.Spec> SPECS =
      SlurmArgs.specs(
          "user",
          "u:",
          "me",
          "",
          "jobs",
          "j:",
          "partition",
          "p:",
          "states",
          "t:",
          "name",
          "n:",
          "account",
          "A:",
          "qos",
          "q:",
          "format",
          "o:",
          "noheader",
          "h",
          "long",
          "l",
          "all",
          "a",
          "array",
          "r",
          "verbose",
          "v",
          "sort",
          "S:",
          "nodelist",
          "w:",
          "noconvert",
          "");

  /** The field letters and their header, as squeue 22.05 prints them. */
  static final Map<Character, String> HEADERS = headers();

  private static Map<Character, String> headers() {
    var h = new LinkedHashMap<Character, String>();
    h.put('i', "JOBID");
    h.put('A', "JOBID");
    h.put('F', "ARRAY_JOB_ID");
    h.put('K', "ARRAY_TASK_ID");
    h.put('j', "NAME");
    h.put('u', "USER");
    h.put('t', "ST");
    h.put('T', "STATE");
    h.put('M', "TIME");
    h.put('l', "TIME_LIMIT");
    h.put('L', "TIME_LEFT");
    h.put('D', "NODES");
    h.put('R', "NODELIST(REASON)");
    h.put('r', "REASON");
    h.put('N', "NODELIST");
    h.put('P', "PARTITION");
    h.put('C', "CPUS");
    h.put('b', "TRES_PER_NODE");
    h.put('m', "MIN_MEMORY");
    h.put('S', "START_TIME");
    h.put('V', "SUBMIT_TIME");
    h.put('e', "END_TIME");
    h.put('Q', "PRIORITY");
    h.put('q', "QOS");
    h.put('a', "ACCOUNT");
    h.put('o', "COMMAND");
    h.put('Z', "WORK_DIR");
    h.put('k', "COMMENT");
    return Map.copyOf(h);
  }

  @Override
  String name() {
    return "squeue";
  }

  @Override
  String usage() {
    return """
        Usage: squeue [OPTIONS]   (Kairos' squeue; see docs/slurm.md)
          -u, --user=LIST      jobs of these users (Kairos user or Unix account)
              --me             your own jobs
          -j, --jobs=LIST      these jobs (12, 12_3 for an array element)
          -p, --partition=LIST these queues
          -t, --states=LIST    PD, R, CD, F, CA, TO (default PD,R) or ALL
          -n, --name=LIST      jobs of these names
          -A, --account=LIST   jobs charged to these accounts
          -o, --format=FORMAT  %[.][width]letter fields: i A F K j u t T M l L D R r N P C b m S V
                               e Q q a o Z k (default "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R")
          -h, --noheader       no header line
          -l, --long           the long format
        """;
  }

  @Override
  int run(ApiClient api, List<String> words, PrintWriter out, PrintWriter err) {
    var a = SlurmArgs.parse(name(), words, SPECS, true);
    if (!a.operands().isEmpty()) {
      throw new UsageException("unrecognized argument " + a.operands().getFirst());
    }
    List<JobState> states =
        a.has("states")
            ? SlurmFormat.states(a.list("states"))
            : List.of(JobState.PENDING, JobState.RUNNING);
    var users = new ArrayList<>(a.list("user"));
    if (a.has("me")) {
      users.add(Json.convert(api.get("/api/v1/whoami"), WhoAmI.class).user());
    }
    var params = new LinkedHashMap<String, String>();
    params.put("state", String.join(",", states.stream().distinct().map(Enum::name).toList()));
    List<JobView> jobs =
        Json.list(api.get("/api/v1/jobs" + ApiClient.query(params)), JobView.class);
    List<String> ids = a.list("jobs");
    List<String> queues = a.list("partition");
    List<String> names = a.list("name");
    List<String> accounts = a.list("account");
    var shown = new ArrayList<JobView>();
    for (JobView j : jobs) {
      if ((users.isEmpty() || users.contains(j.user()) || users.contains(j.runAs()))
          && (ids.isEmpty() || matchesId(ids, j))
          && (queues.isEmpty() || queues.stream().anyMatch(q -> q.equalsIgnoreCase(j.queue())))
          && (names.isEmpty() || names.contains(j.name()))
          && (accounts.isEmpty() || accounts.contains(j.account()))) {
        shown.add(j);
      }
    }
    // Pending first, then running; by priority, then id, as squeue's default sort.
    shown.sort(
        Comparator.comparing((JobView j) -> j.state() != JobState.PENDING)
            .thenComparing(JobView::priority, Comparator.reverseOrder())
            .thenComparing(JobView::id));
    String format =
        a.value("format") != null
            ? a.value("format")
            : a.has("long") ? LONG_FORMAT : DEFAULT_FORMAT;
    List<SlurmFormat.Field> fields = SlurmFormat.percentFormat(format);
    for (SlurmFormat.Field f : fields) {
      if (f.literal() == null && !HEADERS.containsKey(f.key().charAt(0))) {
        throw new UsageException(
            "Invalid job format specification: " + f.key() + " (Kairos has " + letters() + ")");
      }
    }
    if (!a.has("noheader")) {
      out.println(line(fields, f -> HEADERS.get(f.key().charAt(0))));
    }
    Instant now = Environment.clock.instant();
    for (JobView j : shown) {
      out.println(line(fields, f -> value(f.key().charAt(0), j, now)));
    }
    return 0;
  }

  private static String letters() {
    var sb = new StringBuilder();
    HEADERS.keySet().stream().sorted().forEach(sb::append);
    return sb.toString();
  }

  static boolean matchesId(List<String> ids, JobView j) {
    return ids.contains(Long.toString(j.id()))
        || ids.contains(SlurmFormat.jobId(j))
        || (j.arrayJobId() != null && ids.contains(Long.toString(j.arrayJobId())));
  }

  private static String line(
      List<SlurmFormat.Field> fields, java.util.function.Function<SlurmFormat.Field, String> v) {
    var sb = new StringBuilder();
    for (SlurmFormat.Field f : fields) {
      sb.append(f.literal() != null ? f.literal() : f.fit(v.apply(f)));
    }
    return sb.toString();
  }

  /** One field of one job, as squeue prints it. */
  static String value(char letter, JobView j, Instant now) {
    boolean pending = j.state() == JobState.PENDING;
    return switch (letter) {
      case 'i' -> SlurmFormat.jobId(j);
      case 'A' -> Long.toString(j.id());
      case 'F' -> Long.toString(j.arrayJobId() == null ? j.id() : j.arrayJobId());
      case 'K' -> j.arrayTaskId() == null ? "N/A" : Integer.toString(j.arrayTaskId());
      case 'j' -> j.name();
      case 'u' -> j.runAs() != null ? j.runAs() : j.user();
      case 't' -> SlurmFormat.compactState(j);
      case 'T' -> SlurmFormat.state(j);
      case 'M' -> SlurmFormat.squeueDuration(SlurmFormat.elapsedSec(j, now));
      case 'l' -> SlurmFormat.squeueDuration(j.timeLimitSec());
      case 'L' ->
          SlurmFormat.squeueDuration(
              Math.max(0, j.timeLimitSec() - SlurmFormat.elapsedSec(j, now)));
      case 'D' -> Integer.toString(SlurmFormat.nodes(j));
      case 'R' -> pending ? "(" + SlurmFormat.reason(j) + ")" : SlurmFormat.nodeList(j);
      case 'r' -> SlurmFormat.reason(j);
      case 'N' -> SlurmFormat.nodeList(j);
      case 'P' -> j.queue();
      case 'C' -> Integer.toString(SlurmFormat.cpus(j));
      case 'b' -> gres(j);
      case 'm' -> j.memoryMb() == 0 ? "0" : j.memoryMb() + "M";
      case 'S' ->
          pending
              ? SlurmFormat.time(j.predictedStart(), "N/A")
              : SlurmFormat.time(j.startTime(), "N/A");
      case 'V' -> SlurmFormat.time(j.submitTime(), "N/A");
      case 'e' -> endTime(j);
      case 'Q' -> Integer.toString(j.priority());
      case 'q' -> j.priorityClass() == null ? "normal" : j.priorityClass();
      case 'a' -> j.account() == null ? "(null)" : j.account();
      case 'o' -> j.command() == null || j.command().isEmpty() ? "" : j.command().getFirst();
      case 'Z' -> j.workdir() == null ? "" : j.workdir();
      case 'k' -> "(null)";
      default -> "";
    };
  }

  /** GPUs per node as squeue's TRES_PER_NODE: {@code gres:gpu:8}, {@code gres:gpu:a100:4}. */
  static String gres(JobView j) {
    int perNode = j.gpusPerNode() != null ? j.gpusPerNode() : j.gpus();
    if (perNode == 0) {
      return "N/A";
    }
    return "gres:gpu:" + (j.gpuModel() == null ? "" : j.gpuModel() + ":") + perNode;
  }

  private static String endTime(JobView j) {
    if (j.state().isFinal()) {
      return SlurmFormat.time(j.endTime(), "NONE");
    }
    Instant start = TimeFormat.parse(j.startTime());
    if (j.state() != JobState.RUNNING || start == null) {
      return "NONE";
    }
    return SlurmFormat.time(start.plusSeconds(j.timeLimitSec()).toString(), "NONE");
  }
}
