package io.kairos.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kairos.protocol.GpuDevice;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.Registration;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code kairos bench heartbeats}: many simulated agents heartbeating one controller.
 *
 * <p>Design: the agents {@code PREFIX0 .. PREFIX(N-1)} register first with the join token ({@code
 * --register-parallel} at a time, each worker over one keep-alive connection; registrations that
 * arrive together share Raft entries, and this phase is timed and reported on its own), each with a
 * credential of its own ({@link BenchNodes}): a node secret over http, a key and the certificate
 * the controller issues for it over https. A name is bound to its credential, so each run takes new
 * names (a random prefix). Then heartbeats follow a fixed schedule, an open loop: heartbeat {@code
 * j} is agent {@code j mod N}'s, due at {@code start + j / (N * rate)} seconds, so each agent
 * heartbeats every {@code 1/rate} s and the agents are spread evenly over the interval. {@code
 * --connections} workers take the next index, wait for its due time and send it: over http on one
 * keep-alive {@link RawHttp} connection per worker, each heartbeat with its agent's node secret;
 * over https on the agent's own connection (opened at its first heartbeat, in the warmup), which
 * presents its certificate, as a real agent's does; latency runs from the due time, so a stalled
 * server is charged for the heartbeats it held back (no coordinated omission). Heartbeats due in
 * the warmup are sent but not counted.
 *
 * <p>Besides latency it reports what a failure detector would see: for each agent, the longest gap
 * between the replies to its successful heartbeats during the measured window (and from its last
 * one to the end); an agent whose gap exceeds twice the interval would have been suspected.
 */
@Command(
    name = "heartbeats",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Register --agents simulated agents (no GPUs, no CPUs: nothing is placed on them) and"
          + " heartbeat each --rate times a second on a fixed schedule; report the achieved rate,"
          + " latency from each heartbeat's scheduled time, errors by status, and how many agents"
          + " went more than two intervals without a successful heartbeat.",
      "The agents stay registered afterwards (their leases lapse): use a test controller.",
      "Example: kairos bench heartbeats --url http://127.0.0.1:8080 --join-token-file"
          + " DATA/join.token --agents 10000 --rate 1 --duration 60s --warmup 20s",
      ""
    })
final class BenchHeartbeatsCommand implements Callable<Integer> {
  static final long DRAIN_SECONDS = ApiClient.REQUEST_TIMEOUT.toSeconds() + 10;

  @Spec CommandSpec spec;

  @Option(
      names = {"--url", "--server"},
      paramLabel = "URL",
      defaultValue = ClientOptions.DEFAULT_SERVER,
      description =
          "The controller (the leader) to load, http or https (default: ${DEFAULT-VALUE}).")
  String url;

  @Option(
      names = "--ca",
      paramLabel = "FILE",
      description =
          "For https: the cluster CA to verify the controller against (default: $KAIROS_CA,"
              + " else $KAIROS_DATA/ca.pem, else the JDK's CAs).")
  Path ca;

  /** The TLS context of the https connections (a load generator may use plain http anywhere). */
  private java.util.Optional<javax.net.ssl.SSLContext> tls = java.util.Optional.empty();

  /** The agents' own credentials. */
  private BenchNodes nodes;

  /** Over https: the context of the agents' own connections (each presents its certificate). */
  private ClientTls agentTls;

  @Option(names = "--join-token", paramLabel = "TOKEN", description = "The join token.")
  String joinToken;

  @Option(
      names = "--join-token-file",
      paramLabel = "FILE",
      description = "Read the join token from this file (the controller's DATA/join.token).")
  Path joinTokenFile;

  @Option(
      names = "--agents",
      paramLabel = "N",
      defaultValue = "1000",
      description = "Simulated agents (default: ${DEFAULT-VALUE}).")
  int agents;

  @Option(
      names = "--rate",
      paramLabel = "PER_S",
      defaultValue = "1",
      description = "Heartbeats per agent per second (default: ${DEFAULT-VALUE}).")
  double rate;

