package io.kairos.agent;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import io.kairos.agent.account.Account;
import io.kairos.agent.account.OwnerReads;
import io.kairos.agent.account.TaskOwners;
import io.kairos.protocol.StepOutput;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * The agent's own HTTP server: task output for the controller replicas, and a health check. It lets
 * in controller replicas only, and never takes a token of the cluster:
 *
 * <ul>
 *   <li>a node with a certificate serves HTTPS with it ({@link #https}) and requires a TLS client
 *       certificate of the cluster CA with the replica role ({@link NodeTls}); anyone else fails
 *       the handshake;
 *   <li>a node with a secret (plain HTTP, loopback) takes the log secret it registered as the
 *       bearer token (else 401): a secret of its own, which the controller keeps for it.
 * </ul>
 *
 * <ul>
 *   <li>{@code GET /logs/{jobId}/{attempt}/{task}?stream=stdout|stderr&offset=N&limit=M}: 200
 *       {@code text/plain} with the bytes from {@code offset}, at most {@code limit} (default and
 *       maximum 1 MiB); header {@code Kairos-Log-Offset} is the offset to ask for next, {@code
 *       Kairos-Log-Done} is true once the task has exited and the reply reached the end. 404 when
 *       the task is unknown here, 400 for a bad parameter or an offset past the end, 403 for a file
 *       not served. A task whose job named {@code output} or {@code error} files is read from
 *       those, as the agent recorded them ({@link TaskFiles}, out of the job's reach); such a file
 *       may hold earlier runs' output too, since it is appended to. A task that ran as another
 *       account than the agent's is read with that account's rights, and never through a symbolic
 *       link in the file's name ({@link OwnerReads}): 403 for a file its owner may not read, a
 *       link, or anything but a regular file.
 *   <li>{@code GET /steps/{jobId}/{attempt}/{step}/{task}?offsets=O0,E0,O1,E1,...}, same rule: what
 *       a step's processes on this node wrote since the given offsets (stdout, stderr for each
 *       local rank; missing ones are 0), as {@link StepOutput} JSON: the chunks (base64, rank =
 *       local rank), the new offsets, and {@code done} once the task has exited and every stream
 *       was read to its end. Read from the agent's own spool ({@link OutputSpool}); 404 when the
 *       step never ran here or its spool is gone.
 *   <li>{@code GET /healthz}: 200 {@code ok}, no token needed.
 * </ul>
 *
 * <p>Reads files only; never changes a task. Answers on a small pool of daemon threads.
 */
public final class LogServer implements AutoCloseable {
  public static final int DEFAULT_LIMIT = 1 << 20;
  public static final String OFFSET_HEADER = "Kairos-Log-Offset";
  public static final String DONE_HEADER = "Kairos-Log-Done";

  /** The most bytes of one stream in one {@code /steps} reply. */
  static final int STEP_CHUNK = 256 * 1024;

  private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
      com.fasterxml.jackson.databind.json.JsonMapper.builder().build();
  private static final int THREADS = 4;

  private final HttpServer server;
  private final ExecutorService executor;
  private final TaskTable table;
  private final Path dataDir;

  /** The bearer a reader must present; null over TLS, where the handshake let in replicas only. */
  private final byte[] logAuthorization;

  private final int agentUid = TaskOwners.thisProcess().uid();

  /**
   * Binds {@code host:port} (0: any free port) and serves plain HTTP; readers present {@code
   * logToken}, the log secret this agent registered, which every controller replica presents.
   */
  public LogServer(String host, int port, String logToken, Path dataDir, TaskTable table)
      throws IOException {
    this(
        HttpServer.create(new InetSocketAddress(host, port), 0),
        ("Bearer " + java.util.Objects.requireNonNull(logToken, "logToken"))
            .getBytes(StandardCharsets.UTF_8),
        dataDir,
        table);
  }

  /**
   * Binds {@code host:port} and serves HTTPS with {@code tls} (the node's certificate), requiring a
   * client certificate that its trust manager accepts (a controller replica's).
   */
  public static LogServer https(
      String host, int port, SSLContext tls, Path dataDir, TaskTable table) throws IOException {
    HttpsServer server = HttpsServer.create(new InetSocketAddress(host, port), 0);
    server.setHttpsConfigurator(
        new HttpsConfigurator(tls) {
          @Override
          public void configure(HttpsParameters params) {
            SSLParameters p = getSSLContext().getDefaultSSLParameters();
            p.setNeedClientAuth(true);
            params.setSSLParameters(p);
          }
        });
    return new LogServer(server, null, dataDir, table);
  }

  private LogServer(HttpServer server, byte[] logAuthorization, Path dataDir, TaskTable table) {
    this.table = table;
    this.dataDir = dataDir;
    this.logAuthorization = logAuthorization;
    this.server = server;
    ThreadFactory threads = Thread.ofPlatform().name("kairos-logs-", 0).daemon().factory();
    this.executor = Executors.newFixedThreadPool(THREADS, threads);
    server.setExecutor(executor);
    server.createContext("/healthz", this::health);
    server.createContext("/logs/", this::logs);
    server.createContext("/steps/", this::steps);
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

  /**
   * Whether the request may read output: GET, with the log secret over plain HTTP; else answered.
   */
  private boolean allowed(HttpExchange exchange) throws IOException {
    if (!exchange.getRequestMethod().equals("GET")) {
      send(exchange, 405, "method not allowed: use GET");
      return false;
    }
    String auth = exchange.getRequestHeaders().getFirst("Authorization");
    if (logAuthorization != null
        && (auth == null
            || !MessageDigest.isEqual(auth.getBytes(StandardCharsets.UTF_8), logAuthorization))) {
      exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer");
      send(exchange, 401, "missing or wrong bearer token");
      return false;
    }
    return true;
  }

  private void steps(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (!allowed(exchange)) {
        return;
      }
      StepRequest request;
      try {
        request = StepRequest.parse(exchange.getRequestURI().getPath(), query(exchange));
      } catch (IllegalArgumentException e) {
        send(exchange, 400, e.getMessage());
        return;
      }
      Path spool = LaunchSpec.spoolDir(dataDir, request.key());
      // Whether it still runs is read before the files: once exited, what is read is final.
      boolean active = table.isActive(request.key());
      int processes = Math.max(table.processes(request.key()), spooled(spool));
      if (processes == 0) {
        send(exchange, 404, "no output for " + request.key() + " on this node");
        return;
      }
      var chunks = new ArrayList<StepOutput.Chunk>();
      var offsets = new ArrayList<Long>();
      boolean atEnd = true;
      int budget = DEFAULT_LIMIT;
      for (int local = 0; local < processes; local++) {
        for (String stream : List.of("stdout", "stderr")) {
          int i = 2 * local + (stream.equals("stdout") ? 0 : 1);
          long offset = i < request.offsets().size() ? request.offsets().get(i) : 0;
          Path file = spool.resolve(local + (stream.equals("stdout") ? ".out" : ".err"));
          byte[] data =
              OutputSpool.read(file, offset, Math.max(0, Math.min(STEP_CHUNK, budget)))
                  .orElse(new byte[0]);
          budget -= data.length;
          if (data.length > 0) {
            chunks.add(
                new StepOutput.Chunk(local, stream, Base64.getEncoder().encodeToString(data)));
          }
          offsets.add(offset + data.length);
          if (OutputSpool.read(file, offset + data.length, 1)
              .map(b -> b.length > 0)
              .orElse(false)) {
            atEnd = false;
          }
        }
      }
      byte[] body = JSON.writeValueAsBytes(new StepOutput(chunks, offsets, !active && atEnd, null));
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  /** How many processes left output in {@code spool}: one past the highest local rank there. */
  private static int spooled(Path spool) {
    if (!Files.isDirectory(spool, LinkOption.NOFOLLOW_LINKS)) {
      return 0;
    }
    int most = 0;
    try (var files = Files.list(spool)) {
      for (Path f : files.toList()) {
        String name = f.getFileName().toString();
        int dot = name.indexOf('.');
        if (dot > 0 && name.substring(0, dot).matches("\\d{1,6}")) {
          most = Math.max(most, Integer.parseInt(name.substring(0, dot)) + 1);
        }
      }
    } catch (IOException e) {
      return 0;
    }
    return most;
  }

  private void logs(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (!allowed(exchange)) {
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
    Path record = dir.resolveSibling(request.key().dirName() + ".task");
    Optional<TaskFiles> files = TaskFiles.read(record);
    if (files.isEmpty() && !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      send(exchange, 404, "no output for " + request.key() + " on this node");
      return;
    }
    // Whether the task still runs is read before the file: if it had exited by then, what is
    // read after is final and "done" is true only when nothing more can come.
    boolean active = table.isActive(request.key());
    OwnerReads.Result read = read(files, dir, request);
    switch (read) {
      case OwnerReads.Result.Refused r -> send(exchange, 403, r.why());
      case OwnerReads.Result.PastEnd _ ->
          send(exchange, 400, "offset " + request.offset() + " is past the end");
      case OwnerReads.Result.Missing _ -> {
        // The task has not opened its output yet.
        if (request.offset() > 0) {
          send(exchange, 400, "offset " + request.offset() + " is past the end (0)");
        } else {
          reply(exchange, request, new byte[0], !active);
        }
      }
      case OwnerReads.Result.Bytes b -> reply(exchange, request, b.data(), !active && b.atEnd());
    }
  }

  /**
   * The bytes asked for, read as the account the task ran as when that is another than the agent's
   * (the agent is root), else by the agent itself; never through a symbolic link.
   */
  private OwnerReads.Result read(Optional<TaskFiles> files, Path dir, LogRequest request)
      throws IOException {
    if (files.isEmpty()) {
      // A task of an agent before TaskFiles: its pointer is trusted only in a directory the agent
      // owns (its own account's task), never in one a job could write.
      if (!ownedByAgent(dir)) {
        return new OwnerReads.Result.Refused(
            "the output of " + request.key() + " has no record of its owner: not served");
      }
      Path file = ProcessLauncher.outputFile(dir, request.stream());
      return OwnerReads.here(file, request.offset(), request.limit());
    }
    Path file = files.get().file(request.stream());
    Optional<Account> owner = files.get().owner();
    if (owner.isPresent() && owner.get().uid() != agentUid) {
      return OwnerReads.asOwner(owner.get(), file, request.offset(), request.limit());
    }
    return OwnerReads.here(file, request.offset(), request.limit());
  }

  private boolean ownedByAgent(Path dir) throws IOException {
    return (int) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS) == agentUid;
  }

  private static void reply(HttpExchange exchange, LogRequest request, byte[] bytes, boolean done)
      throws IOException {
    long next = request.offset() + bytes.length;
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

  /** A parsed {@code /steps/...} request. */
  record StepRequest(TaskKey key, List<Long> offsets) {
    static StepRequest parse(String path, Map<String, String> query) {
      String[] parts = path.split("/", -1);
      // "", "steps", jobId, attempt, step, task
      if (parts.length != 6) {
        throw new IllegalArgumentException("path must be /steps/{jobId}/{attempt}/{step}/{task}");
      }
      long jobId = LogRequest.number(parts[2], "jobId");
      int attempt = (int) Math.min(LogRequest.number(parts[3], "attempt"), Integer.MAX_VALUE);
      int step = (int) Math.min(LogRequest.number(parts[4], "step"), Integer.MAX_VALUE);
      int task = (int) Math.min(LogRequest.number(parts[5], "task"), Integer.MAX_VALUE);
      var offsets = new ArrayList<Long>();
      String raw = query.getOrDefault("offsets", "");
      if (!raw.isBlank()) {
        String[] words = raw.split(",");
        if (words.length > 2 * io.kairos.protocol.slurm.TaskLayout.MAX_PER_NODE) {
          throw new IllegalArgumentException("too many offsets: " + words.length);
        }
        for (String word : words) {
          offsets.add(LogRequest.number(word.strip(), "offsets"));
        }
      }
      return new StepRequest(new TaskKey(jobId, attempt, step, task), List.copyOf(offsets));
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

    static long number(String text, String field) {
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
