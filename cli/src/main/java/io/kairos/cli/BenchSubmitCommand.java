package io.kairos.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kairos.protocol.JobSubmission;
import java.io.PrintWriter;
import java.net.URI;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kairos bench submit}: a load generator for {@code POST /api/v1/jobs}.
 *
 * <p>Design: {@code --concurrency} workers, each with one keep-alive {@link RawHttp} connection
 * (plain, or one TLS session per connection for https, verified as the CLI verifies). At a fixed
 * {@code --rate} the load is an open loop: request i is due at {@code start + i * batch / rate},
 * and its latency is measured from that due time, not from when it was actually sent, so a stalled
 * server is charged for the requests it delayed (no coordinated omission). With {@code --rate 0} it
 * is a closed loop (as fast as the workers go) and latency runs from the send. Every latency is
 * kept; percentiles are exact ({@link Percentiles}).
 */
@Command(
    name = "submit",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Submit many small jobs (command `true`) as fast as asked and report what the controller"
          + " acknowledged, errors, the achieved rate and latency percentiles.",
      "At a fixed --rate, latency runs from each request's scheduled send time (open loop: a"
          + " slow server is charged for the requests it held back). --rate 0 sends as fast as"
          + " --concurrency allows. Stops after --count jobs or --duration seconds (default:"
          + " 1000 jobs), then waits for the replies.",
      "Example: kairos bench submit --rate 2000 --duration 30 --concurrency 128",
      ""
    })
final class BenchSubmitCommand extends ApiCommand {
  static final long DEFAULT_COUNT = 1000;
  static final long DRAIN_SECONDS = ApiClient.REQUEST_TIMEOUT.toSeconds() + 10;

  @Option(
      names = "--rate",
      paramLabel = "JOBS_PER_S",
      defaultValue = "0",
      description =
          "Target submit rate in jobs/s; 0 = as fast as possible (default: ${DEFAULT-VALUE}).")
  double rate;

  @Option(
      names = "--duration",
      paramLabel = "TIME",
      description =
          "Stop sending after this long: seconds (2.5), or 500ms, 30s, 10m, 1h. A long run"
              + " prints its figures per --window as it goes.")
  String duration;

  @Option(
      names = "--window",
      paramLabel = "TIME",
      defaultValue = "60s",
      description =
          "For runs longer than this: the figures of each window of this length, by due time"
              + " (default: ${DEFAULT-VALUE}), so a sustained latency can be read off.")
  String window;

  /** --duration in seconds; null when not given. */
  Double durationSeconds;

  @Option(
      names = "--count",
      paramLabel = "N",
      description =
          "Stop after N jobs (default " + DEFAULT_COUNT + " when --duration is not given).")
  Long count;

  @Option(
      names = "--concurrency",
      paramLabel = "C",
      defaultValue = "64",
      description = "Requests in flight at most (default: ${DEFAULT-VALUE}).")
  int concurrency;

  @Option(
      names = "--batch",
      paramLabel = "B",
      defaultValue = "1",
      description =
          "Jobs per request; above 1, the body is a JSON array (default: ${DEFAULT-VALUE}).")
  int batch;

  @Option(
      names = "--gpus",
      paramLabel = "N",
      defaultValue = "1",
      description = "GPUs per job (default: ${DEFAULT-VALUE}).")
  int gpus;

  @Option(
      names = "--cpus",
      paramLabel = "N",
      description = "CPUs per job (default: the controller's, 1).")
  Integer cpus;

  @Option(names = "--queue", paramLabel = "QUEUE", description = "The queue to submit to.")
  String queue;

  @Option(
      names = "--agents",
      paramLabel = "N",
      defaultValue = "0",
      description =
          "Also run N emulated agents over the real agent API (needs --join-token-file), so"
              + " that the submitted jobs run and finish: each takes its tasks at once, holds"
              + " them --task-time and reports exit 0; no process is started (default: none).")
  int agents;

