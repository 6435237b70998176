package io.kairos.agent.isolate;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What a restarting agent finds of its previous run: a watchdog and task processes that outlived it
 * (after a restart, a crash, a SIGKILL or an OOM kill of the agent). Tasks it adopts (their
 * supervisors recorded them, see the agent's {@code TaskRecord}) keep running; any other is killed
 * before it starts anything, since the new agent cannot report it.
 *
 * <p>Only processes whose pid <em>and</em> start time match what was registered are killed: after a
 * reboot or a long outage the pids in the files may belong to unrelated processes.
 */
public final class Orphans {
  private Orphans() {}

  /** One killed leftover: {@code what} is "watchdog" or the task's key. */
  public record Killed(String what, List<Long> pids) {
    public Killed {
      pids = List.copyOf(pids);
    }
  }

  /**
   * Kills the old watchdog (first, so it does not race this) and every registered task still alive,
   * and empties the registry.
   */
  public static List<Killed> killAll(Path dataDir) throws IOException {
    return killAllBut(dataDir, java.util.Set.of());
  }

  /**
   * As {@link #killAll}, but the tasks named in {@code adopted} (by {@link
   * io.kairos.agent.TaskKey#dirName}), which the new agent adopts, keep their processes and their
   * registrations.
   */
  public static List<Killed> killAllBut(Path dataDir, java.util.Set<String> adopted)
      throws IOException {
    var killed = new ArrayList<Killed>();
    Path watchdogFile = FenceFiles.watchdogFile(dataDir);
    FenceFiles.readProcess(watchdogFile)
        .ifPresent(
            w -> {
              List<Long> pids =
                  w.live().map(h -> h.destroyForcibly()).orElse(false)
                      ? List.of(w.pid())
                      : List.of();
              if (!pids.isEmpty()) {
                killed.add(new Killed("watchdog", pids));
              }
            });
    Files.deleteIfExists(watchdogFile);
    for (FenceFiles.Registration r : FenceFiles.readRegistrations(dataDir)) {
      int plus = r.key().indexOf('+');
      if (adopted.contains(plus < 0 ? r.key() : r.key().substring(0, plus))) {
        continue;
      }
      List<Long> pids = FenceWatchdogMain.kill(r);
      if (!pids.isEmpty()) {
        killed.add(new Killed(r.key(), pids));
      }
      if (!r.cgroups().isEmpty()) {
        TaskCgroup.removeDirs(r.cgroups(), 1_000);
      }
      Files.deleteIfExists(FenceFiles.tasksDir(dataDir).resolve(r.key()));
    }
    return killed;
  }
}
