package io.kairos.protocol.agent;

import java.util.List;
import java.util.Map;

/**
 * Launch one task of a job on this node.
 *
 * @param attempt the job's start count; (jobId, attempt, task) identifies a launch
 * @param task this task's rank in the gang (0-based)
 * @param tasks the gang's size (world size)
 * @param nodes the gang's nodes, in rank order (nodes[0] hosts rank 0)
 * @param gpus the node's GPU indexes this task may see
 * @param env the job's own environment (the agent adds CUDA_VISIBLE_DEVICES, KAIROS_* and the
 *     rendezvous variables)
 * @param workdir empty for the agent's per-job directory
 * @param timeLimitSec the agent stops the task after this long
 * @param masterAddr the host of rank 0's node (its agent's address), for {@code MASTER_ADDR};
 *     null when unknown
 */
public record TaskAssignment(
    long jobId,
    int attempt,
    int task,
    int tasks,
    List<String> nodes,
    String name,
    String user,
    List<String> command,
    Map<String, String> env,
    String workdir,
    List<Integer> gpus,
    int cpus,
    long memoryMb,
    long timeLimitSec,
    String masterAddr) {

  /** An assignment without a known rank-0 host. */
  public TaskAssignment(
      long jobId,
      int attempt,
      int task,
      int tasks,
      List<String> nodes,
      String name,
      String user,
      List<String> command,
      Map<String, String> env,
      String workdir,
      List<Integer> gpus,
      int cpus,
      long memoryMb,
      long timeLimitSec) {
    this(jobId, attempt, task, tasks, nodes, name, user, command, env, workdir, gpus, cpus,
        memoryMb, timeLimitSec, null);
  }
}
