package io.kairos.cli;

import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.WhoAmI;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;

/**
 * {@code kairos scancel} (installed as {@code scancel}): Slurm's scancel over the Kairos API. Job
 * ids as Slurm writes them: {@code 12}, an array's id (all its elements), {@code 12_3} or {@code
 * 12_[1-3,5]} (elements); or the filters {@code -u}, {@code --me}, {@code -n}, {@code -p}, {@code
 * -t}, {@code -A} (all of them must match; with ids too, they narrow the ids). Quiet on success; a
 * job already ended or unknown is passed over silently, as Slurm 22.05 does; a malformed id is an
 * error (exit 1).
 */
@Command(name = "scancel", description = "Slurm's scancel: cancel jobs (kairos scancel --help).")
final class ScancelCommand extends SlurmCommand {
  private static final List<SlurmArgs.Spec> SPECS =
      SlurmArgs.specs(
          "user",
          "u:",
          "me",
          "",
          "name",
          "n:",
          "partition",
          "p:",
          "state",
          "t:",
          "account",
          "A:",
          "quiet",
          "Q",
          "verbose",
          "v",
          "batch",
          "b",
          "full",
          "f",
          "signal",
          "s:",
          "interactive",
          "i");

  private static final Pattern ID = Pattern.compile("(\\d{1,18})(?:_(\\d{1,9}|\\[[0-9,\\-]+\\]))?");

  @Override
  String name() {
    return "scancel";
  }

  @Override
  String usage() {
    return """
        Usage: scancel [OPTIONS] [JOB_ID[_ARRAY_ID]...]   (Kairos' scancel; see docs/slurm.md)
          JOB_ID         a job; an array's id cancels all its elements; 12_3 or 12_[1-3] elements
          -u, --user=USER  jobs of this user      --me           your own jobs
          -n, --name=NAME  jobs of this name      -p, --partition=QUEUE
          -t, --state=PD|R jobs in this state     -A, --account=ACCOUNT
          -v, --verbose    say what is cancelled
        """;
  }

  @Override
  int run(ApiClient api, List<String> words, PrintWriter out, PrintWriter err) {
    var a = SlurmArgs.parse(name(), words, SPECS, true);
    if (a.has("signal")) {
      throw new UsageException(
          "--signal is not supported by Kairos (a cancel sends the job's stop"
              + " signal, then SIGKILL after its grace)");
    }
    boolean filtered =
        a.has("user")
            || a.has("me")
            || a.has("name")
            || a.has("partition")
            || a.has("state")
            || a.has("account");
    if (a.operands().isEmpty() && !filtered) {
      throw new UsageException("No job identification provided");
    }
    var ids = new ArrayList<Matcher>();
    for (String op : a.operands()) {
      for (String part : op.split(",")) {
        Matcher m = ID.matcher(part.strip());
        if (!m.matches()) {
          throw new UsageException("Invalid job id " + part);
        }
        ids.add(m);
      }
    }
    var users = new ArrayList<>(a.list("user"));
    if (a.has("me")) {
      users.add(Json.convert(api.get("/api/v1/whoami"), WhoAmI.class).user());
    }
    List<JobState> states =
        a.has("state")
            ? SlurmFormat.states(a.list("state"))
            : List.of(JobState.PENDING, JobState.RUNNING);
    var params = new LinkedHashMap<String, String>();
    params.put("state", "PENDING,RUNNING");
    List<JobView> active =
        Json.list(api.get("/api/v1/jobs" + ApiClient.query(params)), JobView.class);
    var chosen = new TreeSet<Long>();
    for (JobView j : active) {
      boolean byId = ids.isEmpty() || ids.stream().anyMatch(m -> matches(m, j));
      if (byId
          && states.contains(j.state())
          && (users.isEmpty() || users.contains(j.user()) || users.contains(j.runAs()))
          && (!a.has("name") || a.list("name").contains(j.name()))
          && (!a.has("partition")
              || a.list("partition").stream().anyMatch(q -> q.equalsIgnoreCase(j.queue())))
          && (!a.has("account") || a.list("account").contains(j.account()))) {
        chosen.add(j.id());
      }
    }
    for (long id : chosen) {
      try {
        api.post("/api/v1/jobs/" + id + "/cancel", null);
        if (a.has("verbose")) {
          err.println("scancel: Terminating job " + id);
        }
      } catch (ApiException e) {
        if (e.isUnreachable()) {
          throw e;
        }
        // Ended meanwhile, or not ours to cancel: Slurm says so only when asked to be verbose.
        if (a.has("verbose")) {
          err.println("scancel: error: Kill job error on job id " + id + ": " + e.getMessage());
        }
      }
    }
    return 0;
  }

  /** Whether id form {@code m} (12, 12_3, 12_[1-3]) names job {@code j}. */
  private static boolean matches(Matcher m, JobView j) {
    long id = Long.parseLong(m.group(1));
    String element = m.group(2);
    boolean inArray = j.arrayJobId() != null && j.arrayJobId() == id;
    if (element == null) {
      return j.id() == id || inArray;
    }
    if (!inArray || j.arrayTaskId() == null) {
      return false;
    }
    if (!element.startsWith("[")) {
      return j.arrayTaskId() == Integer.parseInt(element);
    }
    for (String range : element.substring(1, element.length() - 1).split(",")) {
      String[] ends = range.split("-", 2);
      if (ends[0].isEmpty()) {
        continue;
      }
      int lo = Integer.parseInt(ends[0]);
      int hi = ends.length > 1 && !ends[1].isEmpty() ? Integer.parseInt(ends[1]) : lo;
      if (j.arrayTaskId() >= lo && j.arrayTaskId() <= hi) {
        return true;
      }
    }
    return false;
  }
}
