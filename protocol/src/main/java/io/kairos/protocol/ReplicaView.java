package io.kairos.protocol;

/**
 * One voting member of the controller group ({@code GET /api/v1/replicas}, admins).
 *
 * @param id its Raft id ({@code host_httpPort})
 * @param url its API
 * @param raftAddress where its Raft transport listens
 * @param leader whether it leads
 * @param matchIndex the last log index the leader knows it holds; -1 when the replica that answered
 *     is not the leader (only the leader knows)
 * @param lastContactMs since the leader last heard from it; -1 as above
 */
public record ReplicaView(
    String id,
    String url,
    String raftAddress,
    boolean leader,
    long matchIndex,
    long lastContactMs) {}
