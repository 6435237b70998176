package io.kairos.agent;

import io.kairos.agent.isolate.ProcessRef;
import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskStatus;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link TaskTable}'s side of tasks that outlive their agent: the record it leaves when a task
 * has started ({@link TaskRecord}), the task rebuilt from that record by the next agent, and the
 * wait for a process's end, whether this agent started it or adopted its {@link Supervisor}.
 */
final class Adoption {
  private static final Logger log = LoggerFactory.getLogger(Adoption.class);

  /** How often an adopted supervisor, not this process's child, is looked at. */
  static final Duration POLL = Duration.ofMillis(200);

  /** The status of a process whose supervisor died without recording one: as if SIGKILLed. */
  static final int LOST_EXIT = 128 + 9;

  /**
   * How a process ended: its status, what its setup said, and, when no status was recorded (its
   * supervisor was killed while no agent watched), why.
   */
  record Ended(int code, String setup, String lost) {}

  private Adoption() {}

  /**
   * Records a started task for the next agent, when every process of it runs under a supervisor;
   * under the table's lock. A record that cannot be written only costs the adoption (logged).
   */
  static void record(Path dataDir, HeldTask task) {
    if (task.procs.isEmpty() || !task.procs.stream().allMatch(p -> p.supervised)) {
      return;
    }
    var supervisors = new ArrayList<TaskRecord.Proc>();
    for (HeldTask.Proc p : task.procs) {
      long ticks = ProcessRef.of(p.handle).map(ProcessRef::startTicks).orElse(-1L);
      supervisors.add(new TaskRecord.Proc(p.local, p.handle.pid(), ticks));
    }
    try {
      new TaskRecord(
              task.assignment, task.startedAt.toEpochMilli(), task.outputAtStart, supervisors)
          .write(dataDir);
    } catch (IOException e) {
      log.warn(
          "{}: not recorded for adoption (a restart will kill it): {}", task.key, e.toString());
    }
  }

  /** The task {@code found} describes, RUNNING with its live processes, or EXITED. */
  static HeldTask task(
      TaskRecord.Found found,
      String node,
      Path dataDir,
      Map<String, String> agentEnv,
      Map<String, String> kairosEnv,
      Duration killGrace,
      InstantSource clock) {
    TaskRecord record = found.record();
    TaskAssignment a = record.assignment();
    TaskKey key = record.key();
    var task = new HeldTask(key, a, killGrace);
    List<LaunchSpec> specs;
    try {
      // Only the files count here (output limits, logs): the same whoever opens them.
      specs = LaunchSpec.all(a, node, dataDir, agentEnv, kairosEnv, null);
    } catch (IllegalArgumentException e) {
      specs = List.of();
    }
    for (int i = 0; i < record.supervisors().size(); i++) {
      TaskRecord.Proc p = record.supervisors().get(i);
      LaunchSpec spec = i < specs.size() ? specs.get(i) : fallback(key, dataDir, p.local());
      ProcessHandle handle =
          found.live().get(i).flatMap(ref -> ProcessHandle.of(ref.pid())).orElse(null);
      var proc = new HeldTask.Proc(p.local(), spec, null, handle, true, null);
      if (handle == null) {
        Integer code = found.exits().get(i);
        proc.exit = code == null ? LOST_EXIT : code;
        proc.setup = Supervisor.setupErrors(found.dir(), p.local());
        if (code == null) {
          task.reason = ExitReason.KILLED;
          task.message = lostMessage();
        }
      }
      task.procs.add(proc);
    }
    task.specs = task.procs.stream().map(p -> p.spec).toList();
    Instant now = clock.instant();
    task.started(Instant.ofEpochMilli(record.startedAtMs()));
    task.outputAtStart = record.outputAtStart();
    task.warned = task.warnAt != null && !now.isBefore(task.warnAt);
    if (task.allExited()) {
      task.exited(now);
      task.failedSetup();
    } else {
      task.status = TaskStatus.RUNNING;
    }
    log.info(
        "{}: adopted from the previous agent: {}{}",
        key,
        task.status,
        task.status == TaskStatus.EXITED ? " with code " + task.exitCode : "");
    return task;
  }

  private static LaunchSpec fallback(TaskKey key, Path dataDir, int local) {
    Path taskDir = LaunchSpec.taskDir(dataDir, key);
    return new LaunchSpec(
        key,
        List.of("unknown"),
        Map.of(),
        taskDir,
        taskDir,
        taskDir.resolve("stdout.log"),
        taskDir.resolve("stderr.log"),
        null,
        local,
        false,
        null);
  }

  private static String lostMessage() {
    return "its supervisor ended without recording the task's exit while no agent watched it"
        + " (killed by the fence watchdog when the lease ran out, or by hand)";
  }

  /**
   * Waits until {@code proc} has ended and returns how: a process started here is waited for (and
   * its spool drained); an {@code adopted} supervisor, not a child of this process, is polled (pid
   * and start time) until it has gone or recorded the status.
   */
  static Ended awaitExit(
      Path dataDir, TaskKey key, HeldTask.Proc proc, ProcessRef adopted, Duration spoolDrain) {
    Path run = Supervisor.taskDir(dataDir, key);
    if (proc.process == null) {
      while (Supervisor.recordedExit(run, proc.local).isEmpty() && adopted.isAlive()) {
        sleep(POLL);
      }
      OptionalInt code = Supervisor.recordedExit(run, proc.local);
      String setup = Supervisor.setupErrors(run, proc.local);
      return code.isPresent()
          ? new Ended(code.getAsInt(), setup, null)
          : new Ended(LOST_EXIT, setup, lostMessage());
    }
    while (true) {
      try {
        proc.process.waitFor();
        if (proc.spool != null) {
          proc.spool.awaitDrained(spoolDrain);
        }
        break;
      } catch (InterruptedException e) {
        // Nobody interrupts these threads; keep waiting: the exit must be recorded.
      }
    }
    if (!proc.supervised) {
      return new Ended(proc.process.exitValue(), "", null);
    }
    int code = Supervisor.recordedExit(run, proc.local).orElse(proc.process.exitValue());
    return new Ended(code, Supervisor.setupErrors(run, proc.local), null);
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d);
    } catch (InterruptedException e) {
      // Nobody interrupts these threads; keep waiting.
    }
  }
}