  @Option(
      names = "--agent-gpus",
      paramLabel = "G",
      defaultValue = "8",
      description = "GPUs per emulated agent (default: ${DEFAULT-VALUE}).")
  int agentGpus;

  @Option(
      names = "--task-time",
      paramLabel = "TIME",
      defaultValue = "0s",
      description = "How long an emulated agent's task runs (default: ${DEFAULT-VALUE}).")
  String taskTime;

  @Option(
      names = "--join-token-file",
      paramLabel = "FILE",
      description = "The join token for --agents (the controller's DATA/join.token).")
  java.nio.file.Path joinTokenFile;

  @Option(
      names = "--server-stats",
      description =
          "Read the controller's /metrics every 5 s and print, after each window and at the"
              + " end, its live jobs, jobs in the replicated state, heap in use and snapshots.")
  boolean serverStats;

  private ServerGauges gauges;

  /** What one run measured. */
  record Result(
      long requests,
      long jobsAcknowledged,
      long errors,
      double seconds,
      Percentiles latencyNanos,
      String firstError) {
    double rate() {
      return seconds > 0 ? jobsAcknowledged / seconds : 0;
    }
  }

  @Override
  int run(ApiClient api, PrintWriter out) throws InterruptedException {
    if (!(rate >= 0) || concurrency < 1 || batch < 1 || gpus < 0) {
      throw new UsageException("--rate must be >= 0, --concurrency and --batch >= 1, --gpus >= 0");
    }
    durationSeconds = duration == null ? null : seconds(duration, "--duration");
    windowNanos = (long) (seconds(window, "--window") * 1e9);
    if (count != null && count < 1
        || durationSeconds != null && !(durationSeconds > 0)
        || windowNanos <= 0) {
      throw new UsageException("--count, --duration and --window must be > 0");
    }
    long jobs = count != null ? count : durationSeconds != null ? Long.MAX_VALUE : DEFAULT_COUNT;
    // Before the clock starts: is a controller there, and does it take the token?
    api.get("/api/v1/whoami");
    BenchAgents fakes =
        agents == 0 ? null : BenchAgents.start(api, agents, agentGpus, taskTime, joinTokenFile);
    if (serverStats) {
      gauges = new ServerGauges(api);
      gauges.start(5_000);
    }
    Result r;
    try {
      r = load(api, jobs, out);
    } finally {
      if (gauges != null) {
        gauges.stop();
      }
      if (fakes != null) {
        fakes.close();
      }
    }
    if (isJson()) {
      ObjectNode o = Json.MAPPER.createObjectNode();
      o.put("requests", r.requests());
      o.put("jobs_acknowledged", r.jobsAcknowledged());
      o.put("errors", r.errors());
      o.put("duration_s", round(r.seconds()));
      o.put("rate_jobs_per_s", round(r.rate()));
      o.put("target_rate_jobs_per_s", rate);
      o.put("concurrency", concurrency);
      o.put("batch", batch);
      ObjectNode latency = o.putObject("latency_ms");
      latency.put("p50", ms(r.latencyNanos().value(50)));
      latency.put("p90", ms(r.latencyNanos().value(90)));
      latency.put("p99", ms(r.latencyNanos().value(99)));
      latency.put("p99_9", ms(r.latencyNanos().value(99.9)));
      latency.put("max", ms(r.latencyNanos().max()));
      if (r.firstError() != null) {
        o.put("first_error", r.firstError());
      }
      if (fakes != null) {
        o.put("jobs_finished_by_agents", fakes.finished.sum());
        o.put("agent_errors", fakes.errors.sum());
      }
      var last = gauges == null ? null : gauges.sampleNow();
      if (last != null) {
        o.put("server_live_jobs", last.live());
        o.put("server_jobs_in_state", last.inState());
        o.put("server_heap_mib", Math.round(last.heapBytes() / (1 << 20)));
        o.put("server_snapshots", last.snapshots());
        o.put("server_snapshot_max_ms", last.snapshotMaxMs());
      }
      Json.print(out, o);
    } else {
      out.printf(
          Locale.ROOT,
          "submitted to %s: %d requests of up to %d jobs over %.2f s"
              + " (target %s, concurrency %d)%n",
          api.server(),
          r.requests(),
          batch,
          r.seconds(),
          rate > 0 ? fmt(rate) + " jobs/s" : "as fast as possible",
          concurrency);
      out.printf(Locale.ROOT, "acknowledged  %d jobs%n", r.jobsAcknowledged());
      out.printf(Locale.ROOT, "errors        %d requests%n", r.errors());
      out.printf(Locale.ROOT, "rate          %s jobs/s%n", fmt(r.rate()));
      Percentiles p = r.latencyNanos();
      out.printf(
          Locale.ROOT,
          "latency (ms)  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s%n",
          fmt(ms(p.value(50))),
          fmt(ms(p.value(90))),
          fmt(ms(p.value(99))),
          fmt(ms(p.value(99.9))),
          fmt(ms(p.max())));
      if (r.firstError() != null) {
        out.println("first error   " + r.firstError());
      }
      if (fakes != null) {
        out.printf(
            Locale.ROOT,
            "agents        %d emulated, %d jobs ran and finished, %d failed exchanges%s%n",
            agents,
            fakes.finished.sum(),
            fakes.errors.sum(),
            fakes.firstError.get() == null ? "" : " (first: " + fakes.firstError.get() + ")");
      }
      var last = gauges == null ? null : gauges.sampleNow();
      if (last != null) {
        out.println(last.line());
      }
    }
    return r.errors() == 0 ? 0 : 1;
  }

