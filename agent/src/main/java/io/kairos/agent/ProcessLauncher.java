package io.kairos.agent;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The only class that starts processes or sends them signals.
 *
 * <p>A task starts with {@link ProcessBuilder}, no shell, its environment replaced by the spec's
 * and its stdout and stderr redirected to files in its task directory. Stopping a task is two
 * steps, as Slurm and Kubernetes do it: {@link #terminate} sends SIGTERM to the process and every
 * descendant and returns the tree it saw; {@link #forceKill}, after the grace period, sends SIGKILL
 * to that tree and to any descendant born since. The tree is captured before the first signal
 * because a child whose parent dies is re-parented and no longer shows as a descendant.
 *
 * <p>Stateless and thread-safe. It does not wait or decide when to escalate: {@link TaskTable}
 * does.
 */
public final class ProcessLauncher {
  private static final File NULL_DEVICE = new File("/dev/null");

  /**
   * Creates the task directory and starts the process.
   *
   * @throws IOException when the working directory does not exist (the message names it) or the
   *     program cannot be started
   */
  public Process start(LaunchSpec spec) throws IOException {
    Files.createDirectories(spec.taskDir());
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
            .redirectOutput(spec.stdout().toFile())
            .redirectError(spec.stderr().toFile());
    builder.environment().clear();
    builder.environment().putAll(spec.env());
    return builder.start();
  }

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
