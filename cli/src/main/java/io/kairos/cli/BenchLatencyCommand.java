package io.kairos.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kairos.protocol.JobSubmission;
import io.kairos.protocol.JobView;
import io.kairos.protocol.SubmitResult;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kairos bench latency}: submit to running, one tiny job at a time on an idle cluster. Three
 * figures per job: the server's ({@code startTime - submitTime} as the controller stamped them:
 * queueing plus the scheduling pass plus the commit), the client's (from just before the POST to
 * the poll that first saw a start time, polling every 2 ms: adds the HTTP round trips), and the
 * client's to the job's end (adds the agent's launch of the task, {@code true}, and its exit
 * report: where starting a task as its owner costs).
 */
@Command(
    name = "latency",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Submit one tiny job at a time (command `true`) and measure how long until it runs: as the"
          + " server stamped it (startTime - submitTime) and as this client saw it (polling"
          + " every 2 ms); and until it ended, which adds the agent's start of the task (as its"
          + " owner) and its exit. Each job is waited for before the next, so the cluster stays"
          + " idle.",
      ""
    })
final class BenchLatencyCommand extends ApiCommand {
  static final long POLL_NANOS = 2_000_000;

  @Option(
      names = "--count",
      paramLabel = "N",
      defaultValue = "50",
      description = "Jobs to measure (default: ${DEFAULT-VALUE}).")
  int count;

  @Option(
      names = "--gpus",
      paramLabel = "N",
      defaultValue = "0",
      description = "GPUs per job (default: ${DEFAULT-VALUE}).")
  int gpus;

  @Option(
      names = "--cpus",
      paramLabel = "N",
      defaultValue = "1",
      description = "CPUs per job (default: ${DEFAULT-VALUE}).")
  int cpus;

  @Option(names = "--queue", paramLabel = "QUEUE", description = "The queue to submit to.")
  String queue;

  @Option(
      names = "--timeout",
      paramLabel = "SECONDS",
      defaultValue = "30",
      description =
          "Give up when a job has not started after this long (default: ${DEFAULT-VALUE}).")
  int timeoutSeconds;

  @Override
  int run(ApiClient api, PrintWriter out) throws InterruptedException {
    if (count < 1 || gpus < 0 || cpus < 1 || timeoutSeconds < 1) {
      throw new UsageException("--count, --cpus and --timeout must be >= 1, --gpus >= 0");
    }
    var job =
        new JobSubmission(
            "bench-latency",
            List.of("true"),
            null,
            null,
            gpus,
            null,
            cpus,
            null,
            null,
            queue,
            null,
            null,
            null);
    var server = new Samples();
    var client = new Samples();
    var ended = new Samples();
    long timeoutNanos = Duration.ofSeconds(timeoutSeconds).toNanos();
    for (int i = 0; i < count; i++) {
      long t0 = System.nanoTime();
      long id = Json.convert(api.post("/api/v1/jobs", job), SubmitResult.class).id();
      JobView view = poll(api, id, t0, timeoutNanos, true);
      client.add(System.nanoTime() - t0);
      Instant submitted = TimeFormat.parse(view.submitTime());
      Instant started = TimeFormat.parse(view.startTime());
      if (submitted != null && started != null) {
        server.add(Duration.between(submitted, started).toNanos());
      }
      // One at a time: let it end before the next, so each measures an idle cluster.
      poll(api, id, System.nanoTime(), timeoutNanos, false);
      ended.add(System.nanoTime() - t0);
    }
    Percentiles s = server.percentiles();
    Percentiles c = client.percentiles();
    Percentiles e = ended.percentiles();
    if (isJson()) {
      ObjectNode o = Json.MAPPER.createObjectNode();
      o.put("jobs", count);
      o.put("gpus", gpus);
      o.put("cpus", cpus);
      put(o.putObject("server_ms"), s);
      put(o.putObject("client_ms"), c);
      put(o.putObject("ended_ms"), e);
      Json.print(out, o);
      return 0;
    }
    out.printf(
        Locale.ROOT,
        "submit to running, %d jobs one at a time (gpus %d, cpus %d) at %s%n",
        count,
        gpus,
        cpus,
        api.server());
    var table = new Table("ms", "p50", "p90", "p99", "max");
    table.row("server stamped", f(s.value(50)), f(s.value(90)), f(s.value(99)), f(s.max()));
    table.row("client observed", f(c.value(50)), f(c.value(90)), f(c.value(99)), f(c.max()));
    table.row("client to ended", f(e.value(50)), f(e.value(90)), f(e.value(99)), f(e.max()));
    table.print(out);
    if (s.count() < count) {
      out.println("note: " + (count - s.count()) + " jobs had no server times to compare");
    }
    return 0;
  }

  /**
   * Polls job {@code id} every 2 ms until it has started ({@code untilStarted}) or ended; a job
   * that ends without starting, or is not there in time, is a failure.
   */
  private JobView poll(ApiClient api, long id, long from, long timeoutNanos, boolean untilStarted) {
    while (true) {
      JobView view = Json.convert(api.get("/api/v1/jobs/" + id), JobView.class);
      if (untilStarted ? view.startTime() != null : view.state().isFinal()) {
        return view;
      }
      if (untilStarted && view.state().isFinal()) {
        throw ApiException.unexpected(
            "job "
                + id
                + " ended "
                + view.state()
                + " without starting"
                + (view.message() == null ? "" : ": " + view.message()));
      }
      if (System.nanoTime() - from > timeoutNanos) {
        throw ApiException.unexpected(
            "job "
                + id
                + " still "
                + view.state()
                + (view.pendingReason() == null ? "" : " (" + view.pendingReason() + ")")
                + " after "
                + timeoutSeconds
                + " s: is the cluster idle, with an agent up?");
      }
      LockSupport.parkNanos(POLL_NANOS);
    }
  }

  private static void put(ObjectNode o, Percentiles p) {
    o.put("p50", BenchSubmitCommand.ms(p.value(50)));
    o.put("p90", BenchSubmitCommand.ms(p.value(90)));
    o.put("p99", BenchSubmitCommand.ms(p.value(99)));
    o.put("max", BenchSubmitCommand.ms(p.max()));
  }

  private static String f(long nanos) {
    return BenchSubmitCommand.fmt(BenchSubmitCommand.ms(nanos));
  }
}
