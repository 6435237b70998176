package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * {@code GET /api/v1/cluster}: the replica answering, who leads, and the group.
 *
 * @param leader the HTTP base URL of the leader, if one is known
 * @param peers the HTTP base URLs of all replicas
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ClusterInfo(
    String self,
    String leader,
    boolean isLeader,
    List<String> peers,
    String policy,
    long appliedIndex) {}
