package io.kairos.agent.isolate;

import io.kairos.agent.TaskKey;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * The cgroup(s) of one task: one directory on cgroup v2, one per controller hierarchy on v1. Made
 * by {@link Cgroups#create}; a process joins it through the wrapper of {@link #wrap}.
 *
 * <p>Killing by cgroup is what makes a task's death complete: every process the task ever forked,
 * daemonised or not, is listed in {@code cgroup.procs}, whereas a process tree loses children whose
 * parent died. On v2 {@code cgroup.kill} kills the whole subtree in the kernel, without racing
 * forks; on v1 the list is read and signalled until it stays empty.
 *
 * @param notes what the host could not enforce for this task (a limit file missing or refused)
 */
public record TaskCgroup(TaskKey key, List<Path> dirs, List<String> notes) {
  private static final int KILL_ROUNDS = 50;

  public TaskCgroup {
    Objects.requireNonNull(key, "key");
    dirs = List.copyOf(dirs);
    notes = List.copyOf(notes);
  }

  /**
   * The {@code cgroup.procs} file of each directory: the wrapper writes the task's pid into each.
   */
  public List<Path> procsFiles() {
    return dirs.stream().map(d -> d.resolve("cgroup.procs")).toList();
  }

  /** The argv that runs {@code argv} inside this cgroup: see {@link Cgroups#wrap}. */
  public List<String> wrap(List<String> argv) {
    return Cgroups.wrap(this, argv);
  }

  /** Pids in any of the task's directories, sorted. */
  public List<Long> pids() {
    return pidsIn(dirs);
  }

  /** SIGKILLs every process of the task. Returns the pids it signalled. */
  public List<Long> killAll() {
    return killAllIn(dirs);
  }

  /**
   * Removes the task's directories once their processes are gone, retrying for up to {@code
   * retryMillis} (a killed process leaves its cgroup a moment after the signal).
   *
   * @return true if every directory is gone
   */
  public boolean remove(long retryMillis) {
    return removeDirs(dirs, retryMillis);
  }

  static List<Long> pidsIn(List<Path> dirs) {
    var pids = new TreeSet<Long>();
    for (Path dir : dirs) {
      try {
        for (String line : Files.readAllLines(dir.resolve("cgroup.procs"))) {
          if (!line.isBlank()) {
            pids.add(Long.parseLong(line.trim()));
          }
        }
      } catch (NoSuchFileException e) {
        // Already removed: nothing of the task is left there.
      } catch (IOException e) {
        // Unreadable: the other directories may still name the processes.
      }
    }
    return List.copyOf(pids);
  }

  /** Kills every process in {@code dirs}, also usable by the watchdog from registered paths. */
  static List<Long> killAllIn(List<Path> dirs) {
    var killed = new ArrayList<Long>();
    for (Path dir : dirs) {
      Path kill = dir.resolve("cgroup.kill");
      if (Files.exists(kill)) {
        try {
          List<Long> before = pidsIn(List.of(dir));
          Files.writeString(kill, "1");
          killed.addAll(before);
        } catch (IOException e) {
          // Fall back to signalling one by one below.
        }
      }
    }
    // v1, or v2 without cgroup.kill (kernels before 5.14): signal until nothing is left, since a
    // process may fork between the read and the signal.
    for (int round = 0; round < KILL_ROUNDS; round++) {
      List<Long> pids = pidsIn(dirs);
      if (pids.isEmpty()) {
        break;
      }
      for (long pid : pids) {
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        if (!killed.contains(pid)) {
          killed.add(pid);
        }
      }
      pause(10);
    }
    return killed;
  }

  static boolean removeDirs(List<Path> dirs, long retryMillis) {
    long deadline = System.nanoTime() + retryMillis * 1_000_000;
    boolean all;
    do {
      all = true;
      for (Path dir : dirs) {
        all &= removeDir(dir);
      }
      if (all) {
        return true;
      }
      pause(20);
    } while (System.nanoTime() < deadline);
    return false;
  }

  private static boolean removeDir(Path dir) {
    try {
      Files.deleteIfExists(dir);
      return true;
    } catch (DirectoryNotEmptyException e) {
      // On cgroupfs rmdir ignores the control files. Elsewhere (a test's fake tree) they are real
      // files; a real cgroup with live processes answers EBUSY, not this.
      return isCgroupFs(dir) ? false : deleteFakeTree(dir);
    } catch (IOException e) {
      return false; // EBUSY: a process has not left yet.
    }
  }

  private static boolean isCgroupFs(Path dir) {
    try {
      return Files.getFileStore(dir).type().startsWith("cgroup");
    } catch (IOException e) {
      return true;
    }
  }

  private static boolean deleteFakeTree(Path dir) {
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.toList()) {
        if (Files.isDirectory(f)) {
          return false; // a child cgroup still exists
        }
        Files.delete(f);
      }
      Files.delete(dir);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
