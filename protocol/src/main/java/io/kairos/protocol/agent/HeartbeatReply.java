package io.kairos.protocol.agent;

import java.util.List;

/**
 * The controller's reply to a heartbeat.
 *
 * @param fenced true when the heartbeat's epoch is stale (or the node is unknown): the agent must
 *     kill every task and register again
 * @param launch tasks to start (ignored when already held)
 * @param kill tasks to stop
 * @param forget exited tasks whose end the controller has recorded
 * @param go READY tasks whose whole gang is READY: start their processes now
 */
public record HeartbeatReply(
    long epoch,
    boolean fenced,
    List<TaskAssignment> launch,
    List<TaskKill> kill,
    List<TaskRef> forget,
    List<TaskRef> go) {

  /** A reply without barrier releases. */
  public HeartbeatReply(
      long epoch,
      boolean fenced,
      List<TaskAssignment> launch,
      List<TaskKill> kill,
      List<TaskRef> forget) {
    this(epoch, fenced, launch, kill, forget, List.of());
  }
}
