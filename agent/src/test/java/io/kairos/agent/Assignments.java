package io.kairos.agent;

import io.kairos.protocol.agent.TaskAssignment;
import java.util.List;
import java.util.Map;

/** Test assignments: valid, boring defaults; a test states only what matters to it. */
final class Assignments {
  private Assignments() {}

  /** Task 0 of a one-task job, no GPUs, a one-hour limit, running {@code command}. */
  static TaskAssignment assignment(long jobId, String... command) {
    return new TaskAssignment(
        jobId,
        1,
        0,
        1,
        List.of("n1"),
        "job" + jobId,
        "alice",
        List.of(command),
        Map.of(),
        null,
        List.of(),
        1,
        0,
        3600);
  }

  /** A shell script, run by {@code /bin/sh -c}. */
  static TaskAssignment script(long jobId, String script) {
    return assignment(jobId, "/bin/sh", "-c", script);
  }

  static TaskAssignment withWorkdir(TaskAssignment a, String workdir) {
    return copy(
        a,
        workdir,
        a.timeLimitSec(),
        a.gpus(),
        a.gpuUuids(),
        a.killSignal(),
        a.graceSec(),
        a.warnSignal(),
        a.warnBeforeSec(),
        a.checkpointDir(),
        a.barrier(),
        a.restarts());
  }

  static TaskAssignment withTimeLimit(TaskAssignment a, long timeLimitSec) {
    return copy(
        a,
        a.workdir(),
        timeLimitSec,
        a.gpus(),
        a.gpuUuids(),
        a.killSignal(),
        a.graceSec(),
        a.warnSignal(),
        a.warnBeforeSec(),
        a.checkpointDir(),
        a.barrier(),
        a.restarts());
  }

  static TaskAssignment gang(
      long jobId,
      int attempt,
      int task,
      List<String> nodes,
      List<Integer> gpus,
      Map<String, String> env) {
    return new TaskAssignment(
        jobId,
        attempt,
        task,
        nodes.size(),
        nodes,
        "train",
        "bob",
        List.of("python", "train.py"),
        env,
        "",
        gpus,
        4,
        1024,
        60);
  }

  /** A task of a gang with a barrier: held READY until a {@code go} names it. */
  static TaskAssignment withBarrier(TaskAssignment a) {
    return copy(
        a,
        a.workdir(),
        a.timeLimitSec(),
        a.gpus(),
        a.gpuUuids(),
        a.killSignal(),
        a.graceSec(),
        a.warnSignal(),
        a.warnBeforeSec(),
        a.checkpointDir(),
        true,
        a.restarts());
  }

  /** A job that asks for {@code signal} first on a stop, and SIGKILL {@code graceSec} later. */
  static TaskAssignment withKillSignal(TaskAssignment a, String signal, long graceSec) {
    return copy(
        a,
        a.workdir(),
        a.timeLimitSec(),
        a.gpus(),
        a.gpuUuids(),
        signal,
        graceSec,
        a.warnSignal(),
        a.warnBeforeSec(),
        a.checkpointDir(),
        a.barrier(),
        a.restarts());
  }

  /** A job warned with {@code signal} {@code beforeSec} before its time limit (Slurm --signal). */
  static TaskAssignment withWarning(TaskAssignment a, String signal, long beforeSec) {
    return copy(
        a,
        a.workdir(),
        a.timeLimitSec(),
        a.gpus(),
        a.gpuUuids(),
        a.killSignal(),
        a.graceSec(),
        signal,
        beforeSec,
        a.checkpointDir(),
        a.barrier(),
        a.restarts());
  }

  /** GPUs by index and, when {@code uuids} is not null, by UUID. */
  static TaskAssignment withGpus(TaskAssignment a, List<Integer> gpus, List<String> uuids) {
    return copy(
        a,
        a.workdir(),
        a.timeLimitSec(),
        gpus,
        uuids,
        a.killSignal(),
        a.graceSec(),
        a.warnSignal(),
        a.warnBeforeSec(),
        a.checkpointDir(),
        a.barrier(),
        a.restarts());
  }

