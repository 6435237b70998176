package io.kairos.agent.gpu;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs a short-lived program (nvidia-smi, a health check) to completion and captures its output.
 *
 * <p>Design: no shell; the argv goes straight to {@link ProcessBuilder}. The program inherits the
 * agent's environment plus {@code extraEnv} (tests point a fake nvidia-smi at its fixture this way)
 * and reads stdin from {@code /dev/null}. stdout and stderr are drained on two virtual threads so a
 * chatty program cannot fill a pipe and stall. At the timeout the whole process tree is killed
 * (SIGKILL, descendants first): a shell script's {@code sleep} child would otherwise keep the pipes
 * open and the readers blocked after its parent died.
 *
 * <p>Stateless and thread-safe. This and {@link NvidiaSmi}/{@link HealthCheckProgram} are the only
 * classes of the package that start processes.
 */
public final class CommandRunner {
  private static final File NULL_DEVICE = new File("/dev/null");
  // How long to wait for the output readers after the process tree is gone.
  private static final Duration DRAIN_WAIT = Duration.ofSeconds(5);

  private CommandRunner() {}

  /**
   * Runs {@code argv} and waits at most {@code timeout}.
   *
   * @throws IOException when the program cannot be started (missing, not executable); the message
   *     names it
   */
  public static CommandResult run(List<String> argv, Map<String, String> extraEnv, Duration timeout)
      throws IOException {
    if (argv.isEmpty()) {
      throw new IllegalArgumentException("argv must not be empty");
    }
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("timeout must be > 0, got " + timeout);
    }
    var builder = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(NULL_DEVICE));
    builder.environment().putAll(extraEnv);
    Process process;
    try {
      process = builder.start();
    } catch (IOException e) {
      throw new IOException(CommandResult.display(argv) + " could not start: " + e.getMessage(), e);
    }
    ExecutorService readers = Executors.newVirtualThreadPerTaskExecutor();
    try {
      CompletableFuture<String> stdout = drain(process.getInputStream(), readers);
      CompletableFuture<String> stderr = drain(process.getErrorStream(), readers);
      boolean exited = waitFor(process, timeout);
      if (!exited) {
        killTree(process);
      }
      return new CommandResult(
          argv, exited ? process.exitValue() : -1, collect(stdout), collect(stderr), !exited);
    } finally {
      readers.shutdown();
    }
  }

  private static boolean waitFor(Process process, Duration timeout) throws IOException {
    try {
      return process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      killTree(process);
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while waiting for " + process.info().command(), e);
    }
  }

  private static void killTree(Process process) {
    List<ProcessHandle> tree = new ArrayList<>();
    process.descendants().forEach(tree::add);
    tree.forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    try {
      process.waitFor(DRAIN_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static CompletableFuture<String> drain(InputStream in, ExecutorService executor) {
    return CompletableFuture.supplyAsync(
        () -> {
          try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        },
        executor);
  }

  // Output of a killed program may be cut short; what arrived is still worth showing.
  private static String collect(CompletableFuture<String> output) {
    try {
      return output.get(DRAIN_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "";
    } catch (ExecutionException | TimeoutException e) {
      return "";
    }
  }
}
