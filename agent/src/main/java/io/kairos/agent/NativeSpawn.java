package io.kairos.agent;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts a task's {@link Supervisor} with the C library's {@code posix_spawn}, called through the
 * FFM API: the supervisor's {@code /bin/sh} is the only program exec'd, in a session of its own
 * ({@code POSIX_SPAWN_SETSID}), where the JDK's {@link ProcessBuilder} execs its spawn helper and
 * the supervisor then needed {@code setsid}: two execs less per task (about 1.4 ms of CPU here).
 * glibc's {@code posix_spawn} clones with {@code CLONE_VM|CLONE_VFORK}, so the agent's JVM is not
 * copied, whatever its size.
 *
 * <p>The child gets what {@link ProcessBuilder} gave it: stdin {@code /dev/null} or a pipe (a batch
 * step's script), stdout {@code /dev/null}, stderr appended to the setup file, the working
 * directory {@code /}, exactly the spec's environment, every other descriptor closed ({@code
 * posix_spawn_file_actions_addclosefrom_np}: the JVM opens many without close-on-exec, the log
 * server's listening socket among them, and a supervisor that outlives the agent must not hold
 * them), no blocked signal and every signal at its default action. Its exit is reaped by {@link
 * SpawnedProcess}, with {@code waitpid} on that pid alone: never {@code waitpid(-1)}, which would
 * take the exits of the processes the JDK started.
 *
 * <p>Used when every function is there (glibc 2.34 or newer, Linux) and the agent's JVM allows
 * native access ({@code --enable-native-access=ALL-UNNAMED}, which {@code ./kairos} passes: without
 * it, JDK 25 would print a warning); {@code -Dkairos.agent.posixSpawn=false} turns it off.
 * Otherwise the agent starts supervisors with {@link ProcessBuilder} and {@code setsid} as before.
 */
final class NativeSpawn {
  private static final Logger log = LoggerFactory.getLogger(NativeSpawn.class);

  // Linux's values (x86-64 and arm64 alike); glibc's spawn.h and waitflags.h.
  private static final int O_RDONLY = 0;
  private static final int O_WRONLY = 1;
  private static final int O_APPEND = 0x400;
  private static final int O_CLOEXEC = 0x80000;
  private static final short POSIX_SPAWN_SETSIGDEF = 0x04;
  private static final short POSIX_SPAWN_SETSIGMASK = 0x08;
  private static final short POSIX_SPAWN_SETSID = 0x80;
  private static final int EINTR = 4;

  /**
   * Larger than glibc's posix_spawn_file_actions_t (80 bytes), posix_spawnattr_t (336), sigset_t.
   */
  private static final long OPAQUE_BYTES = 1024;

  private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
  private static final AddressLayout PTR = ValueLayout.ADDRESS;

  private static final MemoryLayout CAPTURE = Linker.Option.captureStateLayout();
  private static final VarHandle ERRNO =
      CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

  /** The functions, or null when native spawning is off here (see the class comment). */
  private static final Functions FUNCTIONS = load();

  private NativeSpawn() {}

  /** Whether supervisors start with {@code posix_spawn} in this JVM. */
  static boolean available() {
    return FUNCTIONS != null;
  }

  private record Functions(
      MethodHandle spawn,
      MethodHandle actionsInit,
      MethodHandle actionsDestroy,
      MethodHandle addOpen,
      MethodHandle addDup2,
      MethodHandle addChdir,
      MethodHandle addCloseFrom,
      MethodHandle attrInit,
      MethodHandle attrDestroy,
      MethodHandle setFlags,
      MethodHandle setSigMask,
      MethodHandle setSigDefault,
      MethodHandle sigEmptySet,
      MethodHandle sigFillSet,
      MethodHandle pipe2,
      MethodHandle close,
      MethodHandle waitpid) {}

