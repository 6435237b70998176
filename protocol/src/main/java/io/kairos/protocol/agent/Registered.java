package io.kairos.protocol.agent;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The controller's answer to a registration.
 *
 * @param epoch the lease epoch; every heartbeat carries it, and a heartbeat with an older epoch is
 *     told to stop its tasks
 * @param heartbeatIntervalMs how often to heartbeat
 * @param leaseMs how long the lease lasts without a heartbeat; an agent that cannot renew it in
 *     that time kills its tasks (fencing)
 * @param certificate for a node that registered a public key: its certificate from the cluster CA
 *     (PEM, the node's certificate first, then the CA's), naming the node, role node; absent for a
 *     node secret
 * @param ca with a certificate: the cluster CA certificates (PEM) the node's log server trusts for
 *     the controller replicas' client certificates
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Registered(
    String node,
    long epoch,
    long heartbeatIntervalMs,
    long leaseMs,
    String certificate,
    String ca) {

  /** A registration answered without a certificate (a node secret). */
  public Registered(String node, long epoch, long heartbeatIntervalMs, long leaseMs) {
    this(node, epoch, heartbeatIntervalMs, leaseMs, null, null);
  }
}
