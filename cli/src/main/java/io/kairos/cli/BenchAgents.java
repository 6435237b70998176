package io.kairos.cli;

import io.kairos.protocol.GpuDevice;
import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.HeartbeatReply;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.Registration;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskRef;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.io.Closeable;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import javax.net.ssl.SSLContext;

/**
 * Lightweight emulated agents for {@code kairos bench submit --agents N}: each registers with the
 * join token and its own node secret (as a real agent does), advertises {@code gpus} emulated GPUs,
 * and heartbeats over the real agent API on a keep-alive connection of its own, long-polling so
 * that assignments reach it at once. A task it is given "runs" for {@code taskMillis} (no process
 * is started) and then exits 0; the exit goes out at once in the next heartbeat, the task is
 * dropped when the controller says forget. So submitted jobs run and finish, and the controller's
 * state, log and accounting store see the whole life of each job, without the cost of real agents
 * (a JVM and processes per task) on the machine that also runs the controller and the load.
 *
 * <p>Over https the agents would need certificates ({@link BenchNodes} has them); this is for the
 * plain-http test controller the benchmark script starts.
 */
final class BenchAgents implements Closeable {
  private final URI server;
  private final Optional<SSLContext> tls;
  private final int agents;
  private final int gpus;
  private final long taskMillis;
  private final BenchNodes nodes;
  private final List<Thread> threads = new ArrayList<>();
  private volatile boolean closed;

  /** Tasks reported EXITED (jobs that ran and finished), and failed exchanges. */
  final LongAdder finished = new LongAdder();

  final LongAdder errors = new LongAdder();
  final AtomicReference<String> firstError = new AtomicReference<>();

  BenchAgents(URI server, Optional<SSLContext> tls, int agents, int gpus, long taskMillis) {
    this.server = server;
    this.tls = tls;
    this.agents = agents;
    this.gpus = gpus;
    this.taskMillis = taskMillis;
    String prefix =
        String.format(Locale.ROOT, "fake-%06x-", new java.util.Random().nextInt(1 << 24));
    this.nodes = new BenchNodes(prefix, agents, false);
  }

  /** {@code agents} emulated agents of {@code --agents}, registered and heartbeating. */
  static BenchAgents start(
      ApiClient api, int agents, int agentGpus, String taskTime, java.nio.file.Path joinTokenFile) {
    if (agents < 0 || agents > 10_000 || agentGpus < 1 || agentGpus > 64) {
      throw new UsageException("--agents must be 0 to 10000 and --agent-gpus 1 to 64");
    }
    long taskMillis = (long) (BenchSubmitCommand.seconds(taskTime, "--task-time") * 1000);
    if (taskMillis < 0) {
      throw new UsageException("--task-time must be >= 0");
    }
    String join;
    try {
      join = AgentCommand.token(null, joinTokenFile);
    } catch (java.io.IOException e) {
      throw new UsageException("--join-token-file: cannot read " + joinTokenFile + ": " + e);
    }
    var fakes =
        new BenchAgents(
            URI.create(api.server().toString()),
            api.tls().context(),
            agents,
            agentGpus,
            taskMillis);
    try {
      fakes.start(join);
    } catch (java.io.IOException e) {
      fakes.close();
      throw new UsageException("--agents: " + ApiClient.describe(e));
    }
    return fakes;
  }

