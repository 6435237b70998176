package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kairos.protocol.JobSubmission;
import io.kairos.protocol.JobView;
import io.kairos.protocol.SubmitResult;
import io.kairos.protocol.TaskPlacement;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kairos bench turnover}: how fast freed GPUs go to the next job. Submits {@code --jobs}
 * one-GPU jobs that exit at once ({@code true}) as job arrays of {@code --array-size} (as Slurm's
 * harness does with {@code sbatch --array}), waits until every one has ended, and reports jobs/s
 * end to end (the first job's submit time to the last job's end, as the controller stamped them)
 * and each job's submit-to-start latency. The cluster should be idle and its agents up: the figure
 * is the rate at which the controller and agents turn a slot over, since every job but the first
 * wave waits for a slot to free.
 */
@Command(
    name = "turnover",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Submit --jobs one-GPU jobs that exit at once (command `true`) as job arrays, wait for all"
          + " of them to end, and report jobs/s end to end (first submit to last end, as the"
          + " controller stamped them) and the submit-to-start latency per job (p50, p99, max).",
      "Run it against an idle cluster with agents up (scripts/turnover.sh starts one).",
      ""
    })
final class BenchTurnoverCommand extends ApiCommand {
  @Option(
      names = "--jobs",
      paramLabel = "N",
      defaultValue = "2000",
      description = "Jobs to run (default: ${DEFAULT-VALUE}).")
  int jobs;

  @Option(
      names = "--array-size",
      paramLabel = "N",
      defaultValue = "1000",
      description = "Jobs per submitted array (default: ${DEFAULT-VALUE}).")
  int arraySize;

  @Option(
      names = "--gpus",
      paramLabel = "N",
      defaultValue = "1",
      description = "GPUs per job (default: ${DEFAULT-VALUE}).")
  int gpus;

  @Option(
      names = "--timeout",
      paramLabel = "SECONDS",
      defaultValue = "600",
      description =
          "Give up when the jobs have not all ended after this long (default: ${DEFAULT-VALUE}).")
  int timeoutSeconds;

  @Option(
      names = "--csv",
      paramLabel = "FILE",
      description = "Also write each job's times (id, node, submit, start, end) to FILE.")
  java.nio.file.Path csv;

  @Override
  int run(ApiClient api, PrintWriter out) throws InterruptedException {
    if (jobs < 1 || arraySize < 1 || gpus < 0 || timeoutSeconds < 1) {
      throw new UsageException("--jobs, --array-size and --timeout must be >= 1, --gpus >= 0");
    }
    long t0 = System.nanoTime();
    var ids = new ArrayList<long[]>(); // [first id, count] per array
    for (int done = 0; done < jobs; done += arraySize) {
      int n = Math.min(arraySize, jobs - done);
      var result = Json.convert(api.post("/api/v1/jobs", job(n)), SubmitResult.class);
      ids.add(new long[] {result.id(), result.count() == null ? 1 : result.count()});
    }
    long submittedNanos = System.nanoTime() - t0;
    long timeoutNanos = Duration.ofSeconds(timeoutSeconds).toNanos();
    // Poll the newest live job only (a full list each time would load the server we measure),
    // and confirm with a full list once that one is not ours. End times are the server's stamps,
    // so the poll's pace does not change the figure.
    while (activeOfOurs(api, ids, 1) > 0 || activeOfOurs(api, ids, 1_000_000) > 0) {
      if (System.nanoTime() - t0 > timeoutNanos) {
        throw ApiException.unexpected(
            "jobs still pending or running after " + timeoutSeconds + " s: are the agents up?");
      }
      LockSupport.parkNanos(100_000_000);
    }
    long clientNanos = System.nanoTime() - t0;
    var rows = new StringBuilder("id,node,submit,start,end\n");
    var wait = new Samples();
    var held = new Samples();
    var slots = new java.util.HashMap<String, List<Instant[]>>(); // node/gpu -> [start, end]
    Instant first = null;
    Instant last = null;
    int failed = 0;
    java.util.Map<Long, JobView> views = endedOfOurs(api, ids);
    for (long[] range : ids) {
      for (long id = range[0]; id < range[0] + range[1]; id++) {
        JobView v = views.get(id);
        if (v == null) { // not among the most recent ended jobs listed: ask for it alone
          v = Json.convert(api.get("/api/v1/jobs/" + id), JobView.class);
        }
        Instant submitted = TimeFormat.parse(v.submitTime());
        Instant started = TimeFormat.parse(v.startTime());
        Instant ended = TimeFormat.parse(v.endTime());
        rows.append(id)
            .append(',')
            .append(
                v.placement() == null || v.placement().isEmpty() ? "" : v.placement().get(0).node())
            .append(',')
            .append(v.submitTime())
            .append(',')
            .append(v.startTime())
            .append(',')
            .append(v.endTime())
            .append('\n');
        if (v.state() != io.kairos.protocol.JobState.SUCCEEDED) {
          failed++;
        }
        if (submitted != null && (first == null || submitted.isBefore(first))) {
          first = submitted;
        }
        if (ended != null && (last == null || ended.isAfter(last))) {
          last = ended;
        }
        if (submitted != null && started != null) {
          wait.add(Duration.between(submitted, started).toNanos());
        }
        if (started != null && ended != null) {
          held.add(Duration.between(started, ended).toNanos());
          for (var t : v.placement() == null ? List.<TaskPlacement>of() : v.placement()) {
            for (int g : t.gpus()) {
              slots
                  .computeIfAbsent(t.node() + "/" + g, k -> new ArrayList<>())
                  .add(new Instant[] {started, ended});
            }
          }
        }
      }
    }
    if (csv != null) {
      try {
        java.nio.file.Files.writeString(csv, rows);
      } catch (java.io.IOException e) {
        throw new UsageException("cannot write " + csv + ": " + e.getMessage());
      }
    }
    double seconds =
        first == null || last == null ? Double.NaN : Duration.between(first, last).toMillis() / 1e3;
    Percentiles p = wait.percentiles();
    Percentiles h = held.percentiles();
    Percentiles idle = idleBetweenJobs(slots).percentiles();
    if (isJson()) {
      ObjectNode o = Json.MAPPER.createObjectNode();
      o.put("jobs", jobs);
      o.put("failed", failed);
      o.put("seconds", seconds);
      o.put("jobs_per_s", jobs / seconds);
      o.put("client_seconds", clientNanos / 1e9);
      o.put("submit_seconds", submittedNanos / 1e9);
      ObjectNode w = o.putObject("submit_to_start_ms");
      w.put("p50", BenchSubmitCommand.ms(p.value(50)));
      w.put("p99", BenchSubmitCommand.ms(p.value(99)));
      w.put("max", BenchSubmitCommand.ms(p.max()));
      ObjectNode b = o.putObject("slot_held_ms");
      b.put("p50", BenchSubmitCommand.ms(h.value(50)));
      b.put("p99", BenchSubmitCommand.ms(h.value(99)));
      b.put("mean", BenchSubmitCommand.ms(h.mean()));
      ObjectNode i = o.putObject("slot_idle_ms");
      i.put("p50", BenchSubmitCommand.ms(idle.value(50)));
      i.put("p99", BenchSubmitCommand.ms(idle.value(99)));
      i.put("mean", BenchSubmitCommand.ms(idle.mean()));
      o.put("slots_used", slots.size());
      Json.print(out, o);
      return failed == 0 ? 0 : 1;
    }
    out.printf(
        Locale.ROOT,
        "turnover: %d one-GPU jobs (`true`) in arrays of %d at %s%n",
        jobs,
        arraySize,
        api.server());
    out.printf(
        Locale.ROOT,
        "end to end: %.2f s (first submit to last end, server stamps): %.1f jobs/s;"
            + " client saw %.2f s (submits took %.2f s)%n",
        seconds,
        jobs / seconds,
        clientNanos / 1e9,
        submittedNanos / 1e9);
    out.printf(
        Locale.ROOT,
        "submit to start: p50 %s ms, p99 %s ms, max %s ms%n",
        f(p.value(50)),
        f(p.value(99)),
        f(p.max()));
    out.printf(
        Locale.ROOT,
        "per job on a GPU slot (%d slots used): held (start to end as stamped: push, launch, exit,"
            + " report) mean %s, p50 %s, p99 %s ms; idle until the slot's next start mean %s,"
            + " p50 %s, p99 %s ms%n",
        slots.size(),
        f(h.mean()),
        f(h.value(50)),
        f(h.value(99)),
        f(idle.mean()),
        f(idle.value(50)),
        f(idle.value(99)));
    if (failed > 0) {
      out.printf(Locale.ROOT, "%d jobs did not succeed%n", failed);
      return 1;
    }
    return 0;
  }

