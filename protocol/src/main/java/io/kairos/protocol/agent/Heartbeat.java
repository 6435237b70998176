package io.kairos.protocol.agent;

import java.util.List;
import java.util.Map;

/**
 * Sent every heartbeat interval, and at once when a task changes state.
 *
 * @param tasks every task the agent holds: running ones and exited ones not yet acknowledged
 * @param waitMs the controller may hold the reply this long when it has nothing to send (a long
 *     poll), so that a new assignment reaches the agent at once; 0 to reply immediately
 * @param problems the node's health: null or empty when healthy, else one line per problem ("GPU 3
 *     (GPU-...): uncorrectable ECC errors rose 0 -> 2"); the controller drains an unhealthy node
 *     and requeues its jobs. Problems of the node as a whole (the driver, nvidia-smi, the site's
 *     check program); an agent that tells GPUs apart sends those of single GPUs in {@code
 *     gpuProblems}
 * @param gpuProblems problems of single GPUs, by GPU index: null or empty when every GPU is
 *     healthy; the controller takes each such GPU out of service alone (the node serves its other
 *     GPUs) and requeues the jobs placed with it
 */
public record Heartbeat(
    String node,
    long epoch,
    List<TaskReport> tasks,
    long waitMs,
    List<String> problems,
    Map<Integer, String> gpuProblems) {

  /** A heartbeat from a healthy node. */
  public Heartbeat(String node, long epoch, List<TaskReport> tasks, long waitMs) {
    this(node, epoch, tasks, waitMs, null, null);
  }

  /** A heartbeat with problems of the node as a whole only. */
  public Heartbeat(
      String node, long epoch, List<TaskReport> tasks, long waitMs, List<String> problems) {
    this(node, epoch, tasks, waitMs, problems, null);
  }
}
