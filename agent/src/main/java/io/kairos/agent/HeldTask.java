package io.kairos.agent;

import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import io.kairos.protocol.slurm.StepExit;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.LoggerFactory;

/**
 * One task the {@link TaskTable} holds, and its supervision state. Guarded by the table's lock.
 *
 * <p>A task is one entry of a job's (or step's) placement: its node's share, which may be several
 * processes ({@code tasksPerNode}), each a {@link Proc}. It is RUNNING once they have started and
 * EXITED once every one has exited, with their codes combined by Slurm's rule ({@link StepExit}):
 * one process's own code, or for several, 128 + the highest signal if any was killed by one, else
 * the highest exit code.
 */
final class HeldTask {
  final TaskKey key;
  final TaskAssignment assignment;
  final long timeLimitSec;

  /**
   * From the stop signal to SIGKILL: the job's grace, else the agent's; a kill may name its own (a
   * preemption), set before the stop.
   */
  Duration grace;

  TaskStatus status = TaskStatus.STARTING;
  Instant warnAt;
  boolean warned;

  /** One launch per process, prepared before the start (the barrier waits with them). */
  List<LaunchSpec> specs = List.of();

  /** The processes started, by local rank. */
  final List<Proc> procs = new ArrayList<>();

  Instant deadline;
  Instant startedAt;
  Instant endedAt;
  Integer exitCode;
  ExitReason reason;
  String message;
  Instant stopRequestedAt;
  boolean forced;
  long outputAtStart;

  /** The output files already counted in {@link #outputAtStart}. */
  private final Set<Path> countedAtStart = new HashSet<>();

  /** Whether a preemption's checkpoint signal was sent (once per attempt). */
  boolean checkpointAsked;

  /** One process of the task. */
  static final class Proc {
    final int local;
    final LaunchSpec spec;

    /** The process this agent started; null for one adopted from a previous agent. */
    final Process process;

    /** The process, or its {@link Supervisor} when it has one: the root of its tree. */
    final ProcessHandle handle;

    /** Whether {@link #handle} is a supervisor, which is never killed. */
    final boolean supervised;

    final OutputSpool spool;
    Integer exit;
    String setup = "";
    List<ProcessHandle> tree = List.of();

    Proc(int local, LaunchSpec spec, Process process, OutputSpool spool) {
      this(
          local, spec, process, process.toHandle(), spec.owner() != null && !spec.spooled(), spool);
    }

    Proc(
        int local,
        LaunchSpec spec,
        Process process,
        ProcessHandle handle,
        boolean supervised,
        OutputSpool spool) {
      this.local = local;
      this.spec = spec;
      this.process = process;
      this.handle = handle;
      this.supervised = supervised;
      this.spool = spool;
    }
  }

  /** Why the controller stops a task, for its report. */
  static String killedMessage(io.kairos.protocol.agent.TaskKill kill) {
    return "killed by the controller" + (kill.reason() == null ? "" : ": " + kill.reason());
  }

  /**
   * Sends {@code kill}'s checkpoint signal, once, to the running (not stopping) job tasks of its
   * attempt: a preemption asks for a checkpoint before it stops them. A request sent is news
   * ({@code changed}): the agent heartbeats again at once, and so hears at once of the stop that
   * follows the checkpoint, rather than after the rest of its long-poll period.
   *
   * @return how many tasks were signalled now
   */
  static int askCheckpoint(
      Iterable<HeldTask> tasks,
      io.kairos.protocol.agent.TaskKill kill,
      ProcessLauncher launcher,
      Runnable changed) {
    int asked = 0;
    for (HeldTask task : tasks) {
      if (task.key.jobId() != kill.jobId()
          || task.key.attempt() != kill.attempt()
          || task.key.isStep()
          || task.status != TaskStatus.RUNNING
          || task.stopRequestedAt != null
          || task.checkpointAsked) {
        continue;
      }
      task.checkpointAsked = true;
      for (Proc p : task.procs) {
        if (p.exit == null) {
          launcher.signal(p.process.toHandle(), kill.checkpointSignal());
        }
      }
      org.slf4j.LoggerFactory.getLogger(TaskTable.class)
          .info(
              "{}: SIG{}: asked for a checkpoint ({})",
              task.key,
              kill.checkpointSignal(),
              kill.reason());
      asked++;
    }
    if (asked > 0) {
      changed.run();
    }
    return asked;
  }

  HeldTask(TaskKey key, TaskAssignment assignment, Duration agentGrace) {
    this.key = key;
    this.assignment = assignment;
    this.timeLimitSec = assignment.timeLimitSec();
    this.grace = assignment.graceSec() > 0 ? Duration.ofSeconds(assignment.graceSec()) : agentGrace;
  }

  /** Whether any process has started. */
  boolean hasProcesses() {
    return !procs.isEmpty();
  }

