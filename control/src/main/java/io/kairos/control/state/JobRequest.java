package io.kairos.control.state;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A validated submission with every default applied: what the log records for a new job.
 *
 * @param gpusPerNode 0 when the job runs as one process on one node
 * @param memoryMb per process; 0 = not limited
 */
public record JobRequest(
    String name,
    List<String> command,
    Map<String, String> env,
    String workdir,
    int gpus,
    int gpusPerNode,
    int cpus,
    long memoryMb,
    long timeLimitSec,
    String queue,
    int priority,
    String gpuModel,
    String user) {
  public JobRequest {
    Objects.requireNonNull(name, "name");
    command = List.copyOf(command);
    env = Map.copyOf(env);
    Objects.requireNonNull(workdir, "workdir");
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(gpuModel, "gpuModel");
    Objects.requireNonNull(user, "user");
  }

  /** How many processes the gang starts: one per node. */
  public int tasks() {
    return gpusPerNode == 0 ? 1 : gpus / gpusPerNode;
  }

  /** GPUs each process sees. */
  public int gpusPerTask() {
    return gpusPerNode == 0 ? gpus : gpusPerNode;
  }
}
