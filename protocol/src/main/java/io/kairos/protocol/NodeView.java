package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * A node as the API shows it ({@code GET /api/v1/nodes}).
 *
 * @param reason why it is DRAINED or DOWN
 * @param jobs ids of the jobs running on it
 * @param lastHeartbeat ISO-8601 instant of the last heartbeat this replica saw, if any
 * @param liveness the leader's failure detector: ALIVE, SUSPECT (heartbeats late) or DOWN; absent
 *     on a follower
 * @param phi the detector's suspicion level (phi accrual: 8 means about a 1e-8 chance that a live
 *     agent would be this late); absent on a follower
 * @param runsOnlyAs the one Unix account whose jobs the node runs, when its agent is not root;
 *     absent when it runs every account's jobs
 * @param gpusOutOfService the node's GPUs out of service, by index, with why (its agent's health
 *     check found a problem with that GPU alone): no job is placed on them until an admin returns
 *     them ({@code kairos nodes resume NAME --gpu N}); absent when none
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record NodeView(
    String name,
    NodeState state,
    String reason,
    String gpuModel,
    int gpus,
    int gpusUsed,
    int cpus,
    long memoryBytes,
    String zone,
    String block,
    String rack,
    String address,
    long epoch,
    List<Long> jobs,
    String lastHeartbeat,
    String liveness,
    Double phi,
    int nvlinkDomainSize,
    List<Long> gpuJobs,
    String runsOnlyAs,
    Map<Integer, String> gpusOutOfService) {}
