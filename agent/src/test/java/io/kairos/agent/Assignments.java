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
        a.gpus(),
        a.cpus(),
        a.memoryMb(),
        a.timeLimitSec());
  }

  static TaskAssignment withTimeLimit(TaskAssignment a, long timeLimitSec) {
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
        timeLimitSec);
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

  /** {@code a} with Slurm-style output and error paths (either may be null). */
  static TaskAssignment withOutput(TaskAssignment a, String output, String error) {
    return new TaskAssignment(
        a.jobId(), a.attempt(), a.task(), a.tasks(), a.nodes(), a.name(), a.user(), a.command(),
        a.env(), a.workdir(), a.gpus(), a.cpus(), a.memoryMb(), a.timeLimitSec(), a.masterAddr(),
        a.gpuUuids(), a.killSignal(), a.graceSec(), a.warnSignal(), a.warnBeforeSec(),
        a.checkpointDir(), a.barrier(), a.restarts(), output, error);
  }

  static TaskAssignment withName(TaskAssignment a, String name) {
    return new TaskAssignment(
        a.jobId(), a.attempt(), a.task(), a.tasks(), a.nodes(), name, a.user(), a.command(),
        a.env(), a.workdir(), a.gpus(), a.cpus(), a.memoryMb(), a.timeLimitSec(), a.masterAddr(),
        a.gpuUuids(), a.killSignal(), a.graceSec(), a.warnSignal(), a.warnBeforeSec(),
        a.checkpointDir(), a.barrier(), a.restarts(), a.output(), a.error());
  }
}
