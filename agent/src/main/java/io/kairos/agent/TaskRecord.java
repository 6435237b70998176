package io.kairos.agent;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.kairos.agent.account.TaskOwners;
import io.kairos.agent.isolate.PrivateFiles;
import io.kairos.agent.isolate.ProcessRef;
import io.kairos.protocol.agent.TaskAssignment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an agent leaves for the next one about a running task, so that a restarted agent adopts it
 * instead of killing it: {@code DATA/run/<key>/task.json} ({@link Supervisor}), written atomically
 * once the task's processes have started, deleted when the controller has recorded its end.
 *
 * <p>{@link #scan} reads them back and trusts a record only if it could only have been written by
 * this agent's account: the directory and the file are owned by the agent's uid, are not links and
 * are private (no group or other permission), and its key matches its directory's name. A
 * supervisor counts as still running only if the process with its pid has the recorded start time
 * (field 22 of {@code /proc/PID/stat}: a reused pid is never adopted) and runs the supervisor
 * script. A record that fails a check is ignored (and logged), so its task is killed as an orphan.
 *
 * @param startedAtMs when the task's processes had all started (agent clock)
 * @param outputAtStart the size of its output files then (output limits count from it)
 * @param supervisors one per process, by local rank
 */
record TaskRecord(
    TaskAssignment assignment, long startedAtMs, long outputAtStart, List<Proc> supervisors) {
  private static final Logger log = LoggerFactory.getLogger(TaskRecord.class);
  private static final ObjectMapper JSON =
      JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();
  private static final String FILE = "task.json";

  /** One process's supervisor: its pid and start time (clock ticks since boot). */
  record Proc(int local, long pid, long startTicks) {}

  TaskRecord {
    supervisors = List.copyOf(supervisors);
  }

  TaskKey key() {
    return TaskKey.of(assignment);
  }

  /** Writes the record into the task's run directory, atomically, mode 0600. */
  void write(Path dataDir) throws IOException {
    Path dir = Supervisor.taskDir(dataDir, key());
    PrivateFiles.writeAtomically(dir.resolve(FILE), JSON.writeValueAsBytes(this));
  }

  /** Deletes the task's run directory (its record, exit and setup files). */
  static void delete(Path dataDir, TaskKey key) {
    Path dir = Supervisor.taskDir(dataDir, key);
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.toList()) {
        Files.deleteIfExists(f);
      }
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      // Not there (a task that never started), or already gone.
    }
  }

  /**
   * A task found in {@code DATA/run/}: its record and, per process, whether its supervisor still
   * runs ({@code live}) or the status it recorded ({@code exits}, null while running or when it
   * died without recording one).
   */
  record Found(TaskRecord record, Path dir, List<Optional<ProcessRef>> live, List<Integer> exits) {
    Found {
      live = List.copyOf(live);
      exits = java.util.Collections.unmodifiableList(new ArrayList<>(exits));
    }

    boolean anyRunning() {
      return live.stream().anyMatch(Optional::isPresent);
    }
  }

  /** The names ({@link TaskKey#dirName}) of the tasks in {@code found} with a process running. */
  static Set<String> running(List<Found> found) {
    var names = new java.util.TreeSet<String>();
    for (Found f : found) {
      if (f.anyRunning()) {
        names.add(f.record().key().dirName());
      }
    }
    return names;
  }

  /** Every trustworthy record in {@code DATA/run/}, for this agent's account. */
  static List<Found> scan(Path dataDir) {
    return scan(dataDir, TaskOwners.thisProcess().uid());
  }

  static List<Found> scan(Path dataDir, int agentUid) {
    Path run = Supervisor.runDir(dataDir);
    if (!Files.isDirectory(run, LinkOption.NOFOLLOW_LINKS)) {
      return List.of();
    }
    if (!trusted(run, agentUid)) {
      log.error("{} is not the agent's own private directory: adopting nothing from it", run);
      return List.of();
    }
    var found = new ArrayList<Found>();
    try (Stream<Path> dirs = Files.list(run)) {
      for (Path dir : dirs.sorted().toList()) {
        read(dir, agentUid).ifPresent(found::add);
      }
    } catch (IOException e) {
      log.error("cannot list {}: {}", run, e.toString());
    }
    return found;
  }

  private static Optional<Found> read(Path dir, int agentUid) {
    Path file = dir.resolve(FILE);
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return Optional.empty();
    }
    if (!trusted(dir, agentUid)
        || !Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)
        || !trusted(file, agentUid)) {
      log.warn("{}: not adopted: not the agent's own private record", dir);
      return Optional.empty();
    }
    TaskRecord record;
    try {
      record = JSON.readValue(Files.readAllBytes(file), TaskRecord.class);
      if (!record.key().dirName().equals(dir.getFileName().toString())
          || record.key().isStep()
          || record.supervisors().isEmpty()) {
        throw new IOException("its key does not match its directory");
      }
    } catch (IOException | RuntimeException e) {
      log.warn("{}: not adopted: unreadable record: {}", dir, e.getMessage());
      return Optional.empty();
    }
    var live = new ArrayList<Optional<ProcessRef>>();
    var exits = new ArrayList<Integer>();
    for (Proc p : record.supervisors()) {
      var code = Supervisor.recordedExit(dir, p.local());
      Optional<ProcessRef> running = Optional.empty();
      if (code.isEmpty() && p.pid() > 0) {
        var ref = new ProcessRef(p.pid(), p.startTicks());
        if (ref.isAlive() && Supervisor.isSupervisor(p.pid())) {
          running = Optional.of(ref);
        } else if (ProcessRef.of(p.pid()).isPresent()) {
          log.warn(
              "{}: pid {} is not its supervisor any more (start time or command differ): not"
                  + " adopted",
              dir,
              p.pid());
        }
      }
      live.add(running);
      exits.add(code.isPresent() ? code.getAsInt() : null);
    }
    return Optional.of(new Found(record, dir, live, exits));
  }

  /** Owned by {@code uid}, and neither group nor others may do anything with it. */
  private static boolean trusted(Path path, int uid) {
    try {
      if (Supervisor.ownerUid(path).orElse(-1) != uid) {
        return false;
      }
      Set<PosixFilePermission> perms =
          Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS);
      for (PosixFilePermission p : perms) {
        if (p.name().startsWith("GROUP") || p.name().startsWith("OTHERS")) {
          return false;
        }
      }
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
