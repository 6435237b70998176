package io.kairos.protocol.agent;

import com.fasterxml.jackson.annotation.JsonInclude;
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
 * @param leaseMs the lease this reply renews, from now on the agent's (a controller restarted with
 *     another {@code --lease} hands it on this way); null from controllers that do not say, whose
 *     agents keep the lease their registration gave
 */
public record HeartbeatReply(
    long epoch,
    boolean fenced,
    List<TaskAssignment> launch,
    List<TaskKill> kill,
    List<TaskRef> forget,
    List<TaskRef> go,
    @JsonInclude(JsonInclude.Include.NON_NULL) Long leaseMs) {

  /** A reply that leaves the agent's lease as it is. */
  public HeartbeatReply(
      long epoch,
      boolean fenced,
      List<TaskAssignment> launch,
      List<TaskKill> kill,
      List<TaskRef> forget,
      List<TaskRef> go) {
    this(epoch, fenced, launch, kill, forget, go, null);
  }

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
