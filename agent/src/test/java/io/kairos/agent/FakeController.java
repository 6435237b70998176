package io.kairos.agent;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.HeartbeatReply;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.Registration;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskKill;
import io.kairos.protocol.agent.TaskRef;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A controller for agent tests: one {@link HttpServer} on a free port that answers register and
 * heartbeat like the real one, from what the test queued. Records what it receives.
 *
 * <p>Replies carry the queued launches, kills and gos once; exited tasks are forgotten (and
 * recorded in {@link #exited}) as soon as a heartbeat reports them. A heartbeat that finds nothing
 * queued is held up to its {@code waitMs} (a long poll).
 */
final class FakeController implements AutoCloseable {
  static final String TOKEN = "join-secret";

  /** The node secret of the last registration that carried one. */
  volatile String nodeSecret;

  /** The Authorization header of each accepted registration, in order. */
  final List<String> registrationAuthorizations = new java.util.concurrent.CopyOnWriteArrayList<>();

  private final ObjectMapper json = new ObjectMapper();
  private final HttpServer server;
  private final ExecutorService executor = Executors.newCachedThreadPool();
  private final AtomicLong epochs = new AtomicLong();

  final List<Registration> registrations = new CopyOnWriteArrayList<>();
  final List<Heartbeat> heartbeats = new CopyOnWriteArrayList<>();
  final Map<TaskKey, TaskReport> exited = new ConcurrentHashMap<>();
  final AtomicInteger refused = new AtomicInteger();

  private final List<TaskAssignment> launches = new ArrayList<>();
  private final List<TaskKill> kills = new ArrayList<>();
  private final List<TaskRef> gos = new ArrayList<>();
  private boolean fenceNext;

  volatile long heartbeatIntervalMs = 100;
  volatile long leaseMs = 10_000;

  /** When set, every request is answered 421 with this leader. */
  volatile String redirectTo;

  /** When not 0, every request is answered with this status. */
  volatile int failWith;

  FakeController() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(executor);
    server.createContext(ControllerClient.REGISTER, this::register);
    server.createContext(ControllerClient.HEARTBEAT, this::heartbeat);
    server.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  synchronized void assign(TaskAssignment assignment) {
    launches.add(assignment);
    notifyAll();
  }

  synchronized void kill(TaskKill kill) {
    kills.add(kill);
    notifyAll();
  }

  /** Releases a READY task of a gang: the next reply's {@code go} names it. */
  synchronized void go(TaskRef ref) {
    gos.add(ref);
    notifyAll();
  }

  synchronized void fenceNext() {
    fenceNext = true;
    notifyAll();
  }

  /** The last report of {@code key} any heartbeat carried. */
  Optional<TaskReport> lastReport(TaskKey key) {
    for (Heartbeat hb : heartbeats.reversed()) {
      for (TaskReport r : hb.tasks()) {
        if (new TaskKey(r.jobId(), r.attempt(), r.task()).equals(key)) {
          return Optional.of(r);
        }
      }
    }
    return Optional.empty();
  }

  private void register(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (refuse(exchange)) {
        return;
      }
      var registration = json.readValue(exchange.getRequestBody(), Registration.class);
      registrationAuthorizations.add(
          String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")));
      if (registration.credential() != null && registration.credential().secret() != null) {
        nodeSecret = registration.credential().secret();
      }
      registrations.add(registration);
      send(
          exchange,
          200,
          new Registered(
              registration.node(), epochs.incrementAndGet(), heartbeatIntervalMs, leaseMs));
    }
  }

  private void heartbeat(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (refuse(exchange)) {
        return;
      }
      var heartbeat = json.readValue(exchange.getRequestBody(), Heartbeat.class);
      heartbeats.add(heartbeat);
      List<TaskRef> forget = new ArrayList<>();
      for (TaskReport r : heartbeat.tasks()) {
        if (r.status() == TaskStatus.EXITED) {
          exited.putIfAbsent(new TaskKey(r.jobId(), r.attempt(), r.task()), r);
          forget.add(new TaskRef(r.jobId(), r.attempt(), r.task()));
        }
      }
      HeartbeatReply reply;
      try {
        reply = reply(heartbeat, forget);
      } catch (InterruptedException e) {
        return; // closing
      }
      send(exchange, 200, reply);
    }
  }

  private synchronized HeartbeatReply reply(Heartbeat heartbeat, List<TaskRef> forget)
      throws InterruptedException {
    long deadline = System.nanoTime() + heartbeat.waitMs() * 1_000_000;
    while (forget.isEmpty()
        && launches.isEmpty()
        && kills.isEmpty()
        && gos.isEmpty()
        && !fenceNext) {
      long leftMs = (deadline - System.nanoTime()) / 1_000_000;
      if (leftMs <= 0) {
        break;
      }
      wait(leftMs);
    }
    boolean fenced = fenceNext;
    fenceNext = false;
    var reply =
        new HeartbeatReply(
            epochs.get(),
            fenced,
            List.copyOf(launches),
            List.copyOf(kills),
            forget,
            List.copyOf(gos));
    launches.clear();
    kills.clear();
    gos.clear();
    return reply;
  }

  private boolean refuse(HttpExchange exchange) throws IOException {
    String leader = redirectTo;
    int status = failWith;
    if (leader != null) {
      refused.incrementAndGet();
      exchange.getResponseHeaders().set("Kairos-Leader", leader);
      sendText(exchange, 421, "not the leader");
      return true;
    }
    if (status != 0) {
      refused.incrementAndGet();
      sendText(exchange, status, "refused");
      return true;
    }
    String auth = exchange.getRequestHeaders().getFirst("Authorization");
    boolean registering = exchange.getRequestURI().getPath().equals(ControllerClient.REGISTER);
    // Registrations take the join token; heartbeats the node secret the node registered.
    boolean ok =
        registering
            ? ("Bearer " + TOKEN).equals(auth) || ("Bearer " + nodeSecret).equals(auth)
            : ("Bearer " + nodeSecret).equals(auth);
    if (!ok) {
      refused.incrementAndGet();
      sendText(exchange, 401, "bad token");
      return true;
    }
    return false;
  }

  private void send(HttpExchange exchange, int status, Object body) throws IOException {
    byte[] bytes = json.writeValueAsBytes(body);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private static void sendText(HttpExchange exchange, int status, String text) throws IOException {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