  @Option(
      names = "--duration",
      paramLabel = "TIME",
      defaultValue = "60s",
      converter = Seconds.class,
      description =
          "How long to measure: 60s, 2m, 1500ms or plain seconds (default: ${DEFAULT-VALUE}).")
  double durationSeconds;

  @Option(
      names = "--warmup",
      paramLabel = "TIME",
      defaultValue = "0s",
      converter = Seconds.class,
      description = "Heartbeat this long first without counting (default: ${DEFAULT-VALUE}).")
  double warmupSeconds;

  @Option(
      names = "--connections",
      paramLabel = "C",
      defaultValue = "16",
      description =
          "Keep-alive connections, each with one heartbeat in flight (default: ${DEFAULT-VALUE}).")
  int connections;

  @Option(
      names = "--register-parallel",
      paramLabel = "P",
      defaultValue = "32",
      description = "Registrations in flight at once (default: ${DEFAULT-VALUE}).")
  int registerParallel;

  @Option(
      names = "--prefix",
      paramLabel = "TEXT",
      description =
          "The agents' names are TEXT0 .. TEXT(N-1) (default: bench-, 6 random hex digits, -): a"
              + " name is bound to the credential it first registered with, so a rerun takes new"
              + " names.")
  String prefix;

  @Option(
      names = "--gpus",
      paramLabel = "N",
      defaultValue = "0",
      description = "Emulated GPUs per agent, 0 or 1 (default: ${DEFAULT-VALUE}).")
  int gpus;

  @Option(
      names = {"-o", "--output"},
      paramLabel = "table|json",
      converter = ClientOptions.OutputConverter.class,
      description = "table (default) or json.")
  ClientOptions.Output output;

  /** "60s", "2m", "1500ms", "0.5" (seconds) to seconds. */
  static final class Seconds implements ITypeConverter<Double> {
    @Override
    public Double convert(String value) {
      String v = value.strip().toLowerCase(Locale.ROOT);
      double scale = 1;
      if (v.endsWith("ms")) {
        v = v.substring(0, v.length() - 2);
        scale = 0.001;
      } else if (v.endsWith("s")) {
        v = v.substring(0, v.length() - 1);
      } else if (v.endsWith("m")) {
        v = v.substring(0, v.length() - 1);
        scale = 60;
      }
      try {
        double s = Double.parseDouble(v.strip()) * scale;
        if (s >= 0 && Double.isFinite(s)) {
          return s;
        }
      } catch (NumberFormatException e) {
        // fall through
      }
      throw new TypeConversionException(
          "'" + value + "' is not a duration; use e.g. 60s, 2m or 1500ms");
    }
  }

  /** What the heartbeat phase measured. */
  record Result(
      long due,
      long ok,
      double seconds,
      Percentiles latencyNanos,
      Map<String, Long> errors,
      long lateAgents,
      long maxGapNanos,
      String firstError) {
    long errorCount() {
      return errors.values().stream().mapToLong(Long::longValue).sum();
    }

    double rate() {
      return seconds > 0 ? ok / seconds : 0;
    }
  }

