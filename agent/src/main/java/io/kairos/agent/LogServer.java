package io.kairos.agent;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;

/**
 * The agent's own HTTP server: task output for the controller and the CLI, and a health check.
 *
 * <ul>
 *   <li>{@code GET /logs/{jobId}/{attempt}/{task}?stream=stdout|stderr&offset=N&limit=M}, with the
 *       join token as bearer (else 401): 200 {@code text/plain} with the bytes from {@code offset},
 *       at most {@code limit} (default and maximum 1 MiB); header {@code Kairos-Log-Offset} is the
 *       offset to ask for next, {@code Kairos-Log-Done} is true once the task has exited and the
 *       reply reached the end. 404 when the task directory does not exist, 400 for a bad parameter
 *       or an offset past the end. A task whose job named {@code output} or {@code error} files is
 *       read from those (through the pointer files {@link ProcessLauncher} leaves in the task
 *       directory); such a file may hold earlier runs' output too, since it is appended to.
 *   <li>{@code GET /healthz}: 200 {@code ok}, no token needed.
 * </ul>
 *
 * <p>Reads files only; never changes a task. Answers on a small pool of daemon threads.
 */
public final class LogServer implements AutoCloseable {
  public static final int DEFAULT_LIMIT = 1 << 20;
  public static final String OFFSET_HEADER = "Kairos-Log-Offset";
  public static final String DONE_HEADER = "Kairos-Log-Done";
  private static final int THREADS = 4;

  private final HttpServer server;
  private final ExecutorService executor;
  private final TaskTable table;
  private final Path dataDir;
  private final byte[] expectedAuthorization;
  private final byte[] logAuthorization;

  /**
   * Binds {@code host:port} (0: any free port) and starts serving; readers present the join token.
   */
  public LogServer(String host, int port, String joinToken, Path dataDir, TaskTable table)
      throws IOException {
    this(host, port, joinToken, joinToken, dataDir, table);
  }

  /**
   * As above, and also accepts {@code logToken}: the secret this agent registered, which every
   * controller replica presents (each replica may have its own join token).
   */
  public LogServer(
      String host, int port, String joinToken, String logToken, Path dataDir, TaskTable table)
      throws IOException {
    this.table = table;
    this.dataDir = dataDir;
    this.expectedAuthorization = ("Bearer " + joinToken).getBytes(StandardCharsets.UTF_8);
    this.logAuthorization = ("Bearer " + logToken).getBytes(StandardCharsets.UTF_8);
    this.server = HttpServer.create(new InetSocketAddress(host, port), 0);
    ThreadFactory threads = Thread.ofPlatform().name("kairos-logs-", 0).daemon().factory();
    this.executor = Executors.newFixedThreadPool(THREADS, threads);
    server.setExecutor(executor);
    server.createContext("/healthz", this::health);
    server.createContext("/logs/", this::logs);
    server.start();
  }

