package io.kairos.agent.isolate;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The files the agent and its watchdog share under {@code <dataDir>/fence/}, and their formats:
 * plain {@code key=value} lines so the watchdog needs no JSON library, each written to a temp file
 * and renamed so a reader never sees half a file. The files are 0600 and the directories 0700: only
 * the agent (and the watchdog, as the same account) reads or writes them.
 *
 * <pre>
 * fence/lease           deadlineNanos, agentPid, agentStartTicks, epoch
 * fence/tasks/&lt;key&gt;     pid, startTicks, cgroup (one line per directory)
 * fence/watchdog        pid, startTicks of the running watchdog
 * fence/fenced          what the watchdog killed, and when (appended per fence)
 * </pre>
 */
final class FenceFiles {
  private FenceFiles() {}

  /**
   * The agent's lease.
   *
   * @param deadlineNanos CLOCK_MONOTONIC ({@link System#nanoTime()} on Linux) after which the agent
   *     may no longer run tasks
   */
  record Lease(long deadlineNanos, ProcessRef agent, long epoch) {}

  /** One registered task process and its cgroup directories (empty without cgroups). */
  record Registration(String key, ProcessRef process, List<Path> cgroups) {
    Registration {
      cgroups = List.copyOf(cgroups);
    }
  }

  static Path fenceDir(Path dataDir) {
    return dataDir.resolve("fence");
  }

  static Path leaseFile(Path dataDir) {
    return fenceDir(dataDir).resolve("lease");
  }

  static Path tasksDir(Path dataDir) {
    return fenceDir(dataDir).resolve("tasks");
  }

  static Path watchdogFile(Path dataDir) {
    return fenceDir(dataDir).resolve("watchdog");
  }

  static Path fencedFile(Path dataDir) {
    return fenceDir(dataDir).resolve("fenced");
  }

  static void writeLease(Path dataDir, Lease lease) throws IOException {
    writeAtomically(
        leaseFile(dataDir),
        "deadlineNanos="
            + lease.deadlineNanos()
            + "\nagentPid="
            + lease.agent().pid()
            + "\nagentStartTicks="
            + lease.agent().startTicks()
            + "\nepoch="
            + lease.epoch()
            + "\n");
  }

  static Optional<Lease> readLease(Path dataDir) {
    Optional<List<String>> lines = read(leaseFile(dataDir));
    if (lines.isEmpty()) {
      return Optional.empty();
    }
    try {
      var l = lines.get();
      return Optional.of(
          new Lease(
              Long.parseLong(value(l, "deadlineNanos")),
              new ProcessRef(
                  Long.parseLong(value(l, "agentPid")),
                  Long.parseLong(value(l, "agentStartTicks"))),
              Long.parseLong(value(l, "epoch"))));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  static void writeRegistration(Path dataDir, Registration r) throws IOException {
    var text = new StringBuilder();
    text.append("pid=").append(r.process().pid()).append('\n');
    text.append("startTicks=").append(r.process().startTicks()).append('\n');
    for (Path cg : r.cgroups()) {
      text.append("cgroup=").append(cg).append('\n');
    }
    writeAtomically(tasksDir(dataDir).resolve(r.key()), text.toString());
  }

  static List<Registration> readRegistrations(Path dataDir) {
    var out = new ArrayList<Registration>();
    try (Stream<Path> files = Files.list(tasksDir(dataDir))) {
      for (Path f : files.sorted().toList()) {
        String key = f.getFileName().toString();
        if (key.endsWith(".tmp")) {
          continue;
        }
        read(f).flatMap(lines -> registration(key, lines)).ifPresent(out::add);
      }
    } catch (IOException e) {
      // No tasks directory: nothing registered.
    }
    return out;
  }

  private static Optional<Registration> registration(String key, List<String> lines) {
    try {
      var ref =
          new ProcessRef(
              Long.parseLong(value(lines, "pid")), Long.parseLong(value(lines, "startTicks")));
      List<Path> cgroups =
          lines.stream()
              .filter(l -> l.startsWith("cgroup="))
              .map(l -> Path.of(l.substring("cgroup=".length())))
              .toList();
      return Optional.of(new Registration(key, ref, cgroups));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  static void writeProcess(Path file, ProcessRef ref) throws IOException {
    writeAtomically(file, "pid=" + ref.pid() + "\nstartTicks=" + ref.startTicks() + "\n");
  }

  static Optional<ProcessRef> readProcess(Path file) {
    return read(file)
        .flatMap(
            l -> {
              try {
                return Optional.of(
                    new ProcessRef(
                        Long.parseLong(value(l, "pid")), Long.parseLong(value(l, "startTicks"))));
              } catch (RuntimeException e) {
                return Optional.empty();
              }
            });
  }

  /** Writes {@code text} to {@code file} through a temp file and a rename; mode 0600, dirs 0700. */
  static void writeAtomically(Path file, String text) throws IOException {
    PrivateFiles.directory(file.getParent());
    PrivateFiles.writeAtomically(file, text.getBytes(StandardCharsets.UTF_8));
  }

  private static Optional<List<String>> read(Path file) {
    try {
      return Optional.of(Files.readAllLines(file));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  private static String value(List<String> lines, String key) {
    for (String line : lines) {
      if (line.startsWith(key + "=")) {
        return line.substring(key.length() + 1);
      }
    }
    throw new IllegalArgumentException("no " + key);
  }
}
