package io.kairos.control.state;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.kairos.protocol.NodeState;
import io.kairos.protocol.agent.Registration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * One node in the replicated state: what its agent registered, its lease epoch and whether it takes
 * work. Written only by {@link ControlState}; public fields for the snapshot codec.
 */
public final class NodeRecord {
  public String name;
  public Registration registration;
  public NodeState state = NodeState.UP;
  public String reason;
  public long epoch;
  public long registeredMs;

  /**
   * What the node's agent proves itself with: {@code secret:} and the SHA-256 (hex) of its node
   * secret, or {@code key:} and the SHA-256 of its public key (X.509 SubjectPublicKeyInfo), which
   * its certificate carries. Null for a node registered before nodes had credentials, or reset by
   * an admin: then a join token may register the name again. Left out of snapshots while null.
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public String credential;

  /**
   * The node's GPUs out of service, by index, with why: its agent's health check found a problem
   * with that GPU alone. No job is placed on them until an admin returns them; the node serves its
   * other GPUs. Left out of snapshots while empty.
   */
  @JsonInclude(JsonInclude.Include.NON_EMPTY)
  public TreeMap<Integer, String> gpusOutOfService = new TreeMap<>();

  /** Recent job failures blamed on this node (epoch millis, job id), oldest first. */
  public List<long[]> failures = new ArrayList<>();

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
    c.credential = credential;
    c.failures = new ArrayList<>(failures);
    c.gpusOutOfService = new TreeMap<>(gpusOutOfService);
    return c;
  }
}
