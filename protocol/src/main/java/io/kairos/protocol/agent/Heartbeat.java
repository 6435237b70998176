package io.kairos.protocol.agent;

import java.util.List;

/**
 * Sent every heartbeat interval, and at once when a task changes state.
 *
 * @param tasks every task the agent holds: running ones and exited ones not yet acknowledged
 * @param waitMs the controller may hold the reply this long when it has nothing to send (a long
 *     poll), so that a new assignment reaches the agent at once; 0 to reply immediately
 * @param problems the node's health: null or empty when healthy, else one line per problem ("GPU 3
 *     (GPU-...): uncorrectable ECC errors rose 0 -> 2"); the controller drains an unhealthy node
 *     and requeues its jobs
 */
public record Heartbeat(
    String node, long epoch, List<TaskReport> tasks, long waitMs, List<String> problems) {

  /** A heartbeat from a healthy node. */
  public Heartbeat(String node, long epoch, List<TaskReport> tasks, long waitMs) {
    this(node, epoch, tasks, waitMs, null);
  }
}
