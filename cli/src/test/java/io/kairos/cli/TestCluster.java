package io.kairos.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobSubmission;
import io.kairos.protocol.JobView;
import io.kairos.protocol.NodeView;
import io.kairos.protocol.SubmitResult;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * A cluster of real processes on this machine: {@code kairos server} and several {@code kairos
 * agent}s, each agent on its own loopback address (127.0.0.2, 127.0.0.3, ...) with its own data
 * directory and emulated GPUs, started from the test's class path. Tests talk to it over HTTP as an
 * admin, and kill, freeze and thaw agents with real signals.
 */
final class TestCluster implements AutoCloseable {
  static final ObjectMapper JSON = JsonMapper.builder().build();

  final Path dir;
  final String url;
  final int port;
  final String adminToken;

  /**
   * A single-user cluster whose user is root (as the tests run in CI): the admin's jobs run as
   * root, which the controller and the agents allow ({@code --allow-root-jobs}). False for a shared
   * cluster ({@link #startShared}), which refuses root jobs.
   */
  final boolean singleUser;

  private final Process server;
  private final Map<String, Process> agents = new LinkedHashMap<>();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private TestCluster(
      Path dir, String url, int port, Process server, String adminToken, boolean singleUser) {
    this.dir = dir;
    this.url = url;
    this.port = port;
    this.server = server;
    this.adminToken = adminToken;
    this.singleUser = singleUser;
  }

  /** Starts a controller and waits until it serves. */
  static TestCluster start(Path dir) throws Exception {
    return start(dir, new String[0]);
  }

  /**
   * Starts a controller with extra {@code kairos server} arguments and waits until it serves; a
   * single-user cluster (root jobs allowed).
   */
  static TestCluster start(Path dir, String... serverArgs) throws Exception {
    return start(dir, true, freePort(), withRootJobs(serverArgs));
  }

  /** Starts a shared cluster's controller: jobs run as their users, root jobs refused. */
  static TestCluster startShared(Path dir, String... serverArgs) throws Exception {
    return start(dir, false, freePort(), serverArgs);
  }

  /**
   * As {@link #start(Path, String...)} on {@code port}: a controller restarted on the data of an
   * earlier one must listen where it did (its Raft identity is its address).
   */
  static TestCluster start(Path dir, int port, String... serverArgs) throws Exception {
    return start(dir, true, port, withRootJobs(serverArgs));
  }

  private static String[] withRootJobs(String... serverArgs) {
    var args = new ArrayList<>(Arrays.asList(serverArgs));
    args.add("--allow-root-jobs");
    return args.toArray(String[]::new);
  }

  private static TestCluster start(Path dir, boolean singleUser, int port, String... serverArgs)
      throws Exception {
    var args =
        new ArrayList<>(
            List.of(
                "server",
                "--data",
                dir.resolve("ctl").toString(),
                "--listen",
                "127.0.0.1:" + port));
    args.addAll(Arrays.asList(serverArgs));
    var server = java(dir.resolve("server.log"), args);
    String url = "http://127.0.0.1:" + port;
    Path token = dir.resolve("ctl/admin.token");
    waitFor(
        "the controller writes its admin token",
        Duration.ofSeconds(60),
        () -> Files.exists(token) && readQuietly(token).strip().length() > 10,
        () -> readQuietly(dir.resolve("server.log")));
    var cluster =
        new TestCluster(dir, url, port, server, Files.readString(token).strip(), singleUser);
    waitFor(
        "the controller serves",
        Duration.ofSeconds(60),
        () -> cluster.status("/api/v1/nodes") == 200,
        () -> readQuietly(dir.resolve("server.log")));
    return cluster;
  }

  /**
   * Starts agent {@code name} on loopback address 127.0.0.{@code host} with {@code gpus} emulated
   * GPUs and the extra arguments given, and waits until it registers.
   */
  Process agent(String name, int host, String gpus, String... extra) throws Exception {
    return agent(name, host, gpus, Map.of(), extra);
  }

  /**
   * As {@link #agent(String, int, String, String...)}, with extra environment variables; {@code
   * gpus} null discovers GPUs with the nvidia-smi that {@code extra} names.
   */
  Process agent(String name, int host, String gpus, Map<String, String> env, String... extra)
      throws Exception {
    return agentVia(url, name, host, gpus, env, extra);
  }

