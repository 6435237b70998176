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
import java.util.Arrays;
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

  /** Whether supervisors start with {@code posix_spawn} here (see the class comment). */
  private static final boolean AVAILABLE = load();

  private NativeSpawn() {}

  /** Whether supervisors start with {@code posix_spawn} in this JVM. */
  static boolean available() {
    return AVAILABLE;
  }

  private static boolean load() {
    if (!Boolean.parseBoolean(System.getProperty("kairos.agent.posixSpawn", "true"))
        || !System.getProperty("os.name", "").equals("Linux")
        || !NativeSpawn.class.getModule().isNativeAccessEnabled()) {
      return false;
    }
    try {
      return Libc.SPAWN != null;
    } catch (LinkageError e) { // the C library lacks one (not glibc 2.34+), or another failure
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      log.info("tasks start through the JDK's ProcessBuilder: {}", cause.getMessage());
      return false;
    }
  }

  /**
   * The C functions, as constants (so the compilers link the calls directly), and the spawn
   * attributes every start shares (a new session, no blocked signal, every signal at its default),
   * made once: {@code posix_spawn} only reads them. Loaded only when {@link #load} allows.
   */
  @SuppressWarnings("restricted") // only once native access is known to be enabled
  private static final class Libc {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LOOKUP = LINKER.defaultLookup();

    static final MethodHandle SPAWN = handle("posix_spawn", INT, PTR, PTR, PTR, PTR, PTR, PTR);
    static final MethodHandle ACTIONS_INIT = handle("posix_spawn_file_actions_init", INT, PTR);
    static final MethodHandle ACTIONS_DESTROY =
        handle("posix_spawn_file_actions_destroy", INT, PTR);
    static final MethodHandle ADD_OPEN =
        handle("posix_spawn_file_actions_addopen", INT, PTR, INT, PTR, INT, INT);
    static final MethodHandle ADD_DUP2 =
        handle("posix_spawn_file_actions_adddup2", INT, PTR, INT, INT);
    static final MethodHandle ADD_CHDIR =
        handle("posix_spawn_file_actions_addchdir_np", INT, PTR, PTR);
    static final MethodHandle ADD_CLOSEFROM =
        handle("posix_spawn_file_actions_addclosefrom_np", INT, PTR, INT);
    static final MethodHandle PIPE2 = handle("pipe2", INT, PTR, INT);
    static final MethodHandle CLOSE = handle("close", INT, INT);
    static final MethodHandle WAITPID =
        LINKER.downcallHandle(
            find("waitpid"),
            FunctionDescriptor.of(INT, INT, PTR, INT),
            Linker.Option.captureCallState("errno"));

    static final MemorySegment DEV_NULL = Arena.global().allocateFrom("/dev/null");
    static final MemorySegment ROOT = Arena.global().allocateFrom("/");
    static final MemorySegment ATTR = attributes();

    private static MemorySegment attributes() {
      try {
        MemorySegment attr = Arena.global().allocate(OPAQUE_BYTES, 16);
        MemorySegment none = Arena.global().allocate(OPAQUE_BYTES, 16);
        MemorySegment all = Arena.global().allocate(OPAQUE_BYTES, 16);
        check("posix_spawnattr_init", (int) handle("posix_spawnattr_init", INT, PTR).invoke(attr));
        check("sigemptyset", (int) handle("sigemptyset", INT, PTR).invoke(none));
        check("sigfillset", (int) handle("sigfillset", INT, PTR).invoke(all));
        check(
            "setsigmask",
            (int) handle("posix_spawnattr_setsigmask", INT, PTR, PTR).invoke(attr, none));
        check(
            "setsigdefault",
            (int) handle("posix_spawnattr_setsigdefault", INT, PTR, PTR).invoke(attr, all));
        short flags = (short) (POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        check(
            "setflags",
            (int)
                handle("posix_spawnattr_setflags", INT, PTR, ValueLayout.JAVA_SHORT)
                    .invoke(attr, flags));
        return attr;
      } catch (Throwable e) {
        throw new IllegalStateException("posix_spawnattr: " + e.getMessage(), e);
      }
    }

    private static MethodHandle handle(String name, ValueLayout result, MemoryLayout... args) {
      return LINKER.downcallHandle(find(name), FunctionDescriptor.of(result, args));
    }

    private static MemorySegment find(String name) {
      Optional<MemorySegment> symbol = LOOKUP.find(name);
      return symbol.orElseThrow(() -> new IllegalStateException("the C library has no " + name));
    }
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
    if (!AVAILABLE) {
      throw new IllegalStateException("posix_spawn is not available");
    }
    try {
      return spawn(argv, env, stderr, pipeStdin);
    } catch (IOException | RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException("posix_spawn failed", e);
    }
  }

  private static Process spawn(
      List<String> argv, Map<String, String> env, Path stderr, boolean pipeStdin) throws Throwable {
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
      MemorySegment envArray = strings(arena, Arrays.asList(pairs));
      MemorySegment path = arena.allocateFrom(argv.getFirst());
      MemorySegment err = arena.allocateFrom(stderr.toString());
      MemorySegment actions = arena.allocate(OPAQUE_BYTES, 16);
      MemorySegment pid = arena.allocate(INT);
      int[] pipe = pipeStdin ? pipe(arena) : null;
      OutputStream stdin = null;
      boolean actionsMade = false;
      try {
        if (pipe != null) {
          try {
            // A stream of its own on the pipe's write end (the children the JDK and this class
            // start close every descriptor above 2, so its lack of close-on-exec leaks nothing).
            stdin = new FileOutputStream("/proc/self/fd/" + pipe[1]);
          } finally {
            closeQuietly(pipe[1]);
          }
        }
        check("posix_spawn_file_actions_init", (int) Libc.ACTIONS_INIT.invokeExact(actions));
        actionsMade = true;
        if (pipe != null) {
          check("adddup2", (int) Libc.ADD_DUP2.invokeExact(actions, pipe[0], 0));
        } else {
          check("addopen", (int) Libc.ADD_OPEN.invokeExact(actions, 0, Libc.DEV_NULL, O_RDONLY, 0));
        }
        check("addopen", (int) Libc.ADD_OPEN.invokeExact(actions, 1, Libc.DEV_NULL, O_WRONLY, 0));
        check("addopen", (int) Libc.ADD_OPEN.invokeExact(actions, 2, err, O_WRONLY | O_APPEND, 0));
        check("addclosefrom_np", (int) Libc.ADD_CLOSEFROM.invokeExact(actions, 3));
        check("addchdir_np", (int) Libc.ADD_CHDIR.invokeExact(actions, Libc.ROOT));
        int rc = (int) Libc.SPAWN.invokeExact(pid, path, actions, Libc.ATTR, argvArray, envArray);
        if (rc != 0) {
          throw new IOException(
              "could not start " + argv.getFirst() + ": posix_spawn error " + rc + errnoName(rc));
        }
        Process process = new SpawnedProcess(pid.get(INT, 0), stdin);
        stdin = null;
        return process;
      } finally {
        if (pipe != null) {
          closeQuietly(pipe[0]);
        }
        if (stdin != null) {
          stdin.close();
        }
        if (actionsMade) {
          int ignored = (int) Libc.ACTIONS_DESTROY.invokeExact(actions);
        }
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
  private static int[] pipe(Arena arena) throws Throwable {
    MemorySegment fds = arena.allocate(INT, 2);
    if ((int) Libc.PIPE2.invokeExact(fds, O_CLOEXEC) != 0) {
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

  private static void closeQuietly(int fd) {
    try {
      int ignored = (int) Libc.CLOSE.invokeExact(fd);
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
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment status = arena.allocate(INT);
      MemorySegment state = arena.allocate(CAPTURE);
      while (true) {
        int rc = (int) Libc.WAITPID.invokeExact(state, pid, status, 0);
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