  /**
   * Adds what {@code spec}'s output files hold before its process starts to {@link #outputAtStart}
   * (each file once), so a task appending to a file is charged only what it writes. Called before
   * the start: measured after it, what a process writes at once was taken for the file's old
   * content, and a fast writer could pass the output limit unstopped.
   */
  void countOutputBefore(LaunchSpec spec) {
    if (spec.spooled()) {
      return;
    }
    for (Path file : new Path[] {spec.stdout(), spec.stderr()}) {
      if (file != null && countedAtStart.add(file)) {
        outputAtStart += size(file);
      }
    }
  }

  /** The processes started so far are running; called once every one has started. */
  void started(Instant at) {
    this.status = TaskStatus.RUNNING;
    this.startedAt = at;
    this.deadline = timeLimitSec > 0 ? at.plusSeconds(timeLimitSec) : null;
    if (deadline != null && assignment.warnSignal() != null && assignment.warnBeforeSec() > 0) {
      this.warnAt = deadline.minusSeconds(assignment.warnBeforeSec());
    }
  }

  /** Ends a task that never started: it could not, or should not. */
  void refused(ExitReason why, String text, Instant at) {
    this.status = TaskStatus.EXITED;
    this.exitCode = TaskTable.LAUNCH_FAILED_EXIT_CODE;
    this.reason = why;
    this.message = text;
    this.endedAt = at;
  }

  /** Whether every process started has exited. */
  boolean allExited() {
    for (Proc p : procs) {
      if (p.exit == null) {
        return false;
      }
    }
    return true;
  }

  /** Every process has exited: the task ends with their combined code. */
  void exited(Instant at) {
    this.status = TaskStatus.EXITED;
    this.exitCode = procs.size() == 1 ? procs.getFirst().exit : StepExit.of(exitCodes());
    this.endedAt = at;
  }

  /** A process ended without a recorded status ({@code why}, or null if it had one): killed. */
  void lostUnwatched(String why) {
    if (why != null && reason == null) {
      reason = ExitReason.KILLED;
      message = why;
    }
  }

  /** A process that failed before its program ran (its setup said why) fails the launch. */
  void failedSetup() {
    for (Proc p : procs) {
      if (!p.setup.isBlank() && p.exit != 0 && reason == null) {
        // It never ran: the owner could not enter its directory or open its output.
        reason = ExitReason.LAUNCH_FAILED;
        message = p.setup.strip();
      }
    }
  }

  /** Sends the job's warning signal once its time has come (Slurm's --signal). */
  void warnIfDue(Instant now, ProcessLauncher launcher) {
    if (warnAt == null || warned || now.isBefore(warnAt)) {
      return;
    }
    warned = true;
    LoggerFactory.getLogger(TaskTable.class)
        .info(
            "{}: SIG{} as warned, {} s before the time limit",
            key,
            assignment.warnSignal(),
            assignment.warnBeforeSec());
    for (Proc p : procs) {
      if (p.exit == null && p.handle != null) {
        launcher.signal(p.handle, assignment.warnSignal());
      }
    }
  }

  private List<Integer> exitCodes() {
    var codes = new ArrayList<Integer>(procs.size());
    for (Proc p : procs) {
      codes.add(p.exit);
    }
    return codes;
  }

  TaskReport report() {
    boolean exited = status == TaskStatus.EXITED;
    return new TaskReport(
        key.jobId(),
        key.attempt(),
        key.task(),
        status,
        exited ? exitCode : null,
        exited ? reason : null,
        exited ? message : null,
        startedAt == null ? null : startedAt.toEpochMilli(),
        endedAt == null ? null : endedAt.toEpochMilli(),
        key.stepOrNull(),
        exited && procs.size() > 1 ? exitCodes() : null);
  }

  /** What the task wrote: files it shares or appends to count from their size at its start. */
  long outputBytes() {
    return Math.max(0, outputSize() - outputAtStart);
  }

  private long outputSize() {
    long size = 0;
    Set<Path> files = new LinkedHashSet<>();
    for (Proc p : procs) {
      if (p.spool != null) {
        size += p.spool.bytes();
      } else {
        files.add(p.spec.stdout());
        files.add(p.spec.stderr());
      }
    }
    for (Path file : files) {
      size += size(file);
    }
    return size;
  }

  /**
   * A file's size, not following a symbolic link (whoever planted it); 0 when missing. Before a
   * task's first start its files are missing: {@link java.io.File#exists} says so without the
   * exception that reading a missing file's attributes builds.
   */
  private static long size(Path file) {
    if (!file.toFile().exists()) {
      return 0; // not created yet (or a link to nothing)
    }
    try {
      return Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
          .size();
    } catch (IOException e) {
      return 0; // not created yet
    }
  }
}