  /**
   * As {@link #agent(String, int, String, Map, String...)}, reaching the controller at {@code
   * controllerUrl} (a proxy in front of it).
   */
  Process agentVia(
      String controllerUrl,
      String name,
      int host,
      String gpus,
      Map<String, String> env,
      String... extra)
      throws Exception {
    var args =
        new ArrayList<>(
            List.of(
                "agent",
                "--controller",
                controllerUrl,
                "--join-token-file",
                dir.resolve("ctl/join.token").toString(),
                "--node-name",
                name,
                "--data",
                dir.resolve("agent-" + name).toString(),
                "--listen",
                "127.0.0." + host + ":0"));
    if (gpus != null) {
      args.addAll(List.of("--emulate-gpus", gpus));
    }
    if (singleUser) {
      args.add("--allow-root-jobs");
    }
    args.addAll(Arrays.asList(extra));
    var p = java(dir.resolve("agent-" + name + ".log"), args, env);
    agents.put(name, p);
    waitFor(
        "agent " + name + " registers",
        Duration.ofSeconds(60),
        () -> node(name).map(n -> n.state() == io.kairos.protocol.NodeState.UP).orElse(false),
        () -> agentLog(name));
    return p;
  }

  Process serverProcess() {
    return server;
  }

  Process agentProcess(String name) {
    return agents.get(name);
  }

  String agentLog(String name) {
    return readQuietly(dir.resolve("agent-" + name + ".log"));
  }

  String serverLog() {
    return readQuietly(dir.resolve("server.log"));
  }

  void signal(String agent, String signal) throws Exception {
    var p =
        new ProcessBuilder("kill", "-" + signal, Long.toString(agents.get(agent).pid())).start();
    if (p.waitFor() != 0) {
      throw new IllegalStateException("kill -" + signal + " " + agent + " failed");
    }
  }

  long submit(JobSubmission job) throws Exception {
    return submit(adminToken, job);
  }