  private JobSubmission job(int n) {
    return new JobSubmission(
        "bench-turnover",
        List.of("true"),
        null,
        null,
        gpus,
        null,
        1,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        n > 1 ? "0-" + (n - 1) : null,
        null,
        null,
        null,
        null,
        null);
  }

  /** Per GPU slot, the gaps between one job's end and the next job's start there. */
  private static Samples idleBetweenJobs(java.util.Map<String, List<Instant[]>> slots) {
    var idle = new Samples();
    for (List<Instant[]> runs : slots.values()) {
      runs.sort(java.util.Comparator.comparing((Instant[] r) -> r[0]));
      for (int k = 1; k < runs.size(); k++) {
        idle.add(Math.max(0, Duration.between(runs.get(k - 1)[1], runs.get(k)[0]).toNanos()));
      }
    }
    return idle;
  }

  /**
   * Our jobs' views from one list of the most recent ended jobs (one request, not one per job: a
   * request per job made the server's CPU per job, which scripts/turnover.sh reports, count the
   * bench's own reads). Jobs missing from it (another user's jobs ended meanwhile) are left out;
   * the caller asks for those one by one.
   */
  private java.util.Map<Long, JobView> endedOfOurs(ApiClient api, List<long[]> ids) {
    var out = new java.util.HashMap<Long, JobView>();
    JsonNode list = api.get("/api/v1/jobs?state=SUCCEEDED,FAILED,CANCELLED&limit=" + jobs);
    for (JsonNode j : list) {
      long id = j.path("id").asLong();
      for (long[] range : ids) {
        if (id >= range[0] && id < range[0] + range[1]) {
          out.put(id, Json.convert(j, JobView.class));
          break;
        }
      }
    }
    return out;
  }

  private static int activeOfOurs(ApiClient api, List<long[]> ids, int limit) {
    JsonNode list = api.get("/api/v1/jobs?state=PENDING,RUNNING&limit=" + limit);
    int active = 0;
    for (JsonNode j : list) {
      long id = j.path("id").asLong();
      for (long[] range : ids) {
        if (id >= range[0] && id < range[0] + range[1]) {
          active++;
          break;
        }
      }
    }
    return active;
  }

  private static String f(long nanos) {
    return BenchSubmitCommand.fmt(BenchSubmitCommand.ms(nanos));
  }
}