  /** The 1-minute load average of this machine (Linux), or "?". */
  static String loadAverage() {
    try {
      return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).split(" ")[0];
    } catch (java.io.IOException | RuntimeException e) {
      return "?";
    }
  }

  /** Registers every agent, then starts their heartbeat loops. */
  void start(String joinToken) throws IOException {
    try (var conn = new RawHttp(server, tls)) {
      for (int i = 0; i < agents; i++) {
        byte[] body = Json.bytes(nodes.withCredential(i, registration(i)));
        var reply =
            conn.send(RawHttp.post(server, "/api/v1/agents/register", joinToken, body), true);
        if (reply.status() != 200) {
          throw new IOException(
              nodes.name(i) + ": registration: HTTP " + reply.status() + ": " + reply.body());
        }
        var registered = Json.MAPPER.readValue(reply.body(), Registered.class);
        int agent = i;
        threads.add(
            Thread.ofVirtual()
                .name(nodes.name(i))
                .start(() -> loop(agent, registered.epoch(), registered.heartbeatIntervalMs())));
      }
    }
  }

  private Registration registration(int i) {
    var list = new ArrayList<GpuDevice>();
    for (int g = 0; g < gpus; g++) {
      list.add(new GpuDevice(g, "GPU-fake-" + i + "-" + g, "bench-emulated", 80L << 30));
    }
    return new Registration(
        nodes.name(i),
        "http://127.0.0.1:1",
        list,
        8 * Math.max(1, gpus),
        1L << 40,
        Map.of(),
        "zone-bench",
        "block-bench",
        "rack-bench-" + i / 16,
        Math.max(1, gpus));
  }

  /** One agent: heartbeat, take launches, report exits, until closed. */
  private void loop(int agent, long epoch, long intervalMs) {
    // Tasks held, by launch: RUNNING until due, then EXITED until the controller forgets them.
    var held = new LinkedHashMap<TaskRef, TaskReport>();
    var dueAt = new LinkedHashMap<TaskRef, Long>();
    long waitMs = Math.max(100, Math.min(intervalMs, 2_000));
    RawHttp conn = null;
    while (!closed) {
      long now = System.currentTimeMillis();
      boolean news = false;
      long nextDue = Long.MAX_VALUE;
      for (var it = dueAt.entrySet().iterator(); it.hasNext(); ) {
        var e = it.next();
        if (e.getValue() <= now) {
          var r = held.get(e.getKey());
          held.put(e.getKey(), exited(r, now, 0, null));
          it.remove();
          news = true;
        } else {
          nextDue = Math.min(nextDue, e.getValue());
        }
      }
      long wait = news ? 0 : Math.max(0, Math.min(waitMs, nextDue - now));
      byte[] body =
          Json.bytes(new Heartbeat(nodes.name(agent), epoch, List.copyOf(held.values()), wait));
      try {
        if (conn == null) {
          conn = new RawHttp(server, tls);
        }
        var reply =
            conn.send(
                RawHttp.post(server, "/api/v1/agents/heartbeat", nodes.bearer(agent), body), true);
        if (reply.status() != 200) {
          fail("heartbeat: HTTP " + reply.status() + ": " + reply.body());
          sleep(200);
          continue;
        }
        var hb = Json.MAPPER.readValue(reply.body(), HeartbeatReply.class);
        long at = System.currentTimeMillis();
        for (TaskRef ref : list(hb.forget())) {
          if (held.remove(ref) != null && dueAt.remove(ref) == null) {
            finished.increment();
          }
        }
        for (var kill : list(hb.kill())) {
          for (var e : held.entrySet()) {
            if (e.getKey().jobId() == kill.jobId() && e.getValue().status() != TaskStatus.EXITED) {
              e.setValue(exited(e.getValue(), at, 143, ExitReason.KILLED));
              dueAt.remove(e.getKey());
            }
          }
        }
        for (TaskAssignment a : list(hb.launch())) {
          var ref = new TaskRef(a.jobId(), a.attempt(), a.task(), a.step());
          if (held.containsKey(ref)) {
            continue;
          }
          held.put(
              ref,
              new TaskReport(
                  a.jobId(),
                  a.attempt(),
                  a.task(),
                  TaskStatus.RUNNING,
                  null,
                  null,
                  null,
                  at,
                  null,
                  a.step(),
                  null));
          dueAt.put(ref, at + taskMillis);
        }
      } catch (IOException | RuntimeException e) {
        if (closed) {
          break;
        }
        fail(e.toString());
        closeQuietly(conn);
        conn = null;
        sleep(200);
      }
    }
    closeQuietly(conn);
  }

  private static TaskReport exited(TaskReport r, long now, int code, ExitReason reason) {
    return new TaskReport(
        r.jobId(),
        r.attempt(),
        r.task(),
        TaskStatus.EXITED,
        code,
        reason,
        null,
        r.startedAtMs(),
        now,
        r.step(),
        null);
  }

  private static <T> List<T> list(List<T> l) {
    return l == null ? List.of() : l;
  }

  private void fail(String what) {
    errors.increment();
    firstError.compareAndSet(null, what);
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
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

  /** Stops the agents (their registrations stay; their leases lapse). */
  @Override
  public void close() {
    closed = true;
    for (Thread t : threads) {
      try {
        if (!t.join(java.time.Duration.ofSeconds(5))) {
          t.interrupt();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