  /** An attempt after {@code restarts} requeues, with a checkpoint directory (or null). */
  static TaskAssignment withRestarts(TaskAssignment a, int restarts, String checkpointDir) {
    return copy(
        a,
        a.workdir(),
        a.timeLimitSec(),
        a.gpus(),
        a.gpuUuids(),
        a.killSignal(),
        a.graceSec(),
        a.warnSignal(),
        a.warnBeforeSec(),
        checkpointDir,
        a.barrier(),
        restarts);
  }

  /** {@code a} with the fields after it; the rest as in {@code a}. */
  private static TaskAssignment copy(
      TaskAssignment a,
      String workdir,
      long timeLimitSec,
      List<Integer> gpus,
      List<String> gpuUuids,
      String killSignal,
      long graceSec,
      String warnSignal,
      long warnBeforeSec,
      String checkpointDir,
      boolean barrier,
      int restarts) {
    return new TaskAssignment(
        a.jobId(),
        a.attempt(),
        a.task(),
        a.tasks(),
        a.nodes(),
        a.name(),
        a.user(),
        a.command(),
        a.env(),
        workdir,
        gpus,
        a.cpus(),
        a.memoryMb(),
        timeLimitSec,
        a.masterAddr(),
        gpuUuids,
        killSignal,
        graceSec,
        warnSignal,
        warnBeforeSec,
        checkpointDir,
        barrier,
        restarts);
  }

  /** {@code a} with Slurm-style output and error paths (either may be null). */
  static TaskAssignment withOutput(TaskAssignment a, String output, String error) {
    return new TaskAssignment(
        a.jobId(),
        a.attempt(),
        a.task(),
        a.tasks(),
        a.nodes(),
        a.name(),
        a.user(),
        a.command(),
        a.env(),
        a.workdir(),
        a.gpus(),
        a.cpus(),
        a.memoryMb(),
        a.timeLimitSec(),
        a.masterAddr(),
        a.gpuUuids(),
        a.killSignal(),
        a.graceSec(),
        a.warnSignal(),
        a.warnBeforeSec(),
        a.checkpointDir(),
        a.barrier(),
        a.restarts(),
        output,
        error);
  }

  /** The same assignment, run as Unix account {@code runAs}; output and error kept. */
  static TaskAssignment withRunAs(TaskAssignment a, String runAs) {
    return new TaskAssignment(
        a.jobId(),
        a.attempt(),
        a.task(),
        a.tasks(),
        a.nodes(),
        a.name(),
        a.user(),
        a.command(),
        a.env(),
        a.workdir(),
        a.gpus(),
        a.cpus(),
        a.memoryMb(),
        a.timeLimitSec(),
        a.masterAddr(),
        a.gpuUuids(),
        a.killSignal(),
        a.graceSec(),
        a.warnSignal(),
        a.warnBeforeSec(),
        a.checkpointDir(),
        a.barrier(),
        a.restarts(),
        a.output(),
        a.error(),
        runAs);
  }

  /** {@code a} as a batch job's batch step: it runs {@code script}'s text with its arguments. */
  static TaskAssignment asBatchStep(TaskAssignment a, String script) {
    return new TaskAssignment(
        a.jobId(),
        a.attempt(),
        a.task(),
        a.tasks(),
        a.nodes(),
        a.name(),
        a.user(),
        a.command(),
        a.env(),
        a.workdir(),
        a.gpus(),
        a.cpus(),
        a.memoryMb(),
        a.timeLimitSec(),
        a.masterAddr(),
        a.gpuUuids(),
        a.killSignal(),
        a.graceSec(),
        a.warnSignal(),
        a.warnBeforeSec(),
        a.checkpointDir(),
        a.barrier(),
        a.restarts(),
        a.output(),
        a.error(),
        a.runAs(),
        script,
        null);
  }

  static TaskAssignment withName(TaskAssignment a, String name) {
    return new TaskAssignment(
        a.jobId(),
        a.attempt(),
        a.task(),
        a.tasks(),
        a.nodes(),
        name,
        a.user(),
        a.command(),
        a.env(),
        a.workdir(),
        a.gpus(),
        a.cpus(),
        a.memoryMb(),
        a.timeLimitSec(),
        a.masterAddr(),
        a.gpuUuids(),
        a.killSignal(),
        a.graceSec(),
        a.warnSignal(),
        a.warnBeforeSec(),
        a.checkpointDir(),
        a.barrier(),
        a.restarts(),
        a.output(),
        a.error());
  }
}
