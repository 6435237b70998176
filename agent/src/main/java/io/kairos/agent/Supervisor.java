package io.kairos.agent;

import io.kairos.agent.isolate.PrivateFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * The per-process supervisor that lets a task outlive its agent, as Slurm's {@code slurmstepd}
 * outlives {@code slurmd}: a constant {@code /bin/sh} script, started in a session of its own
 * ({@link NativeSpawn}'s {@code POSIX_SPAWN_SETSID}, else {@code setsid}, so a signal to the
 * agent's process group or terminal never reaches it), that runs the task's argv as its child (the
 * setup script in a forked subshell when it comes first: {@link #wrap}), waits for it, and records
 * its exit status in the agent's state directory ({@code <local>.exit}), then exits with the same
 * status. The status is a few bytes written by one {@code write(2)}: a reader sees no file, an
 * empty one (read as no status yet) or the whole status, since a file's size grows only once its
 * bytes are in. (A temp file and {@code mv} cost a fork and an exec per task: about 1 of the 4.8 ms
 * of CPU of the whole supervised chain of a task that runs {@code true}.)
 *
 * <p>The supervisor runs as the agent's account, outside the task's cgroup (the cgroup join and the
 * drop to the owner's account happen in its child), so neither the task nor a kill of its cgroup
 * can forge or prevent the record. It catches (and ignores) the stop and warning signals, so the
 * agent may signal the task's whole tree; the task gets them with their default action, since a
 * caught signal is reset on {@code exec}. Its stdin, stdout and stderr are what the task starts
 * with: the agent's files, never a pipe the agent reads, so nothing ties it to the agent's life.
 *
 * <pre>
 * DATA/run/                  0700 the agent's
 * DATA/run/KEY/              0700 one task
 * DATA/run/KEY/task.json     0600 its assignment, start and supervisors ({@link TaskRecord})
 * DATA/run/KEY/N.exit        0600 process N's exit status, written by its supervisor
 * DATA/run/KEY/N.setup       0600 what went wrong before process N's program ran
 * </pre>
 *
 * <p>These names, the record's fields and {@link #NAME} are a contract between agent versions: an
 * upgraded agent adopts what the previous binary started.
 */
final class Supervisor {
  /**
   * Arguments: EXIT_FILE, then the argv to run, or {@value #INLINE} and the task's setup script
   * ({@link UserLaunch#SCRIPT}), its {@code $0} and its arguments, which it runs in a subshell (a
   * fork, no exec of a second shell). Never holds user text: that is only ever in the arguments.
   */
  static final String SCRIPT =
      """
      umask 077
      trap : TERM INT HUP QUIT USR1 USR2
      exit_file=$1
      shift
      if [ "$1" = --inline ]; then
        (s=$2; shift 3; eval "$s")
      else
        "$@"
      fi
      code=$?
      printf '%s\\n' "$code" >"$exit_file"
      exit "$code"
      """;

  /** The name the supervisor runs under ({@code $0}): how an adopting agent recognizes it. */
  static final String NAME = "kairos-supervisor";

  private static final String SETSID = "/usr/bin/setsid";

  private static final int MAX_SETUP_BYTES = 4096;

  private static final FileAttribute<Set<PosixFilePermission>> SETUP_ATTR =
      PosixFilePermissions.asFileAttribute(PrivateFiles.FILE);

  /** Whether {@value #SETSID} is there: looked up once, not on every launch. */
  private static final boolean HAS_SETSID = Files.isExecutable(Path.of(SETSID));

  private Supervisor() {}

  /** {@code <dataDir>/run/}: the agent's state of running tasks, for the next agent. */
  static Path runDir(Path dataDir) {
    return dataDir.resolve("run");
  }

  /** {@code <dataDir>/run/<key>/}. */
  static Path taskDir(Path dataDir, TaskKey key) {
    return runDir(dataDir).resolve(key.dirName());
  }

  static Path exitFile(Path taskRunDir, int local) {
    return taskRunDir.resolve(local + ".exit");
  }

  static Path setupFile(Path taskRunDir, int local) {
    return taskRunDir.resolve(local + ".setup");
  }

  /** The supervisor's first argument after EXIT_FILE when it runs the setup script itself. */
  static final String INLINE = "--inline";

  /**
   * The argv that runs {@code argv} under a supervisor recording its status in {@code exit}. When
   * {@code argv} is the task's setup script as the agent's own account ({@code /bin/sh -c} {@link
   * UserLaunch#SCRIPT}: no cgroup to join, no account to drop to), the supervisor's forked child
   * runs that script itself instead of starting a second {@code /bin/sh}: an exec less per task,
   * about a sixth of the CPU of the supervised chain of a task that runs {@code true}. Its caught
   * signals are reset in the subshell as they are on an exec, and the script ends in the task's
   * {@code exec} as before. The cgroup wrapper is never run so: it joins the cgroup with {@code
   * $$}, which in a subshell is the supervisor's pid.
   */
  static List<String> wrap(List<String> argv, Path exit) {
    return wrap(argv, exit, HAS_SETSID);
  }

  /**
   * As {@link #wrap(List, Path)}; with {@code setsid}, the argv starts with {@value #SETSID} (which
   * makes the supervisor's session), without it whoever starts it must ({@link NativeSpawn}).
   */
  static List<String> wrap(List<String> argv, Path exit, boolean setsid) {
    var wrapped = new ArrayList<String>();
    if (setsid) {
      // Not a process group leader (the JVM does not make one), so setsid execs in place.
      wrapped.add(SETSID);
    }
    wrapped.addAll(List.of("/bin/sh", "-c", SCRIPT, NAME, exit.toString()));
    if (argv.size() > 3
        && argv.get(0).equals("/bin/sh")
        && argv.get(1).equals("-c")
        && argv.get(2).equals(UserLaunch.SCRIPT)) {
      wrapped.add(INLINE);
      wrapped.addAll(argv.subList(2, argv.size()));
    } else {
      wrapped.addAll(argv);
    }
    return List.copyOf(wrapped);
  }

  /**
   * Creates {@code <dataDir>/run/} and the task's directory in it, both 0700 and the agent's; a
   * leftover entry of that name that is not a directory (a link) is refused.
   *
   * @return whether the task's directory was created now (so it holds no file of an earlier start)
   */
  static boolean prepare(Path dataDir, TaskKey key) throws IOException {
    PrivateFiles.directory(runDir(dataDir), PrivateFiles.DIR);
    boolean created = PrivateFiles.createDirectory(taskDir(dataDir, key));
    Files.setPosixFilePermissions(taskDir(dataDir, key), PrivateFiles.DIR);
    return created;
  }

  /**
   * The empty setup file of process {@code local}, 0600, which its stderr starts as; one left by an
   * earlier start is replaced unless the task's directory is {@code fresh}.
   */
  static Path setupFile(Path dataDir, TaskKey key, int local, boolean fresh) throws IOException {
    Path file = setupFile(taskDir(dataDir, key), local);
    if (!fresh) {
      Files.deleteIfExists(file);
    }
    Files.createFile(file, SETUP_ATTR);
    return file;
  }

  /** The status process {@code local}'s supervisor recorded; empty while none is recorded. */
  static OptionalInt recordedExit(Path taskRunDir, int local) {
    try {
      String text = Files.readString(exitFile(taskRunDir, local)).strip();
      int code = Integer.parseInt(text);
      return code >= 0 && code <= 255 ? OptionalInt.of(code) : OptionalInt.empty();
    } catch (IOException | NumberFormatException e) {
      return OptionalInt.empty();
    }
  }

  /** What the setup of process {@code local} said (at most 4 KiB); empty when nothing. */
  static String setupErrors(Path taskRunDir, int local) {
    try (InputStream in = Files.newInputStream(setupFile(taskRunDir, local))) {
      return new String(in.readNBytes(MAX_SETUP_BYTES), StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      return "";
    } catch (IOException e) {
      return "";
    }
  }

  /**
   * Whether {@code pid}'s command line is a supervisor's ({@code /bin/sh -c SCRIPT NAME ...}). The
   * script's text is not compared: a supervisor started by an older agent binary is adopted by a
   * newer one.
   */
  static boolean isSupervisor(long pid) {
    try {
      byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
      String[] args = new String(raw, StandardCharsets.UTF_8).split("\0");
      return args.length > 3
          && args[0].equals("/bin/sh")
          && args[1].equals("-c")
          && args[3].equals(NAME);
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** The uid owning {@code path} (not following links), if it exists. */
  static Optional<Integer> ownerUid(Path path) {
    try {
      return Optional.of((Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS));
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }
}
