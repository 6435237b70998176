package io.kairos.control;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One controller replica as a child JVM ({@link ControllerMain}) for end-to-end tests: the test's
 * own java binary and classpath, output appended to {@code log} (restarts included), and a bounded
 * wait for its {@code kairos-controller-ready} line. {@link #kill9()} is a real SIGKILL. Children
 * still alive when the test JVM exits are killed by a shutdown hook.
 */
final class ControllerProcess implements AutoCloseable {
  static final String READY = "kairos-controller-ready ";
  private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly)));
  }

  private final Path data;
  private final int port;
  private final String peers;
  private final Path log;
  private final List<String> extraArgs = new ArrayList<>();
  private Process process;
  private int starts;

  /**
   * @param peers the group as {@code --peers} takes it, or empty for a single replica
   */
  ControllerProcess(Path data, int port, String peers, Path log) {
    this.data = data;
    this.port = port;
    this.peers = peers;
    this.log = log;
  }

  /**
   * More {@link ControllerMain} options for every launch ({@code --ca-from DIR}, {@code --tls}).
   */
  ControllerProcess with(String... args) {
    extraArgs.addAll(List.of(args));
    return this;
  }

  /** Launches the JVM; does not wait (see {@link #awaitReady}). */
  ControllerProcess launch() throws IOException {
    if (process != null && process.isAlive()) {
      throw new IllegalStateException("replica on " + port + " already runs");
    }
    Files.createDirectories(data);
    var cmd =
        new ArrayList<String>(
            List.of(
                ProcessHandle.current().info().command().orElse("java"),
                "--sun-misc-unsafe-memory-access=allow",
                "--enable-native-access=ALL-UNNAMED",
                "-Xmx512m",
                "-XX:+UseSerialGC",
                "-XX:+ExitOnOutOfMemoryError",
                // C1 only: a replica that lives seconds starts faster and leaves the CPUs to the
                // others.
                "-XX:TieredStopAtLevel=1",
                "-cp",
                System.getProperty("java.class.path"),
                ControllerMain.class.getName(),
                "--data",
                data.toString(),
                "--listen",
                "127.0.0.1:" + port,
                // One user, who is root here: the admin's jobs run as root.
                "--allow-root-jobs"));
    if (!peers.isEmpty()) {
      cmd.add("--peers");
      cmd.add(peers);
    }
    cmd.addAll(extraArgs);
    Files.writeString(
        log,
        "\n=== start " + (starts + 1) + " ===\n",
        StandardCharsets.UTF_8,
        java.nio.file.StandardOpenOption.CREATE,
        java.nio.file.StandardOpenOption.APPEND);
    process =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
    LIVE.add(process);
    starts++;
    return this;
  }

  /** Waits (bounded) for this start's ready line; fails with the log's tail otherwise. */
  ControllerProcess awaitReady(Duration timeout) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (readyLines() < starts) {
      if (!process.isAlive()) {
        throw new AssertionError(
            "replica on "
                + port
                + " exited with "
                + process.exitValue()
                + " before it was ready; log tail:\n"
                + tail());
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "replica on " + port + " not ready after " + timeout + "; log tail:\n" + tail());
      }
      Thread.sleep(25);
    }
    return this;
  }

  private int readyLines() throws IOException {
    int n = 0;
    for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
      if (line.startsWith(READY)) {
        n++;
      }
    }
    return n;
  }

  /** SIGKILL (Process.destroyForcibly on Linux), and a check that the process is gone. */
  void kill9() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      throw new AssertionError("replica on " + port + " still alive 10 s after SIGKILL");
    }
    LIVE.remove(process);
    if (process.isAlive() || process.exitValue() != 137) {
      throw new AssertionError(
          "replica on " + port + " did not die of SIGKILL: exit " + process.exitValue());
    }
  }

  boolean isAlive() {
    return process != null && process.isAlive();
  }

  int port() {
    return port;
  }

  String url() {
    return "http://127.0.0.1:" + port;
  }

  Path data() {
    return data;
  }

  String adminToken() throws IOException {
    return Files.readString(data.resolve("admin.token")).trim();
  }

  String joinToken() throws IOException {
    return Files.readString(data.resolve("join.token")).trim();
  }

  TestApi api() throws IOException {
    return new TestApi(url(), adminToken());
  }

  /**
   * This replica's output since its last start: the first 25 lines (where the first error of a
   * failing start usually is) and the last 35.
   */
  String tail() {
    try {
      var lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      int from = 0;
      for (int i = 0; i < lines.size(); i++) {
        if (lines.get(i).startsWith("=== start ")) {
          from = i;
        }
      }
      var current = lines.subList(from, lines.size());
      if (current.size() <= 60) {
        return String.join("\n", current);
      }
      return String.join("\n", current.subList(0, 25))
          + "\n[... "
          + (current.size() - 60)
          + " lines ...]\n"
          + String.join("\n", current.subList(current.size() - 35, current.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** Whether this start's output has a line containing {@code text}. */
  boolean logged(String text) {
    try {
      var lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      for (int i = lines.size() - 1; i >= 0 && !lines.get(i).startsWith("=== start "); i--) {
        if (lines.get(i).contains(text)) {
          return true;
        }
      }
      return false;
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  public void close() {
    if (process != null) {
      process.destroyForcibly();
      try {
        process.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      LIVE.remove(process);
    }
  }

  /**
   * An HTTP port whose Raft port (HTTP + 1000) is free too, below the ephemeral range (so that no
   * client connection takes it between a kill and a restart), and not handed out before.
   */
  static int freePortPair() {
    var rnd = new Random(System.nanoTime() ^ ProcessHandle.current().pid());
    for (int attempt = 0; attempt < 500; attempt++) {
      int port = 20_000 + rnd.nextInt(10_000);
      if (TAKEN.contains(port) || TAKEN.contains(port + 1000) || TAKEN.contains(port - 1000)) {
        continue;
      }
      if (bindable(port) && bindable(port + 1000)) {
        TAKEN.add(port);
        return port;
      }
    }
    throw new AssertionError("no free port pair between 20000 and 31000");
  }

  private static final Set<Integer> TAKEN = ConcurrentHashMap.newKeySet();

  private static boolean bindable(int port) {
    try (var socket = new ServerSocket()) {
      socket.setReuseAddress(false);
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