  /** Submits {@code job} with {@code token}'s user. */
  long submit(String token, JobSubmission job) throws Exception {
    var r =
        http.send(
            HttpRequest.newBuilder(URI.create(url + "/api/v1/jobs"))
                .header("Authorization", "Bearer " + token)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(job)))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 201 && r.statusCode() != 200) {
      throw new AssertionError("submit got " + r.statusCode() + ": " + r.body());
    }
    return JSON.readValue(r.body(), SubmitResult.class).id();
  }

  JobView job(long id) {
    try {
      return JSON.readValue(get("/api/v1/jobs/" + id), JobView.class);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  java.util.Optional<NodeView> node(String name) {
    return nodes().stream().filter(n -> n.name().equals(name)).findFirst();
  }

  List<NodeView> nodes() {
    try {
      String body = get("/api/v1/nodes");
      if (!body.startsWith("[")) {
        return List.of();
      }
      return List.of(JSON.readValue(body, NodeView[].class));
    } catch (IOException e) {
      return List.of();
    }
  }

  void waitState(long id, JobState state, Duration limit) throws InterruptedException {
    waitFor(
        "job " + id + " is " + state,
        limit,
        () -> job(id).state() == state,
        () -> "job: " + job(id) + "\nserver log tail:\n" + tail(serverLog()));
  }

  int status(String path) {
    try {
      return http.send(
              HttpRequest.newBuilder(URI.create(url + path))
                  .header("Authorization", "Bearer " + adminToken)
                  .build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  String get(String path) {
    try {
      return http.send(
              HttpRequest.newBuilder(URI.create(url + path))
                  .header("Authorization", "Bearer " + adminToken)
                  .build(),
              HttpResponse.BodyHandlers.ofString())
          .body();
    } catch (IOException e) {
      return "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "";
    }
  }

  /** {@code GET path} with {@code token}: the whole reply. */
  HttpResponse<String> getAs(String token, String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(url + path))
            .header("Authorization", "Bearer " + token)
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** A new user token for {@code user}. */
  String token(String user) throws Exception {
    String body = post("/api/v1/tokens", "{\"user\":\"" + user + "\"}");
    return JSON.readTree(body).path("token").asText();
  }

  /**
   * Starts agent {@code name} as Unix account {@code uid:gid} (not root) on 127.0.0.{@code host}
   * with data directory {@code data} (which that account must own), from {@code jar} (which it must
   * be able to read), and waits until it registers.
   */
  Process agentAs(
      int uid, int gid, Path jar, Path data, String name, int host, String gpus, String... extra)
      throws Exception {
    var cmd = new ArrayList<String>();
    cmd.addAll(
        List.of(
            "setpriv",
            "--reuid=" + uid,
            "--regid=" + gid,
            "--clear-groups",
            "--",
            ProcessHandle.current().info().command().orElse("java"),
            "--sun-misc-unsafe-memory-access=allow",
            "--enable-native-access=ALL-UNNAMED",
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Duser.home=" + data,
            "-jar",
            jar.toString(),
            "agent",
            "--controller",
            url,
            "--join-token",
            readQuietly(dir.resolve("ctl/join.token")).strip(),
            "--node-name",
            name,
            "--data",
            data.toString(),
            "--listen",
            "127.0.0." + host + ":0",
            "--emulate-gpus",
            gpus));
    cmd.addAll(Arrays.asList(extra));
    Path log = dir.resolve("agent-" + name + ".log");
    var p =
        new ProcessBuilder(cmd)
            .directory(data.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    agents.put(name, p);
    waitFor(
        "agent " + name + " registers",
        Duration.ofSeconds(60),
        () -> node(name).map(n -> n.state() == io.kairos.protocol.NodeState.UP).orElse(false),
        () -> agentLog(name));
    return p;
  }

  String post(String path, String body) throws Exception {
    return http.send(
            HttpRequest.newBuilder(URI.create(url + path))
                .header("Authorization", "Bearer " + adminToken)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  /**
   * Stops the agents and the server, and kills the tasks the agents started: a task outlives its
   * agent by design (and is fenced only once the lease runs out), but must not outlive the test,
   * whose temporary directory it may still be writing to while JUnit deletes it. Tasks adopted from
   * an agent this cluster restarted are not its descendants and are left to their fence.
   */
  @Override
  public void close() throws IOException {
    var tasks = new ArrayList<ProcessHandle>();
    try {
      for (var p : agents.values()) {
        new ProcessBuilder("kill", "-CONT", Long.toString(p.pid())).start().waitFor();
        p.descendants().forEach(tasks::add);
        p.destroy();
      }
      for (var p : agents.values()) {
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
          p.destroyForcibly();
        }
      }
      for (var task : tasks) {
        task.destroyForcibly();
      }
      for (var task : tasks) {
        try {
          task.onExit().get(20, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
          // Killed with SIGKILL: it is gone or going; nothing more this cluster can do.
        }
      }
      server.destroy();
      if (!server.waitFor(20, TimeUnit.SECONDS)) {
        server.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      agents.values().forEach(Process::destroyForcibly);
      tasks.forEach(ProcessHandle::destroyForcibly);
      server.destroyForcibly();
    }
  }

  static Process java(Path log, List<String> args) throws IOException {
    return java(log, args, Map.of());
  }

  /**
   * A {@code kairos} process from the test's class path, started as {@code ./kairos} starts its
   * services: {@code umask 077} and {@code -XX:+ExitOnOutOfMemoryError}.
   */
  static Process java(Path log, List<String> args, Map<String, String> env) throws IOException {
    var cmd = new ArrayList<String>(List.of("sh", "-c", "umask 077 && exec \"$@\"", "sh"));
    cmd.add(ProcessHandle.current().info().command().orElse("java"));
    cmd.addAll(
        List.of(
            "--sun-misc-unsafe-memory-access=allow",
            "--enable-native-access=ALL-UNNAMED",
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:+ExitOnOutOfMemoryError",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            System.getProperty("java.class.path"),
            "io.kairos.cli.Main"));
    cmd.addAll(args);
    var builder = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
    builder.environment().putAll(env);
    return builder.start();
  }

  static int freePort() throws IOException {
    try (var s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  static String readQuietly(Path p) {
    try {
      return Files.readString(p);
    } catch (IOException e) {
      return "";
    }
  }

  static String tail(String s) {
    return s.length() > 6000 ? s.substring(s.length() - 6000) : s;
  }

  static void waitFor(
      String what,
      Duration limit,
      BooleanSupplier condition,
      java.util.function.Supplier<String> context)
      throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "timed out after " + limit + " waiting until " + what + "\n" + tail(context.get()));
      }
      Thread.sleep(50);
    }
  }
}
