package io.kairos.agent;

import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** One task the {@link TaskTable} holds, and its supervision state. Guarded by the table's lock. */
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
  LaunchSpec spec;
  Process process;
  Instant deadline;
  Instant startedAt;
  Instant endedAt;
  Integer exitCode;
  ExitReason reason;
  String message;
  Instant stopRequestedAt;
  List<ProcessHandle> tree = List.of();
  boolean forced;
  long outputAtStart;

  HeldTask(TaskKey key, TaskAssignment assignment, Duration agentGrace) {
    this.key = key;
    this.assignment = assignment;
    this.timeLimitSec = assignment.timeLimitSec();
    this.grace = assignment.graceSec() > 0 ? Duration.ofSeconds(assignment.graceSec()) : agentGrace;
  }

  void started(LaunchSpec spec, Process process, Instant at) {
    this.spec = spec;
    this.outputAtStart = spec.isRedirected() ? outputSize(spec) : 0;
    this.process = process;
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

  void exited(int exitCode, Instant at) {
    this.status = TaskStatus.EXITED;
    this.exitCode = exitCode;
    this.endedAt = at;
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
        endedAt == null ? null : endedAt.toEpochMilli());
  }

  /** What the task wrote: files it shares or appends to count from their size at its start. */
  long outputBytes() {
    return Math.max(0, outputSize(spec) - outputAtStart);
  }

  /** The output files' sizes, not following a symbolic link (whoever planted it). */
  private static long outputSize(LaunchSpec spec) {
    long size = 0;
    for (Path file :
        spec.stderr().equals(spec.stdout())
            ? List.of(spec.stdout())
            : List.of(spec.stdout(), spec.stderr())) {
      try {
        size +=
            Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).size();
      } catch (IOException e) {
        // not created yet
      }
    }
    return size;
  }
}
