package io.kairos.protocol;

/**
 * {@code POST /api/v1/replicas} (admins): the replica to add, as {@code --peers} names it.
 *
 * @param address {@code host:httpPort} (Raft on httpPort + 1000) or {@code host:httpPort:raftPort}
 */
public record ReplicaRequest(String address) {}
