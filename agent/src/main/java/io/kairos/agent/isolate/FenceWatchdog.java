package io.kairos.agent.isolate;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The agent's handle on its {@link FenceWatchdogMain} process: starts it with the agent's own
 * {@code java} and classpath, in a session of its own, restarts it when it dies while the agent
 * runs, stops it on close.
 *
 * <p>The watchdog's output goes to {@code fence/watchdog.log}, never to a pipe: a pipe would die
 * with the agent and take the watchdog with it (SIGPIPE) exactly when it is needed. Create the
 * {@link LeaseFile} first, so the watchdog knows which agent it guards.
 */
public final class FenceWatchdog implements AutoCloseable {
  /** A watchdog that dies sooner than this after its start is restarted only after this delay. */
  private static final long RESTART_DELAY_MILLIS = 1_000;

  private static final String SETSID = "/usr/bin/setsid";

  private final Path dataDir;
  private final List<String> command;
  private Process process;
  private boolean closed;

  private FenceWatchdog(Path dataDir, List<String> command) {
    this.dataDir = dataDir;
    this.command = command;
  }

  /** Starts the watchdog for {@code dataDir}. */
  public static FenceWatchdog start(Path dataDir) throws IOException {
    String java =
        ProcessHandle.current()
            .info()
            .command()
            .orElseGet(() -> Path.of(System.getProperty("java.home"), "bin", "java").toString());
    var command = new java.util.ArrayList<String>();
    if (Files.isExecutable(Path.of(SETSID))) {
      // A session of its own: a Ctrl-C or a signal to the agent's process group, which stops the
      // agent and leaves its tasks for the next one, must not stop the watchdog guarding them.
      command.add(SETSID);
    }
    command.addAll(
        List.of(
            java,
            "-Xmx16m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            System.getProperty("java.class.path"),
            FenceWatchdogMain.class.getName(),
            dataDir.toAbsolutePath().toString()));
    var watchdog = new FenceWatchdog(dataDir, command);
    synchronized (watchdog) {
      watchdog.launch();
    }
    return watchdog;
  }

  /** The running watchdog process, if any. */
  public synchronized Optional<ProcessHandle> process() {
    return process == null ? Optional.empty() : Optional.of(process.toHandle());
  }

  /** Restarts the watchdog if it is not running; returns true if it did. */
  public synchronized boolean ensureRunning() throws IOException {
    if (closed || (process != null && process.isAlive())) {
      return false;
    }
    launch();
    return true;
  }

  /** Stops the watchdog (SIGTERM, then SIGKILL after 2 s). The tasks are the agent's to stop. */
  @Override
  public void close() {
    Process p;
    synchronized (this) {
      closed = true;
      p = process;
    }
    if (p == null) {
      return;
    }
    p.destroy();
    try {
      if (!p.waitFor(2, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        p.waitFor(2, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void launch() throws IOException {
    Path log = FenceFiles.fenceDir(dataDir).resolve("watchdog.log");
    Files.createDirectories(log.getParent());
    Process started =
        new ProcessBuilder(command)
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
    process = started;
    long startedAt = System.nanoTime();
    started
        .onExit()
        .thenRunAsync(
            () -> restartAfterExit(started),
            CompletableFuture.delayedExecutor(
                Math.max(0, RESTART_DELAY_MILLIS - (System.nanoTime() - startedAt) / 1_000_000),
                TimeUnit.MILLISECONDS));
  }

  private synchronized void restartAfterExit(Process exited) {
    if (closed || process != exited) {
      return;
    }
    try {
      launch();
    } catch (IOException e) {
      System.err.println("fence watchdog: restart failed: " + e.getMessage());
    }
  }
}
