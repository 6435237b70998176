package io.kairos.agent;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The only class that starts processes or sends them signals.
 *
 * <p>A task starts with {@link ProcessBuilder}, no shell, its environment replaced by the spec's
 * and its stdout and stderr appended to files: in its task directory, or where the job's {@code
 * output} and {@code error} send them (parent directories created). For the latter, a pointer file
 * in the task directory ({@link #pointer}) names the file, so that {@link LogServer} finds it.
 * Stopping a task is two steps, as Slurm and Kubernetes do it: {@link #terminate} sends SIGTERM to
 * the process and every descendant and returns the tree it saw; {@link #forceKill}, after the grace
 * period, sends SIGKILL to that tree and to any descendant born since. The tree is captured before
 * the first signal because a child whose parent dies is re-parented and no longer shows as a
 * descendant.
 *
 * <p>Stateless and thread-safe. It does not wait or decide when to escalate: {@link TaskTable}
 * does.
 */
public final class ProcessLauncher {
  private static final File NULL_DEVICE = new File("/dev/null");

  /** {@code <taskDir>/stdout.path}: names the file a redirected stream goes to. */
  public static Path pointer(Path taskDir, String stream) {
    return taskDir.resolve(stream + ".path");
  }

  /** The file a task's {@code stream} (stdout or stderr) went to: redirected or its own. */
  public static Path outputFile(Path taskDir, String stream) throws IOException {
    Path pointer = pointer(taskDir, stream);
    try {
      return Path.of(Files.readString(pointer).strip());
    } catch (NoSuchFileException e) {
      return taskDir.resolve(stream + ".log");
    }
  }

  /**
   * Creates the task directory and the output files' directories, and starts the process.
   *
   * @throws IOException when the working directory does not exist (the message names it), an output
   *     file cannot be created, or the program cannot be started
   */
  public Process start(LaunchSpec spec) throws IOException {
    Files.createDirectories(spec.taskDir());
    for (var stream :
        List.of(Map.entry("stdout", spec.stdout()), Map.entry("stderr", spec.stderr()))) {
      Path file = stream.getValue();
      if (!file.equals(spec.taskDir().resolve(stream.getKey() + ".log"))) {
        Path parent = file.getParent();
        if (parent != null) {
          Files.createDirectories(parent);
        }
        Files.writeString(pointer(spec.taskDir(), stream.getKey()), file + "\n");
      }
    }
    if (!Files.exists(spec.workdir())) {
      throw new FileNotFoundException("workdir " + spec.workdir() + " does not exist");
    }
    if (!Files.isDirectory(spec.workdir())) {
      throw new FileNotFoundException("workdir " + spec.workdir() + " is not a directory");
    }
    var builder =
        new ProcessBuilder(spec.argv())
            .directory(spec.workdir().toFile())
            .redirectInput(ProcessBuilder.Redirect.from(NULL_DEVICE))
            .redirectOutput(ProcessBuilder.Redirect.appendTo(spec.stdout().toFile()));
    if (spec.stderr().equals(spec.stdout())) {
      builder.redirectErrorStream(true);
    } else {
      builder.redirectError(ProcessBuilder.Redirect.appendTo(spec.stderr().toFile()));
    }
    builder.environment().clear();
    builder.environment().putAll(spec.env());
    return builder.start();
  }

  /**
   * Sends {@code signal} (TERM, INT, HUP, QUIT, USR1 or USR2) to {@code root} and all its
   * descendants. SIGTERM goes through {@link ProcessHandle#destroy}; the others through {@code kill
   * -s}, since the JDK sends no other signal.
   *
   * @return the tree as it was before the signal (root first), for {@link #forceKill}
   */
  public List<ProcessHandle> signal(ProcessHandle root, String signal) {
    if (signal == null || signal.equals("TERM")) {
      return terminate(root);
    }
    if (!SIGNALS.contains(signal)) {
      throw new IllegalArgumentException("signal " + signal + " is not one of " + SIGNALS);
    }
    List<ProcessHandle> tree = new ArrayList<>();
    tree.add(root);
    root.descendants().forEach(tree::add);
    var argv = new ArrayList<String>(List.of("kill", "-s", signal));
    for (ProcessHandle p : tree) {
      if (p.isAlive()) {
        argv.add(Long.toString(p.pid()));
      }
    }
    if (argv.size() > 3) {
      try {
        Process kill =
            new ProcessBuilder(argv)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        if (!kill.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)) {
          kill.destroyForcibly();
        }
      } catch (IOException e) {
        throw new UncheckedIOException("could not run kill -s " + signal, e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    return List.copyOf(tree);
  }

  /** The signals a job may choose for a stop or a warning. */
  public static final List<String> SIGNALS = io.kairos.protocol.JobSignals.NAMES;

  /**
   * Sends SIGTERM to {@code root} and all its descendants.
   *
   * @return the tree as it was before the signal (root first), for {@link #forceKill}
   */
  public List<ProcessHandle> terminate(ProcessHandle root) {
    List<ProcessHandle> tree = new ArrayList<>();
    tree.add(root);
    root.descendants().forEach(tree::add);
    for (ProcessHandle p : tree) {
      p.destroy();
    }
    return List.copyOf(tree);
  }

  /**
   * Sends SIGKILL to {@code root}, to every process of {@code earlierTree} still alive, and to
   * {@code root}'s current descendants. Signalling a process that has exited is harmless: a handle
   * refuses to signal a different process that reused the pid.
   */
  public void forceKill(ProcessHandle root, List<ProcessHandle> earlierTree) {
    Set<ProcessHandle> tree = new LinkedHashSet<>();
    tree.add(root);
    root.descendants().forEach(tree::add);
    tree.addAll(earlierTree);
    for (ProcessHandle p : tree) {
      if (p.isAlive()) {
        p.destroyForcibly();
      }
    }
  }
}
