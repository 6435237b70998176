package io.kairos.agent.isolate;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The fence watchdog: a tiny separate JVM per agent that kills the agent's tasks once the agent's
 * lease has run out.
 *
 * <p>Why a separate process: the controller gives a node's GPUs to other jobs once the agent's
 * lease expires, so by then the agent's tasks must be dead. An agent that merely lost the
 * controller can kill them itself, but an agent that is frozen (SIGSTOP, a debugger, a stuck page
 * fault, a stop-the-world pause longer than the lease) cannot, while its tasks run on. The watchdog
 * shares nothing with the agent's JVM but a few files ({@link FenceFiles}), so a frozen agent does
 * not freeze it.
 *
 * <p>Every 100 ms it reads the lease. Once {@link System#nanoTime()} (CLOCK_MONOTONIC, the clock
 * the agent wrote the deadline in) passes the deadline, or when there is no lease at all, every
 * registered task still alive (pid and start time both match: a reused pid is never killed) is
 * SIGKILLed with its whole process tree, and through its cgroup when one is registered. What it
 * killed is appended to {@code fence/fenced}. It keeps watching, since the agent may renew the
 * lease and register new tasks. It exits once the agent process is gone, the lease has expired and
 * no registered task is alive.
 *
 * <p>Run as {@code java -Xmx16m -XX:+UseSerialGC -cp <agent classpath>
 * io.kairos.agent.isolate.FenceWatchdogMain <dataDir>}; it loads only this package.
 */
public final class FenceWatchdogMain {
  static final long TICK_MILLIS = 100;

  private FenceWatchdogMain() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: FenceWatchdogMain <dataDir>");
      System.exit(2);
    }
    Path dataDir = Path.of(args[0]);
    ProcessRef self =
        ProcessRef.of(ProcessHandle.current()).orElseThrow(() -> new IOException("no /proc"));
    FenceFiles.writeProcess(FenceFiles.watchdogFile(dataDir), self);
    log("watching " + dataDir + " as pid " + self.pid());
    while (true) {
      // 1. The tasks first, then the lease: the agent renews its lease before it registers a new
      // task, so a task seen here was registered before the lease read below, and a renewal that
      // came with it is seen too. Read the other way round, a tick could see the old, expired
      // lease and then a task started under the new one, and kill it.
      List<FenceFiles.Registration> tasks = FenceFiles.readRegistrations(dataDir);
      Optional<FenceFiles.Lease> lease = FenceFiles.readLease(dataDir);
      boolean expired = lease.isEmpty() || System.nanoTime() - lease.get().deadlineNanos() > 0;
      // 2. If the lease is over, no task may live.
      if (expired) {
        List<String> killed = fence(tasks);
        if (!killed.isEmpty()) {
          String line =
              Instant.now()
                  + " lease expired (epoch "
                  + lease.map(FenceFiles.Lease::epoch).orElse(-1L)
                  + "): killed "
                  + String.join("; ", killed)
                  + "\n";
          Files.writeString(
              FenceFiles.fencedFile(dataDir),
              line,
              StandardOpenOption.CREATE,
              StandardOpenOption.APPEND);
          log(line.strip());
        }
      }
      // 3. Nothing left to guard?
      boolean agentGone = lease.isEmpty() || !lease.get().agent().isAlive();
      if (expired && agentGone && tasks.stream().noneMatch(FenceWatchdogMain::alive)) {
        Files.deleteIfExists(FenceFiles.watchdogFile(dataDir));
        log("agent gone, lease expired, no task alive: exiting");
        return;
      }
      TaskCgroup.pause(TICK_MILLIS);
    }
  }

  /** Kills every registered task that still has a process; one line per task that had one. */
  static List<String> fence(List<FenceFiles.Registration> tasks) {
    var lines = new ArrayList<String>();
    for (FenceFiles.Registration r : tasks) {
      List<Long> killed = kill(r);
      if (!killed.isEmpty()) {
        lines.add(r.key() + " pids " + killed);
      }
    }
    return lines;
  }

  /** Kills a task: its cgroup's processes (if any) and its process tree (if still the same). */
  static List<Long> kill(FenceFiles.Registration r) {
    var killed = new ArrayList<Long>(r.process().killTree());
    if (!r.cgroups().isEmpty()) {
      for (long pid : TaskCgroup.killAllIn(r.cgroups())) {
        if (!killed.contains(pid)) {
          killed.add(pid);
        }
      }
    }
    return killed;
  }

  static boolean alive(FenceFiles.Registration r) {
    return r.process().isAlive() || !TaskCgroup.pidsIn(r.cgroups()).isEmpty();
  }

  private static void log(String message) {
    System.err.println(Instant.now() + " fence-watchdog: " + message);
  }
}