  @Override
  public Integer call() throws IOException, InterruptedException {
    if (agents < 1 || agents > 1_000_000) {
      throw new UsageException("--agents must be in 1..1000000, got " + agents);
    }
    if (!(rate > 0 && rate <= 1000)) {
      throw new UsageException(
          "--rate must be in (0, 1000] heartbeats per agent per second, got " + rate);
    }
    if (!(durationSeconds > 0)) {
      throw new UsageException("--duration must be > 0");
    }
    if (connections < 1 || connections > 4096 || registerParallel < 1 || registerParallel > 4096) {
      throw new UsageException("--connections and --register-parallel must be in 1..4096");
    }
    if (gpus < 0 || gpus > 1) {
      throw new UsageException("--gpus must be 0 or 1, got " + gpus);
    }
    URI server = URI.create(url.strip().replaceAll("/+$", ""));
    if (!("http".equals(server.getScheme()) || "https".equals(server.getScheme()))
        || server.getHost() == null) {
      throw new UsageException(
          "--url must be an http(s) base URL, e.g. " + ClientOptions.DEFAULT_SERVER);
    }
    var clientTls = ClientTls.resolve(ca, true);
    tls = clientTls.context();
    String token = AgentCommand.token(joinToken, joinTokenFile);
    if (prefix == null) {
      prefix = String.format(Locale.ROOT, "bench-%06x-", new java.util.Random().nextInt(1 << 24));
    }
    nodes = new BenchNodes(prefix, agents, "https".equals(server.getScheme()));
    agentTls = nodes.certificates() ? clientTls : null;
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();

    long regStart = System.nanoTime();
    long[] epochs;
    try {
      epochs = register(server, token);
    } catch (IOException e) {
      err.println("kairos: registration failed: " + ApiClient.describe(e));
      return 1;
    }
    double regSeconds = (System.nanoTime() - regStart) / 1e9;
    Result r = heartbeat(server, token, epochs);

    double target = agents * rate;
    double intervalMs = 1000 / rate;
    if (output == ClientOptions.Output.JSON) {
      ObjectNode o = Json.MAPPER.createObjectNode();
      o.put("agents", agents);
      o.put("register_s", round(regSeconds));
      o.put("register_per_s", round(agents / regSeconds));
      o.put("target_per_s", target);
      o.put("achieved_per_s", round(r.rate()));
      o.put("due", r.due());
      o.put("ok", r.ok());
      o.put("measured_s", round(r.seconds()));
      o.put("connections", connections);
      ObjectNode latency = o.putObject("latency_ms");
      latency.put("p50", ms(r.latencyNanos().value(50)));
      latency.put("p99", ms(r.latencyNanos().value(99)));
      latency.put("p99_9", ms(r.latencyNanos().value(99.9)));
      latency.put("max", ms(r.latencyNanos().max()));
      ObjectNode errors = o.putObject("errors");
      r.errors().forEach(errors::put);
      o.put("late_agents", r.lateAgents());
      o.put("max_gap_ms", ms(r.maxGapNanos()));
      if (r.firstError() != null) {
        o.put("first_error", r.firstError());
      }
      Json.print(out, o);
    } else {
      out.printf(
          Locale.ROOT,
          "heartbeats to %s: %d agents every %s ms (target %s/s), %d connections,"
              + " warmup %s s, measured %s s%n",
          server,
          agents,
          fmt(intervalMs),
          fmt(target),
          connections,
          fmt(warmupSeconds),
          fmt(r.seconds()));
      out.printf(
          Locale.ROOT,
          "registered    %d agents in %.1f s (%s/s, %d in parallel)%n",
          agents,
          regSeconds,
          fmt(agents / regSeconds),
          registerParallel);
      out.printf(
          Locale.ROOT,
          "achieved      %s heartbeats/s (%d ok of %d due)%n",
          fmt(r.rate()),
          r.ok(),
          r.due());
      Percentiles p = r.latencyNanos();
      out.printf(
          Locale.ROOT,
          "latency (ms)  p50 %s  p99 %s  p99.9 %s  max %s  (from the scheduled time)%n",
          fmt(ms(p.value(50))),
          fmt(ms(p.value(99))),
          fmt(ms(p.value(99.9))),
          fmt(ms(p.max())));
      var errors = new StringBuilder();
      r.errors()
          .forEach(
              (k, v) ->
                  errors.append(errors.isEmpty() ? "" : ", ").append(k).append(": ").append(v));
      out.printf(
          Locale.ROOT,
          "errors        %d%s%n",
          r.errorCount(),
          errors.isEmpty() ? "" : "  (" + errors + ")");
      out.printf(
          Locale.ROOT,
          "late agents   %d of %d went over %s ms between successful heartbeats"
              + " (longest gap %s ms)%n",
          r.lateAgents(),
          agents,
          fmt(2 * intervalMs),
          fmt(ms(r.maxGapNanos())));
      if (r.firstError() != null) {
        out.println("first error   " + r.firstError());
      }
    }
    out.flush();
    return r.errorCount() == 0 ? 0 : 1;
  }

