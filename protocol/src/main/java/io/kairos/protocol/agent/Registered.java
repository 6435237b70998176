package io.kairos.protocol.agent;

/**
 * The controller's answer to a registration.
 *
 * @param epoch the lease epoch; every heartbeat carries it, and a heartbeat with an older epoch is
 *     told to stop its tasks
 * @param heartbeatIntervalMs how often to heartbeat
 * @param leaseMs how long the lease lasts without a heartbeat; an agent that cannot renew it in
 *     that time kills its tasks (fencing)
 */
public record Registered(String node, long epoch, long heartbeatIntervalMs, long leaseMs) {}