  /**
   * How a run is cut into requests: how many ({@code Long.MAX_VALUE} until --duration), the last
   * one's size, the duration, and the spacing of requests at a fixed rate (0 for as fast as
   * possible).
   */
  private record Plan(long requests, int lastBatch, long durationNanos, double nanosPerRequest) {}

  private Plan plan(long jobs) {
    long requests = jobs == Long.MAX_VALUE ? Long.MAX_VALUE : (jobs + batch - 1) / batch;
    int lastBatch = jobs == Long.MAX_VALUE ? batch : (int) (jobs - (requests - 1) * batch);
    long durationNanos = durationSeconds == null ? Long.MAX_VALUE : (long) (durationSeconds * 1e9);
    return new Plan(requests, lastBatch, durationNanos, rate > 0 ? batch * 1e9 / rate : 0);
  }

  /** Sends {@code jobs} jobs (or until --duration), then waits for every reply. */
  private Result load(ApiClient api, long jobs, PrintWriter out) throws InterruptedException {
    URI server = URI.create(api.server().toString());
    return rawLoad(server, api.token(), api.tls().context(), jobs, out);
  }

  /**
   * The load over {@code --concurrency} keep-alive connections, one virtual thread each ({@link
   * RawHttp}). At a fixed rate a dispatcher hands out due times and a worker measures from the due
   * time it took, so time spent queued behind a slow server counts; at rate 0 each worker sends
   * back to back.
   */
  private Result rawLoad(
      URI server,
      String token,
      java.util.Optional<javax.net.ssl.SSLContext> tls,
      long jobs,
      PrintWriter out)
      throws InterruptedException {
    Plan plan = plan(jobs);
    long requests = plan.requests();
    int lastBatch = plan.lastBatch();
    long durationNanos = plan.durationNanos();
    double nanosPerRequest = plan.nanosPerRequest();
    byte[] full = RawHttp.post(server, "/api/v1/jobs", token, body(batch));
    byte[] last =
        lastBatch == batch ? full : RawHttp.post(server, "/api/v1/jobs", token, body(lastBatch));
    var latencies = new Samples();
    var acknowledged = new AtomicLong();
    var errors = new AtomicLong();
    var firstError = new AtomicReference<String>();
    var issued = new AtomicLong();
    var sentRequests = new AtomicLong();
    var tickets = new java.util.concurrent.LinkedBlockingQueue<Long>();
    long stop = Long.MIN_VALUE;
    long start = System.nanoTime();
    var lastReply = new AtomicLong(start);
    var workers = new java.util.ArrayList<Thread>();
    boolean windowed = !isJson() && durationNanos != Long.MAX_VALUE && durationNanos > windowNanos;
    var windows = new java.util.concurrent.ConcurrentHashMap<Long, Window>();
    var printed = new AtomicLong();
    Thread printer =
        windowed
            ? Thread.ofVirtual()
                .start(
                    () -> {
                      // A window is printed once its replies are in: WINDOW_GRACE after it ends.
                      try {
                        while (true) {
                          Thread.sleep(1000);
                          long ended = (System.nanoTime() - start - WINDOW_GRACE) / windowNanos;
                          synchronized (printed) {
                            printWindows(windows, printed, ended, out);
                          }
                        }
                      } catch (InterruptedException e) {
                        // the run is over: the rest are printed below
                      }
                    })
            : null;
    for (int c = 0; c < concurrency; c++) {
      workers.add(
          Thread.ofVirtual()
              .start(
                  () -> {
                    RawHttp conn = null;
                    try {
                      while (true) {
                        long due;
                        long i;
                        if (rate > 0) {
                          due = tickets.take();
                          if (due == stop) {
                            return;
                          }
                          i = issued.getAndIncrement();
                        } else {
                          i = issued.getAndIncrement();
                          due = System.nanoTime();
                          if (i >= requests || due - start >= durationNanos) {
                            return;
                          }
                        }
                        boolean isLast = i == requests - 1;
                        try {
                          if (conn == null) {
                            conn = new RawHttp(server, tls);
                          }
                          sentRequests.incrementAndGet();
                          var reply = conn.send(isLast ? last : full);
                          long now = System.nanoTime();
                          lastReply.accumulateAndGet(now, Math::max);
                          Window win = windowed ? window(windows, printed, due - start) : null;
                          if (reply.status() == 201) {
                            latencies.add(now - due);
                            acknowledged.addAndGet(isLast ? lastBatch : batch);
                            if (win != null) {
                              win.latencies().add(now - due);
                              win.jobs().addAndGet(isLast ? lastBatch : batch);
                            }
                          } else {
                            errors.incrementAndGet();
                            if (win != null) {
                              win.errors().incrementAndGet();
                            }
                            firstError.compareAndSet(null, problemDetail(reply));
                          }
                        } catch (java.io.IOException e) {
                          errors.incrementAndGet();
                          firstError.compareAndSet(null, e.toString());
                          closeQuietly(conn);
                          conn = null;
                        }
                      }
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    } finally {
                      closeQuietly(conn);
                    }
                  }));
    }
    if (rate > 0) {
      for (long i = 0; i < requests; i++) {
        long due = start + (long) (i * nanosPerRequest);
        if (due - start >= durationNanos) {
          break;
        }
        for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
          LockSupport.parkNanos(wait);
        }
        tickets.add(due);
      }
      for (int c = 0; c < concurrency; c++) {
        tickets.add(stop);
      }
    }
    // Workers end by themselves (count or duration reached, or every request failing fast);
    // the deadline only guards against a server that stops answering mid-request.
    long deadline =
        (durationNanos == Long.MAX_VALUE ? Long.MAX_VALUE / 2 : start + durationNanos)
            + TimeUnit.SECONDS.toNanos(DRAIN_SECONDS);
    for (Thread w : workers) {
      long left = deadline - System.nanoTime();
      if (left <= 0 || !w.join(java.time.Duration.ofNanos(left))) {
        errors.incrementAndGet();
        firstError.compareAndSet(null, "requests got no reply within " + DRAIN_SECONDS + " s");
        w.interrupt();
      }
    }
    if (printer != null) {
      printer.interrupt();
      printer.join();
      printWindows(windows, printed, Long.MAX_VALUE / 2, out);
    }
    double seconds = (lastReply.get() - start) / 1e9;
    return new Result(
        sentRequests.get(),
        acknowledged.get(),
        errors.get(),
        seconds,
        latencies.percentiles(),
        firstError.get());
  }

  private long windowNanos;

  /** A duration option in seconds: a bare number (fractions allowed) or 500ms, 30s, 10m, 1h. */
  static double seconds(String text, String option) {
    try {
      return Double.parseDouble(text.strip());
    } catch (NumberFormatException e) {
      return Durations.millis(text, option) / 1000.0;
    }
  }

  /** The latencies of one window of due times, and its acknowledged jobs. */
  private record Window(Samples latencies, AtomicLong jobs, AtomicLong errors) {
    Window() {
      this(new Samples(), new AtomicLong(), new AtomicLong());
    }
  }

  static final long WINDOW_GRACE = TimeUnit.SECONDS.toNanos(5);

  /** The window a request due at {@code sinceStart} counts in; null once that one was printed. */
  private Window window(
      java.util.concurrent.ConcurrentHashMap<Long, Window> windows,
      AtomicLong printed,
      long sinceStart) {
    long w = Math.max(0, sinceStart) / windowNanos;
    return w < printed.get() ? null : windows.computeIfAbsent(w, k -> new Window());
  }

  /** The figures of each window that has ended, in order, once; the rest at the end. */
  private void printWindows(
      java.util.concurrent.ConcurrentHashMap<Long, Window> windows,
      java.util.concurrent.atomic.AtomicLong printed,
      long upTo,
      PrintWriter out) {
    if (out == null || isJson()) {
      return;
    }
    long last = windows.keySet().stream().mapToLong(Long::longValue).max().orElse(-1);
    for (long w = printed.get(); w < Math.min(upTo, last + 1); w = printed.incrementAndGet()) {
      Window win = windows.remove(w);
      if (win == null) {
        continue;
      }
      Percentiles p = win.latencies().percentiles();
      out.printf(
          Locale.ROOT,
          "window to %s s  %d jobs  %d errors  latency (ms) p50 %s  p90 %s  p99 %s  p99.9 %s"
              + "  max %s  load %s%n",
          fmt((w + 1) * windowNanos / 1e9),
          win.jobs().get(),
          win.errors().get(),
          fmt(ms(p.value(50))),
          fmt(ms(p.value(90))),
          fmt(ms(p.value(99))),
          fmt(ms(p.value(99.9))),
          fmt(ms(p.max())),
          BenchAgents.loadAverage());
      var sample = gauges == null ? null : gauges.latest();
      if (sample != null) {
        double[] peak = gauges.takePeaks();
        out.printf(
            Locale.ROOT,
            "  %s; peaks: live %.0f, in state %.0f, heap %.0f MiB%n",
            sample.line(),
            peak[0],
            peak[1],
            peak[2] / (1 << 20));
      }
      out.flush();
    }
  }

  /** The problem's detail, as the other commands print it, or the status and body. */
  private static String problemDetail(RawHttp.Reply reply) {
    try {
      var node = Json.MAPPER.readTree(reply.errorBody());
      if (node != null && node.hasNonNull("detail")) {
        return node.get("detail").asText();
      }
    } catch (java.io.IOException | RuntimeException e) {
      // not JSON: fall through
    }
    return "HTTP " + reply.status() + ": " + reply.errorBody();
  }

  private static void closeQuietly(RawHttp conn) {
    if (conn != null) {
      try {
        conn.close();
      } catch (java.io.IOException e) {
        // the connection is gone either way
      }
    }
  }

  /** One job (an object) or a JSON array of {@code n} of them. */
  private byte[] body(int n) {
    var job =
        new JobSubmission(
            "bench",
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
    return n == 1 ? Json.bytes(job) : Json.bytes(Collections.nCopies(n, job));
  }

  static double ms(long nanos) {
    return round(nanos / 1e6);
  }

  private static double round(double v) {
    return Math.round(v * 1000) / 1000.0;
  }

  static String fmt(double v) {
    return v >= 100
        ? String.format(Locale.ROOT, "%.0f", v)
        : v >= 10 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.2f", v);
  }
}