  /**
   * Registers every agent; returns their epochs. Stops at the first failure. Each worker sends its
   * registrations over one keep-alive {@link RawHttp} connection, as the heartbeat phase does: the
   * JDK's HttpClient cost the bench about as much CPU per registration as the controller spent
   * serving it, and on a small machine the two share the cores.
   */
  private long[] register(URI server, String token) throws IOException, InterruptedException {
    long[] epochs = new long[agents];
    var next = new AtomicLong();
    try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
      var workers = new ArrayList<Future<Void>>();
      for (int w = 0; w < Math.min(registerParallel, agents); w++) {
        workers.add(
            pool.submit(
                () -> {
                  try (var conn = new RawHttp(server, tls)) {
                    for (long i = next.getAndIncrement(); i < agents; i = next.getAndIncrement()) {
                      byte[] body =
                          Json.bytes(nodes.withCredential((int) i, registration((int) i)));
                      var reply =
                          conn.send(
                              RawHttp.post(server, "/api/v1/agents/register", token, body), true);
                      if (reply.status() != 200) {
                        throw new IOException(
                            nodes.name((int) i) + ": HTTP " + reply.status() + ": " + reply.body());
                      }
                      var registered = Json.MAPPER.readValue(reply.body(), Registered.class);
                      nodes.registered((int) i, registered);
                      epochs[(int) i] = registered.epoch();
                    }
                  }
                  return null;
                }));
      }
      for (var f : workers) {
        try {
          f.get();
        } catch (java.util.concurrent.ExecutionException e) {
          next.set(agents); // the others stop after their current request
          throw e.getCause() instanceof IOException io
              ? io
              : new IOException(e.getCause().toString());
        }
      }
    }
    return epochs;
  }

  private Registration registration(int i) {
    List<GpuDevice> list =
        gpus == 0 ? List.of() : List.of(new GpuDevice(0, "GPU-bench-" + i, "bench-emulated", 0));
    return new Registration(
        nodes.name(i),
        "http://127.0.0.1:1",
        list,
        0,
        0,
        Map.of(),
        "zone-bench",
        "block-bench",
        "rack-bench-" + i / 64,
        1);
  }

  /** The heartbeat phase: warmup, then the measured window, then waiting for the replies. */
  private Result heartbeat(URI server, String token, long[] epochs) throws InterruptedException {
    byte[][] requests = new byte[agents][];
    for (int i = 0; i < agents; i++) {
      byte[] body = Json.bytes(new Heartbeat(nodes.name(i), epochs[i], List.of(), 0));
      requests[i] = RawHttp.post(server, "/api/v1/agents/heartbeat", nodes.bearer(i), body);
    }
    RawHttp[] own = nodes.certificates() ? new RawHttp[agents] : null;
    Object[] locks = own == null ? null : new Object[agents];
    for (int i = 0; own != null && i < agents; i++) {
      locks[i] = new Object();
    }
    double nanosPerHeartbeat = 1e9 / rate / agents;
    long intervalNanos = (long) (1e9 / rate);
    long start = System.nanoTime() + 50_000_000L; // the workers' connections open first
    long windowStart = start + (long) (warmupSeconds * 1e9);
    long windowEnd = windowStart + (long) (durationSeconds * 1e9);
    // Heartbeat j is due at start + j * nanosPerHeartbeat; the window is [firstMeasured, end).
    long firstMeasured = (long) Math.ceil((windowStart - start) / nanosPerHeartbeat);
    long end = (long) Math.ceil((windowEnd - start) / nanosPerHeartbeat);

    var latencies = new Samples();
    var ok = new LongAdder();
    var errors = new ConcurrentHashMap<String, LongAdder>();
    var firstError = new java.util.concurrent.atomic.AtomicReference<String>();
    var lastReply = new AtomicLong(windowStart);
    var lastOk = new AtomicLongArray(agents);
    var maxGap = new AtomicLongArray(agents);
    for (int i = 0; i < agents; i++) {
      lastOk.set(i, start);
    }
    var next = new AtomicLong();
    var workers = new ArrayList<Thread>();
    for (int c = 0; c < connections; c++) {
      workers.add(
          Thread.ofVirtual()
              .start(
                  () -> {
                    RawHttp conn = null;
                    try {
                      for (long j = next.getAndIncrement(); j < end; j = next.getAndIncrement()) {
                        long due = start + (long) (j * nanosPerHeartbeat);
                        for (long wait = due - System.nanoTime();
                            wait > 0;
                            wait = due - System.nanoTime()) {
                          LockSupport.parkNanos(wait);
                        }
                        int agent = (int) (j % agents);
                        boolean measured = j >= firstMeasured;
                        String failure;
                        try {
                          RawHttp.Reply reply;
                          if (own != null) {
                            reply = sendOwn(server, own, locks[agent], agent, requests[agent]);
                          } else {
                            if (conn == null) {
                              conn = new RawHttp(server, tls);
                            }
                            reply = conn.send(requests[agent]);
                          }
                          long now = System.nanoTime();
                          if (reply.status() == 200) {
                            long previous = lastOk.getAndAccumulate(agent, now, Math::max);
                            if (measured) {
                              lastReply.accumulateAndGet(now, Math::max);
                              latencies.add(now - due);
                              ok.increment();
                              maxGap.accumulateAndGet(agent, now - previous, Math::max);
                            }
                            continue;
                          }
                          failure = "HTTP " + reply.status();
                          firstError.compareAndSet(null, failure + ": " + reply.errorBody());
                        } catch (IOException e) {
                          failure = e.getClass().getSimpleName();
                          firstError.compareAndSet(null, e.toString());
                          closeQuietly(conn);
                          conn = null;
                        }
                        if (measured) {
                          lastReply.accumulateAndGet(System.nanoTime(), Math::max);
                          errors.computeIfAbsent(failure, k -> new LongAdder()).increment();
                        }
                      }
                    } finally {
                      closeQuietly(conn);
                    }
                  }));
    }
    long deadline = windowEnd + DRAIN_SECONDS * 1_000_000_000L;
    for (Thread w : workers) {
      long left = deadline - System.nanoTime();
      if (left <= 0 || !w.join(Duration.ofNanos(left))) {
        errors
            .computeIfAbsent("no reply within " + DRAIN_SECONDS + " s", k -> new LongAdder())
            .increment();
        w.interrupt();
      }
    }
    for (int i = 0; own != null && i < agents; i++) {
      closeQuietly(own[i]); // a worker still stuck on one gets an error: it is over
    }
    // Silence at the end counts too: an agent not heard from since well before the end is late.
    long late = 0;
    long longest = 0;
    for (int i = 0; i < agents; i++) {
      long gap = Math.max(maxGap.get(i), windowEnd - lastOk.get(i));
      longest = Math.max(longest, gap);
      if (gap > 2 * intervalNanos) {
        late++;
      }
    }
    var errorCounts = new TreeMap<String, Long>();
    errors.forEach((k, v) -> errorCounts.put(k, v.sum()));
    double seconds = (Math.max(lastReply.get(), windowEnd) - windowStart) / 1e9;
    return new Result(
        end - firstMeasured,
        ok.sum(),
        seconds,
        latencies.percentiles(),
        errorCounts,
        late,
        longest,
        firstError.get());
  }

  /**
   * Sends agent {@code agent}'s heartbeat on its own connection (opened, presenting its
   * certificate, the first time or after a failure); one heartbeat at a time per agent.
   */
  private RawHttp.Reply sendOwn(URI server, RawHttp[] own, Object lock, int agent, byte[] request)
      throws IOException {
    synchronized (lock) {
      try {
        if (own[agent] == null) {
          own[agent] = nodes.connect(server, agent, agentTls);
        }
        return own[agent].send(request);
      } catch (IOException e) {
        closeQuietly(own[agent]);
        own[agent] = null;
        throw e;
      }
    }
  }

  private static void closeQuietly(RawHttp conn) {
    if (conn != null) {
      try {
        conn.close();
      } catch (IOException e) {
        // gone either way
      }
    }
  }

  private static double ms(long nanos) {
    return round(nanos / 1e6);
  }

  private static double round(double v) {
    return Math.round(v * 1000) / 1000.0;
  }

  private static String fmt(double v) {
    return BenchSubmitCommand.fmt(v);
  }
}