  @SuppressWarnings("restricted") // only when native access is enabled: checked first
  private static Functions load() {
    if (!Boolean.parseBoolean(System.getProperty("kairos.agent.posixSpawn", "true"))
        || !System.getProperty("os.name", "").equals("Linux")
        || !NativeSpawn.class.getModule().isNativeAccessEnabled()) {
      return null;
    }
    try {
      Linker linker = Linker.nativeLinker();
      SymbolLookup libc = linker.defaultLookup();
      var f =
          new Functions(
              handle(linker, libc, "posix_spawn", INT, PTR, PTR, PTR, PTR, PTR, PTR),
              handle(linker, libc, "posix_spawn_file_actions_init", INT, PTR),
              handle(linker, libc, "posix_spawn_file_actions_destroy", INT, PTR),
              handle(
                  linker, libc, "posix_spawn_file_actions_addopen", INT, PTR, INT, PTR, INT, INT),
              handle(linker, libc, "posix_spawn_file_actions_adddup2", INT, PTR, INT, INT),
              handle(linker, libc, "posix_spawn_file_actions_addchdir_np", INT, PTR, PTR),
              handle(linker, libc, "posix_spawn_file_actions_addclosefrom_np", INT, PTR, INT),
              handle(linker, libc, "posix_spawnattr_init", INT, PTR),
              handle(linker, libc, "posix_spawnattr_destroy", INT, PTR),
              handle(linker, libc, "posix_spawnattr_setflags", INT, PTR, ValueLayout.JAVA_SHORT),
              handle(linker, libc, "posix_spawnattr_setsigmask", INT, PTR, PTR),
              handle(linker, libc, "posix_spawnattr_setsigdefault", INT, PTR, PTR),
              handle(linker, libc, "sigemptyset", INT, PTR),
              handle(linker, libc, "sigfillset", INT, PTR),
              handle(linker, libc, "pipe2", INT, PTR, INT),
              handle(linker, libc, "close", INT, INT),
              linker.downcallHandle(
                  find(libc, "waitpid"),
                  FunctionDescriptor.of(INT, INT, PTR, INT),
                  Linker.Option.captureCallState("errno")));
      return f;
    } catch (RuntimeException | LinkageError e) {
      log.info("tasks start through the JDK's ProcessBuilder: {}", e.getMessage());
      return null;
    }
  }

  @SuppressWarnings("restricted")
  private static MethodHandle handle(
      Linker linker, SymbolLookup libc, String name, ValueLayout result, MemoryLayout... args) {
    return linker.downcallHandle(find(libc, name), FunctionDescriptor.of(result, args));
  }

  private static MemorySegment find(SymbolLookup libc, String name) {
    Optional<MemorySegment> symbol = libc.find(name);
    return symbol.orElseThrow(() -> new IllegalStateException("the C library has no " + name));
  }

  /**
   * Starts {@code argv} (its first element an absolute path) with exactly {@code env}, in a new
   * session, in {@code /}, stdout to {@code /dev/null}, stderr appended to {@code stderr} (which
   * exists), and stdin from {@code /dev/null} or, with {@code pipeStdin}, a pipe whose other end is
   * the process's {@link Process#getOutputStream}.
   *
   * @throws IOException when the program cannot be started (the C library's error, named)
   * @throws IllegalArgumentException when an argument or a variable holds a NUL, or a variable's
   *     name is empty or holds {@code =} (as {@link ProcessBuilder} refuses them)
   */
  static Process start(List<String> argv, Map<String, String> env, Path stderr, boolean pipeStdin)
      throws IOException {
    Functions f = FUNCTIONS;
    if (f == null) {
      throw new IllegalStateException("posix_spawn is not available");
    }
    try {
      return start(f, argv, env, stderr, pipeStdin);
    } catch (IOException | RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException("posix_spawn failed", e);
    }
  }