  /** The port bound (the actual one when 0 was asked for). */
  public int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }

  private void health(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (!exchange.getRequestMethod().equals("GET")) {
        send(exchange, 405, "method not allowed: use GET");
        return;
      }
      send(exchange, 200, "ok");
    }
  }

  private void logs(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (!exchange.getRequestMethod().equals("GET")) {
        send(exchange, 405, "method not allowed: use GET");
        return;
      }
      String auth = exchange.getRequestHeaders().getFirst("Authorization");
      if (auth == null
          || !(MessageDigest.isEqual(auth.getBytes(StandardCharsets.UTF_8), expectedAuthorization)
              || MessageDigest.isEqual(auth.getBytes(StandardCharsets.UTF_8), logAuthorization))) {
        exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer");
        send(exchange, 401, "missing or wrong bearer token");
        return;
      }
      LogRequest request;
      try {
        request = LogRequest.parse(exchange.getRequestURI().getPath(), query(exchange));
      } catch (IllegalArgumentException e) {
        send(exchange, 400, e.getMessage());
        return;
      }
      serve(exchange, request);
    }
  }

  private void serve(HttpExchange exchange, LogRequest request) throws IOException {
    Path dir = LaunchSpec.taskDir(dataDir, request.key());
    if (!Files.isDirectory(dir)) {
      send(exchange, 404, "no output for " + request.key() + " on this node");
      return;
    }
    // Whether the task still runs is read before the size: if it had exited by then, the size
    // read after is final and "done" is true only when nothing more can come.
    boolean active = table.isActive(request.key());
    // The job's output and error files when it named them, else the task directory's own.
    Path file = ProcessLauncher.outputFile(dir, request.stream());
    byte[] bytes;
    long size;
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      size = channel.size();
      if (request.offset() > size) {
        send(exchange, 400, "offset " + request.offset() + " is past the end (" + size + ")");
        return;
      }
      int length = (int) Math.min(request.limit(), size - request.offset());
      ByteBuffer buffer = ByteBuffer.allocate(length);
      while (buffer.hasRemaining()
          && channel.read(buffer, request.offset() + buffer.position()) > 0) {
        // a positional read may return less than asked: read until full or at the end
      }
      bytes = Arrays.copyOf(buffer.array(), buffer.position());
    } catch (NoSuchFileException e) {
      // The directory exists but the process has not opened its output yet.
      size = 0;
      bytes = new byte[0];
      if (request.offset() > 0) {
        send(exchange, 400, "offset " + request.offset() + " is past the end (0)");
        return;
      }
    }
    long next = request.offset() + bytes.length;
    boolean done = !active && next >= size;
    exchange.getResponseHeaders().set(OFFSET_HEADER, Long.toString(next));
    exchange.getResponseHeaders().set(DONE_HEADER, Boolean.toString(done));
    exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    exchange.sendResponseHeaders(200, bytes.length == 0 ? -1 : bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private static Map<String, String> query(HttpExchange exchange) {
    Map<String, String> params = new HashMap<>();
    String raw = exchange.getRequestURI().getRawQuery();
    if (raw == null || raw.isEmpty()) {
      return params;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      String name = eq < 0 ? pair : pair.substring(0, eq);
      String value = eq < 0 ? "" : pair.substring(eq + 1);
      params.put(
          URLDecoder.decode(name, StandardCharsets.UTF_8),
          URLDecoder.decode(value, StandardCharsets.UTF_8));
    }
    return params;
  }

  private static void send(HttpExchange exchange, int status, String text) throws IOException {
    byte[] body = text.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    exchange.sendResponseHeaders(status, body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }

  /** A parsed {@code /logs/...} request. */
  record LogRequest(TaskKey key, String stream, long offset, int limit) {
    static LogRequest parse(String path, Map<String, String> query) {
      String[] parts = path.split("/", -1);
      // "", "logs", jobId, attempt, task
      if (parts.length != 5) {
        throw new IllegalArgumentException("path must be /logs/{jobId}/{attempt}/{task}");
      }
      long jobId = number(parts[2], "jobId");
      int attempt = (int) Math.min(number(parts[3], "attempt"), Integer.MAX_VALUE);
      int task = (int) Math.min(number(parts[4], "task"), Integer.MAX_VALUE);
      TaskKey key = new TaskKey(jobId, attempt, task);
      String stream = query.getOrDefault("stream", "stdout");
      if (!stream.equals("stdout") && !stream.equals("stderr")) {
        throw new IllegalArgumentException("stream must be stdout or stderr, got '" + stream + "'");
      }
      long offset = query.containsKey("offset") ? number(query.get("offset"), "offset") : 0;
      long limit = query.containsKey("limit") ? number(query.get("limit"), "limit") : DEFAULT_LIMIT;
      if (limit < 1) {
        throw new IllegalArgumentException("limit must be >= 1, got " + limit);
      }
      return new LogRequest(key, stream, offset, (int) Math.min(limit, DEFAULT_LIMIT));
    }

    private static long number(String text, String field) {
      try {
        long value = Long.parseLong(text);
        if (value < 0) {
          throw new IllegalArgumentException(field + " must be >= 0, got " + value);
        }
        return value;
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(field + " must be a number, got '" + text + "'");
      }
    }
  }
}
