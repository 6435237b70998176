package io.kairos.agent;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** Waits on the effects of real processes, each wait bounded, for the agent's tests. */
final class Processes {
  /** The longest a test waits for a process to do something. */
  static final Duration PROCESS_WAIT = Duration.ofSeconds(10);

  private Processes() {}

  /** Waits for a process to write its pid to {@code file}, and returns it. */
  static long awaitPid(Path file) throws IOException {
    await().atMost(PROCESS_WAIT).until(() -> Files.exists(file) && Files.size(file) > 1);
    return Long.parseLong(Files.readString(file).strip());
  }

  /** Waits for {@code file} to exist. */
  static void awaitFile(Path file) {
    await().atMost(PROCESS_WAIT).alias(file + " exists").until(() -> Files.exists(file));
  }

  /** The lines of {@code file}; none when it does not exist. */
  static List<String> lines(Path file) throws IOException {
    return Files.exists(file) ? Files.readAllLines(file) : List.of();
  }

  static void awaitDead(long pid) {
    await().atMost(PROCESS_WAIT).alias("process " + pid + " is gone").until(() -> isGone(pid));
  }

  /**
   * Whether the process has ended. A killed grandchild is re-parented, and stays a zombie (which
   * {@link ProcessHandle#isAlive} counts as alive) until its new parent reaps it, which some
   * container init processes never do: a zombie counts as gone.
   */
  static boolean isGone(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      char state = stat.charAt(stat.lastIndexOf(')') + 2);
      return state == 'Z' || state == 'X';
    } catch (IOException e) {
      return true;
    }
  }

  /**
   * Whether this JVM ignores {@code signal} (started under {@code nohup}, or in the background of a
   * shell without job control): its children then inherit the ignored disposition, and a shell
   * cannot trap it.
   */
  static boolean ignoredByThisJvm(int signal) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("SigIgn:")) {
        long mask = Long.parseUnsignedLong(line.substring("SigIgn:".length()).strip(), 16);
        return (mask & (1L << (signal - 1))) != 0;
      }
    }
    return false;
  }
}