  private static Process start(
      Functions f, List<String> argv, Map<String, String> env, Path stderr, boolean pipeStdin)
      throws Throwable {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment argvArray = strings(arena, argv);
      String[] pairs = new String[env.size()];
      int i = 0;
      for (var e : env.entrySet()) {
        if (e.getKey().isEmpty() || e.getKey().indexOf('=') >= 0) {
          throw new IllegalArgumentException("invalid environment variable name: " + e.getKey());
        }
        pairs[i++] = e.getKey() + "=" + e.getValue();
      }
      MemorySegment envArray = strings(arena, List.of(pairs));
      MemorySegment actions = arena.allocate(OPAQUE_BYTES, 16);
      MemorySegment attr = arena.allocate(OPAQUE_BYTES, 16);
      MemorySegment sigset = arena.allocate(OPAQUE_BYTES, 16);
      int[] pipe = pipeStdin ? pipe(f, arena) : null;
      OutputStream stdin = null;
      if (pipe != null) {
        try {
          // A stream of its own on the pipe's write end (the children the JDK and this class start
          // close every descriptor above 2, so its lack of close-on-exec does not leak it).
          stdin = new FileOutputStream("/proc/self/fd/" + pipe[1]);
        } finally {
          closeQuietly(f, pipe[1]);
          pipe[1] = -1;
        }
      }
      check("posix_spawn_file_actions_init", (int) f.actionsInit.invokeExact(actions));
      check("posix_spawnattr_init", (int) f.attrInit.invokeExact(attr));
      try {
        MemorySegment devNull = arena.allocateFrom("/dev/null");
        if (pipe != null) {
          check("adddup2", (int) f.addDup2.invokeExact(actions, pipe[0], 0));
        } else {
          check("addopen", (int) f.addOpen.invokeExact(actions, 0, devNull, O_RDONLY, 0));
        }
        check("addopen", (int) f.addOpen.invokeExact(actions, 1, devNull, O_WRONLY, 0));
        MemorySegment err = arena.allocateFrom(stderr.toString());
        check("addopen", (int) f.addOpen.invokeExact(actions, 2, err, O_WRONLY | O_APPEND, 0));
        check("addclosefrom_np", (int) f.addCloseFrom.invokeExact(actions, 3));
        check("addchdir_np", (int) f.addChdir.invokeExact(actions, arena.allocateFrom("/")));
        check("sigemptyset", (int) f.sigEmptySet.invokeExact(sigset));
        check("setsigmask", (int) f.setSigMask.invokeExact(attr, sigset));
        MemorySegment all = arena.allocate(OPAQUE_BYTES, 16);
        check("sigfillset", (int) f.sigFillSet.invokeExact(all));
        check("setsigdefault", (int) f.setSigDefault.invokeExact(attr, all));
        short flags = (short) (POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        check("setflags", (int) f.setFlags.invokeExact(attr, flags));

        MemorySegment pid = arena.allocate(INT);
        MemorySegment path = arena.allocateFrom(argv.getFirst());
        int rc = (int) f.spawn.invokeExact(pid, path, actions, attr, argvArray, envArray);
        if (rc != 0) {
          throw new IOException(
              "could not start " + argv.getFirst() + ": posix_spawn error " + rc + errnoName(rc));
        }
        Process process = new SpawnedProcess(pid.get(INT, 0), stdin);
        stdin = null;
        return process;
      } finally {
        if (pipe != null) {
          closeQuietly(f, pipe[0]);
        }
        if (stdin != null) {
          stdin.close();
        }
        int ignored = (int) f.actionsDestroy.invokeExact(actions);
        ignored = (int) f.attrDestroy.invokeExact(attr);
      }
    }
  }

  /** A NULL-terminated array of C strings. */
  private static MemorySegment strings(Arena arena, List<String> values) {
    MemorySegment array = arena.allocate(PTR, values.size() + 1L);
    for (int i = 0; i < values.size(); i++) {
      String s = values.get(i);
      if (s.indexOf('\0') >= 0) {
        throw new IllegalArgumentException("invalid null character in " + s.replace('\0', '?'));
      }
      array.setAtIndex(PTR, i, arena.allocateFrom(s));
    }
    array.setAtIndex(PTR, values.size(), MemorySegment.NULL);
    return array;
  }

  /** A close-on-exec pipe: [read end, write end]. */
  private static int[] pipe(Functions f, Arena arena) throws Throwable {
    MemorySegment fds = arena.allocate(INT, 2);
    if ((int) f.pipe2.invokeExact(fds, O_CLOEXEC) != 0) {
      throw new IOException("could not create a pipe for the task's stdin");
    }
    return new int[] {fds.getAtIndex(INT, 0), fds.getAtIndex(INT, 1)};
  }

  private static void check(String what, int rc) throws IOException {
    if (rc != 0) {
      throw new IOException("posix_spawn: " + what + " failed: error " + rc + errnoName(rc));
    }
  }

  private static String errnoName(int errno) {
    return switch (errno) {
      case 1 -> " (EPERM)";
      case 2 -> " (ENOENT)";
      case 12 -> " (ENOMEM)";
      case 13 -> " (EACCES)";
      case 11 -> " (EAGAIN)";
      default -> "";
    };
  }

  private static void closeQuietly(Functions f, int fd) {
    try {
      int ignored = (int) f.close.invokeExact(fd);
    } catch (Throwable e) {
      // nothing to do: the descriptor is gone either way
    }
  }

  /** The wait status value that means "no status could be had" (see {@link #waitFor}). */
  static final int NO_STATUS = -1;

  /**
   * Blocks until child {@code pid} exits and reaps it: its wait status, or {@link #NO_STATUS} when
   * it is not this process's child (it cannot be: only {@link SpawnedProcess} reaps it).
   */
  static int waitFor(int pid) {
    Functions f = FUNCTIONS;
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment status = arena.allocate(INT);
      MemorySegment state = arena.allocate(CAPTURE);
      while (true) {
        int rc = (int) f.waitpid.invokeExact(state, pid, status, 0);
        if (rc == pid) {
          return status.get(INT, 0);
        }
        if (rc == -1 && (int) ERRNO.get(state, 0L) == EINTR) {
          continue;
        }
        return NO_STATUS;
      }
    } catch (Throwable e) {
      log.error("waitpid({}) failed", pid, e);
      return NO_STATUS;
    }
  }
}
