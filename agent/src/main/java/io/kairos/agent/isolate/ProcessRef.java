package io.kairos.agent.isolate;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * A process named by pid <em>and</em> start time, so that a pid the kernel has since given to an
 * unrelated process is never signalled.
 *
 * <p>Why not just the pid: the watchdog and a restarting agent act on pids they read from files
 * written seconds or days earlier. By then the task may have exited and its pid been reused, and
 * SIGKILL to a stranger is the worst bug a fencing mechanism can have. The start time is field 22
 * of {@code /proc/<pid>/stat} (clock ticks since boot): fixed for a process's life and the same for
 * every reader. {@link ProcessHandle.Info#startInstant()} is derived from it but adds the boot time
 * from {@code /proc/stat}'s {@code btime}, which can move by a second when the wall clock is
 * stepped, so the raw ticks are the safer identity.
 */
public record ProcessRef(long pid, long startTicks) {
  public ProcessRef {
    if (pid <= 0) {
      throw new IllegalArgumentException("pid must be > 0, got " + pid);
    }
  }

  /** The identity of a running process, or empty if it has gone (or /proc is unreadable). */
  public static Optional<ProcessRef> of(long pid) {
    OptionalLong start = startTicks(pid);
    return start.isPresent()
        ? Optional.of(new ProcessRef(pid, start.getAsLong()))
        : Optional.empty();
  }

  public static Optional<ProcessRef> of(ProcessHandle handle) {
    return of(handle.pid());
  }

  /** The handle of this very process if it still runs (same pid and start time), else empty. */
  public Optional<ProcessHandle> live() {
    OptionalLong now = startTicks(pid);
    if (now.isEmpty() || now.getAsLong() != startTicks) {
      return Optional.empty();
    }
    return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).filter(h -> !isZombie(pid));
  }

  public boolean isAlive() {
    return live().isPresent();
  }

  /**
   * SIGKILLs this process and every descendant, if it is still the same process.
   *
   * <p>The tree is captured before the first signal because a child whose parent dies is
   * re-parented and no longer shows as a descendant. A second sweep catches children born between
   * the capture and the signals. A task that double-forks a daemon away before the kill escapes
   * this (only its cgroup catches it).
   *
   * @return the pids signalled
   */
  public List<Long> killTree() {
    Optional<ProcessHandle> root = live();
    if (root.isEmpty()) {
      return List.of();
    }
    Set<ProcessHandle> tree = new LinkedHashSet<>();
    tree.add(root.get());
    root.get().descendants().forEach(tree::add);
    var killed = new ArrayList<Long>();
    for (ProcessHandle p : tree) {
      if (p.destroyForcibly()) {
        killed.add(p.pid());
      }
    }
    for (ProcessHandle p : List.copyOf(tree)) {
      p.descendants()
          .filter(d -> !tree.contains(d))
          .forEach(
              d -> {
                if (d.destroyForcibly()) {
                  killed.add(d.pid());
                }
              });
    }
    return killed;
  }

  static OptionalLong startTicks(long pid) {
    String[] f = statFields(pid);
    // Fields after "(comm)": index 0 is field 3 (state), so field 22 (starttime) is index 19.
    return f.length > 19 ? OptionalLong.of(Long.parseLong(f[19])) : OptionalLong.empty();
  }

  private static boolean isZombie(long pid) {
    String[] f = statFields(pid);
    return f.length > 0 && (f[0].equals("Z") || f[0].equals("X"));
  }

  private static String[] statFields(long pid) {
    String path = "/proc/" + pid + "/stat";
    if (!new java.io.File(path).exists()) {
      // Gone, as a task that ends at once often is by the time it is registered: said without
      // the two exceptions a read of the missing file builds.
      return new String[0];
    }
    try {
      String stat = Files.readString(Path.of(path));
      // comm may contain spaces and parentheses: the fields start after the last ')'.
      return stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
    } catch (IOException | RuntimeException e) {
      return new String[0];
    }
  }
}
