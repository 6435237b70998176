package io.kairos.agent;

import io.kairos.agent.account.Account;
import io.kairos.agent.isolate.PrivateFiles;
import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The only class that starts processes or sends them signals.
 *
 * <p>A task starts with {@link ProcessBuilder} (a supervised one with {@link NativeSpawn} where it
 * is available), its environment replaced by the spec's and its stdout and stderr appended to
 * files: in its task directory, or where the job's {@code output} and {@code error} send them. The
 * task directory ({@code <dataDir>/tasks/<key>}, mode 0700, in a {@code tasks/} that others may
 * enter but not list) belongs to the task's owner; beside it the agent records the files and the
 * owner ({@link TaskFiles}) for the {@link LogServer}. A task with an owner ({@link
 * LaunchSpec#owner}) opens its files itself, as that account ({@link UserLaunch}): the agent only
 * gives it /dev/null for stdin and a file for what goes wrong before the task's program runs, and
 * starts it under a {@link Supervisor} in a session of its own, so that it outlives the agent and
 * its status is recorded for the next one. Without one (tests), the agent opens them. Stopping a
 * task is two steps, as Slurm and Kubernetes do it: {@link #terminate} sends SIGTERM to the process
 * and every descendant and returns the tree it saw; {@link #forceKill}, after the grace period,
 * sends SIGKILL to that tree and to any descendant born since. The tree is captured before the
 * first signal because a child whose parent dies is re-parented and no longer shows as a
 * descendant.
 *
 * <p>Stateless and thread-safe. It does not wait or decide when to escalate: {@link TaskTable}
 * does.
 */
public final class ProcessLauncher {
  private static final File NULL_DEVICE = new File("/dev/null");

  /**
   * {@code <taskDir>/stdout.path}: named the file a redirected stream went to, for tasks started by
   * agents before {@link TaskFiles}; read only from a task directory the agent itself owns.
   */
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
    taskDirectory(spec);
    TaskCheckpoints.prepare(spec);
    if (spec.spooled()) {
      return startPiped(spec);
    }
    if (spec.local() == 0) {
      TaskFiles.of(spec).write(spec.filesRecord());
    }
    if (spec.owner() != null) {
      // Under a supervisor that outlives the agent; what the setup says goes to a file of the
      // agent's, so no pipe ties the task to this process.
      Path dataDir = spec.taskDir().getParent().getParent();
      boolean fresh = Supervisor.prepare(dataDir, spec.key());
      Path exit = Supervisor.exitFile(Supervisor.taskDir(dataDir, spec.key()), spec.local());
      if (!fresh) {
        Files.deleteIfExists(exit); // a status an earlier start recorded
      }
      Path setup = Supervisor.setupFile(dataDir, spec.key(), spec.local(), fresh);
      Process process =
          NativeSpawn.available()
              ? NativeSpawn.start(
                  Supervisor.wrap(spec.argv(), exit, false),
                  spec.env(),
                  setup,
                  spec.script() != null)
              : startSupervisor(spec, exit, setup);
      if (spec.script() != null) {
        sendScript(process, spec.script());
      }
      return process;
    }
    if (spec.script() != null) {
      writeScript(spec.scriptFile(), spec.script());
    }
    for (Path file : List.of(spec.stdout(), spec.stderr())) {
      Path parent = file.getParent();
      if (parent != null) {
        Files.createDirectories(parent);
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

  /** The supervisor through the JDK: its spawn helper, then {@code setsid}, then the shell. */
  private static Process startSupervisor(LaunchSpec spec, Path exit, Path setup)
      throws IOException {
    var builder =
        new ProcessBuilder(Supervisor.wrap(spec.argv(), exit))
            .directory(new File("/"))
            .redirectInput(
                spec.script() == null
                    ? ProcessBuilder.Redirect.from(NULL_DEVICE)
                    : ProcessBuilder.Redirect.PIPE)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(ProcessBuilder.Redirect.appendTo(setup.toFile()));
    builder.environment().clear();
    builder.environment().putAll(spec.env());
    return builder.start();
  }

  /**
   * A step's process: stdout and stderr are pipes the agent reads ({@link OutputSpool}) into its
   * spool directory ({@code <dataDir>/spool/}, 0700, the agent's own), created here.
   */
  private static Process startPiped(LaunchSpec spec) throws IOException {
    Path spool = spec.stdout().getParent();
    Path spools = spool.getParent();
    Files.createDirectories(spools);
    Files.setPosixFilePermissions(spools, PosixFilePermissions.fromString("rwx------"));
    if (!Files.isDirectory(spool, LinkOption.NOFOLLOW_LINKS)) {
      Files.createDirectory(spool);
    }
    Files.setPosixFilePermissions(spool, PosixFilePermissions.fromString("rwx------"));
    if (spec.owner() == null && !Files.isDirectory(spec.workdir())) {
      throw new FileNotFoundException("workdir " + spec.workdir() + " is not a directory");
    }
    var builder =
        new ProcessBuilder(spec.argv())
            .directory(spec.owner() != null ? new File("/") : spec.workdir().toFile())
            .redirectInput(ProcessBuilder.Redirect.from(NULL_DEVICE))
            .redirectOutput(ProcessBuilder.Redirect.PIPE)
            .redirectError(ProcessBuilder.Redirect.PIPE);
    builder.environment().clear();
    builder.environment().putAll(spec.env());
    return builder.start();
  }

  /**
   * Hands a batch step's script to its owner's shell, which writes it into the task directory
   * ({@link UserLaunch}): on its stdin, from a thread of its own (a script may pass the pipe's
   * buffer). A shell that failed before reading it closes the pipe; that failure is its own.
   */
  private static void sendScript(Process process, String script) {
    byte[] bytes = script.getBytes(StandardCharsets.UTF_8);
    Thread.ofVirtual()
        .name("kairos-batch-script-" + process.pid())
        .start(
            () -> {
              try (OutputStream in = process.getOutputStream()) {
                in.write(bytes);
              } catch (IOException e) {
                // The shell is gone or did not read it: it says why on its setup pipe.
              }
            });
  }

  /** A batch step's script, written by the agent itself (a task without an owner), mode 0700. */
  private static void writeScript(Path file, String script) throws IOException {
    Files.deleteIfExists(file);
    Files.createFile(
        file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    Files.writeString(file, script, StandardCharsets.UTF_8);
  }

  /**
   * Creates {@code <dataDir>/tasks/} (0711: entered by name, never listed by others) and the task's
   * directory in it (0700), given to the task's owner.
   */
  private static void taskDirectory(LaunchSpec spec) throws IOException {
    Path dir = spec.taskDir();
    Path tasks = dir.getParent();
    PrivateFiles.directory(tasks, PrivateFiles.ENTER_ONLY);
    PrivateFiles.createDirectory(dir);
    Files.setPosixFilePermissions(dir, PrivateFiles.DIR);
    Account owner = spec.owner();
    if (owner != null && (int) Files.getAttribute(dir, "unix:uid", NOFOLLOW) != owner.uid()) {
      Files.setAttribute(dir, "unix:uid", owner.uid(), NOFOLLOW);
      Files.setAttribute(dir, "unix:gid", owner.gid(), NOFOLLOW);
    }
  }

  private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;

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
    forceKill(root, earlierTree, false);
  }

  /**
   * As {@link #forceKill(ProcessHandle, List)}; with {@code spareRoot}, {@code root} itself (a
   * task's {@link Supervisor}, which must live to record the task's status) is not signalled.
   */
  public void forceKill(ProcessHandle root, List<ProcessHandle> earlierTree, boolean spareRoot) {
    Set<ProcessHandle> tree = new LinkedHashSet<>();
    tree.add(root);
    root.descendants().forEach(tree::add);
    tree.addAll(earlierTree);
    if (spareRoot) {
      tree.remove(root);
    }
    for (ProcessHandle p : tree) {
      if (p.isAlive()) {
        p.destroyForcibly();
      }
    }
  }
}
