package io.kairos.control.state;

import io.kairos.control.state.ControlCommand.AddToken;
import io.kairos.control.state.ControlCommand.CancelJob;
import io.kairos.control.state.ControlCommand.DrainNode;
import io.kairos.control.state.ControlCommand.RegisterNode;
import io.kairos.control.state.ControlCommand.ResumeNode;
import io.kairos.control.state.ControlCommand.Start;
import io.kairos.control.state.ControlCommand.StartJobs;
import io.kairos.control.state.ControlCommand.SubmitJobs;
import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.protocol.GpuDevice;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.agent.Registration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Builders for {@link ControlCommand}s in tests: each states only what matters to the test; the
 * defaults are valid and boring (H100 nodes, 64 CPUs, 512 GiB; one-process jobs of one CPU).
 */
final class StateFixtures {
  static final long T0 = 1_700_000_000_000L;

  private StateFixtures() {}

  static Registration node(String name, int gpus) {
    return node(name, gpus, "H100");
  }

  static Registration node(String name, int gpus, String model) {
    var list = new ArrayList<GpuDevice>();
    for (int i = 0; i < gpus; i++) {
      list.add(new GpuDevice(i, "GPU-" + name + "-" + i, model, 80L << 30));
    }
    return new Registration(
        name,
        "http://127.0.0.1:1",
        list,
        64,
        512L << 30,
        Map.of(),
        "z",
        "b",
        "r",
        Math.max(gpus, 1));
  }

  static RegisterNode register(String name, int gpus) {
    return new RegisterNode(T0, node(name, gpus));
  }

  /** A one-process job of {@code gpus} GPUs (one CPU when it asks for none). */
  static JobRequest job(int gpus) {
    return job("job", gpus, 0, "");
  }

  /** A gang of {@code gpus / perNode} processes, one per node. */
  static JobRequest gang(int gpus, int perNode) {
    return job("gang", gpus, perNode, "");
  }

  static JobRequest job(String name, int gpus, int perNode, String model) {
    return new JobRequest(
        name,
        List.of("sleep", "60"),
        Map.of(),
        "",
        gpus,
        perNode,
        gpus == 0 ? 1 : 0,
        0,
        3600,
        "default",
        0,
        model,
        "alice");
  }

  /**
   * A batch job (sbatch's script) over {@code nodes} nodes of {@code perNode} GPUs each: task 0
   * runs the script, the others hold the allocation.
   */
  static JobRequest batch(int nodes, int perNode) {
    JobRequest g = nodes > 1 ? gang(nodes * perNode, perNode) : job(perNode);
    return new JobRequest(
        "batch.sh",
        List.of("/home/alice/batch.sh"),
        g.env(),
        g.workdir(),
        g.gpus(),
        g.gpusPerNode(),
        g.cpus(),
        g.memoryMb(),
        g.timeLimitSec(),
        g.queue(),
        g.priority(),
        g.gpuModel(),
        g.user(),
        g.killSignal(),
        g.graceSec(),
        g.warnSignal(),
        g.warnBeforeSec(),
        g.checkpointDir(),
        g.maxRestarts(),
        g.excludeNodes(),
        g.array(),
        g.dependency(),
        g.output(),
        g.error(),
        g.account(),
        g.priorityClass(),
        g.runAs(),
        null,
        "#!/bin/sh\ntrue\n",
        0,
        null,
        0);
  }

  /** A one-process job of {@code gpus} GPUs that declares checkpoints ({@code policy}). */
  static JobRequest checkpointing(int gpus, CheckpointPolicy policy) {
    JobRequest g = job(gpus);
    return new JobRequest(
        "ckpt",
        g.command(),
        g.env(),
        g.workdir(),
        g.gpus(),
        g.gpusPerNode(),
        g.cpus(),
        g.memoryMb(),
        g.timeLimitSec(),
        g.queue(),
        g.priority(),
        g.gpuModel(),
        g.user(),
        g.killSignal(),
        g.graceSec(),
        g.warnSignal(),
        g.warnBeforeSec(),
        g.checkpointDir(),
        g.maxRestarts(),
        g.excludeNodes(),
        g.array(),
        g.dependency(),
        g.output(),
        g.error(),
        g.account(),
        g.priorityClass(),
        g.runAs(),
        null,
        null,
        0,
        policy,
        0);
  }

  /** A job whose failed task restarts the gang up to {@code maxRestarts} times. */
  static JobRequest restartable(int gpus, int perNode, int maxRestarts) {
    return new JobRequest(
        "restartable",
        List.of("sleep", "60"),
        Map.of(),
        "",
        gpus,
        perNode,
        gpus == 0 ? 1 : 0,
        0,
        3600,
        "default",
        0,
        "",
        "alice",
        "TERM",
        30,
        null,
        0,
        "",
        maxRestarts,
        List.of());
  }

  /** A one-process, one-GPU job array (Slurm's --array syntax). */
  static JobRequest array(String spec) {
    return job(1).withArray(JobArray.parse(spec));
  }

  /** A one-process, one-GPU job with a dependency (Slurm's --dependency syntax). */
  static JobRequest after(String dependency) {
    return job(1).withDependency(Dependency.parse(dependency));
  }

  static SubmitJobs submit(JobRequest... jobs) {
    return new SubmitJobs(T0, List.of(jobs));
  }

  static SubmitJobs submit(int... gpus) {
    return new SubmitJobs(T0, Arrays.stream(gpus).mapToObj(StateFixtures::job).toList());
  }

  static TaskPlacement task(int rank, String node, Integer... gpus) {
    return new TaskPlacement(rank, node, List.of(gpus));
  }

  /** Starts one job as one process on {@code node} with GPUs {@code gpus}. */
  static StartJobs start(long jobId, String node, Integer... gpus) {
    return startTasks(jobId, task(0, node, gpus));
  }

  static StartJobs startTasks(long jobId, TaskPlacement... tasks) {
    return new StartJobs(T0 + 1000, List.of(new Start(jobId, List.of(tasks))));
  }

  static TaskEnded ended(String node, long epoch, long jobId, int attempt, int task, int exit) {
    return new TaskEnded(T0 + 5000, node, epoch, jobId, attempt, task, exit, null, null);
  }

  static CancelJob cancel(long jobId) {
    return new CancelJob(T0 + 2000, jobId, "alice");
  }

  static DrainNode drain(String node) {
    return new DrainNode(T0, node, "maintenance");
  }

  static ResumeNode resume(String node) {
    return new ResumeNode(T0, node);
  }

  static AddToken token(String hash) {
    return new AddToken(T0, new TokenRecord(hash, "alice", TokenRecord.USER, T0));
  }
}
