package io.kairos.control.state;

import io.kairos.protocol.NodeState;
import io.kairos.protocol.agent.Registration;

/**
 * One node in the replicated state: what its agent registered, its lease epoch and whether it
 * takes work. Written only by {@link ControlState}; public fields for the snapshot codec.
 */
public final class NodeRecord {
  public String name;
  public Registration registration;
  public NodeState state = NodeState.UP;
  public String reason;
  public long epoch;
  public long registeredMs;

  public NodeRecord() {}

  NodeRecord(String name) {
    this.name = name;
  }

  /** A copy that later changes to this record do not touch. */
  public NodeRecord copy() {
    var c = new NodeRecord(name);
    c.registration = registration;
    c.state = state;
    c.reason = reason;
    c.epoch = epoch;
    c.registeredMs = registeredMs;
    return c;
  }
}
