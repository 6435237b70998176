package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Map;

/**
 * {@code GET /api/v1/limits}: what users may put into the controller, and what counts against it
 * now. Counts are in jobs as the limits count them: a job counts once, plus once per 4 KiB of its
 * command, env and paths; each element of an array counts.
 *
 * @param maxJobsPerUser a user's pending and running jobs, at most
 * @param maxLiveJobs all users' pending and running jobs, at most
 * @param maxEndedJobs ended jobs kept for {@code show} and {@code history}; beyond it the
 *     oldest-ended are forgotten
 * @param maxJobBytes one job's command, env and paths, in bytes, at most
 * @param submitsPerSec jobs a user may submit per second, sustained (per replica)
 * @param submitBurst jobs a user may submit at once
 * @param perUser overrides by user name
 * @param set false while the leader has not yet set limits (the values are then this replica's heap
 *     defaults, which apply to rate and size only)
 * @param liveJobs what counts against {@code maxLiveJobs} now
 * @param endedJobs what counts against {@code maxEndedJobs} now
 * @param heapMaxBytes the heap of the replica that answered
 * @param defaults the limits that heap gives (what the leader proposes when none are set)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record LimitsView(
    long maxJobsPerUser,
    long maxLiveJobs,
    long maxEndedJobs,
    long maxJobBytes,
    double submitsPerSec,
    long submitBurst,
    Map<String, UserLimits> perUser,
    boolean set,
    Long liveJobs,
    Long endedJobs,
    Long heapMaxBytes,
    LimitsUpdate defaults) {

  /**
   * One user's overrides; an absent field takes the cluster's value.
   *
   * @param maxJobs this user's pending and running jobs, at most
   * @param submitsPerSec this user's sustained submit rate, in jobs per second
   * @param submitBurst this user's burst, in jobs
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record UserLimits(Long maxJobs, Double submitsPerSec, Long submitBurst) {}
}
