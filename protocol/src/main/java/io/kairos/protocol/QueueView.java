package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * A queue's load and, with a tenancy configuration, its quotas ({@code GET /api/v1/queues}).
 *
 * @param pending jobs waiting in it
 * @param running jobs running in it
 * @param gpusRunning GPUs its running jobs hold
 * @param gpusPending GPUs its pending jobs ask for
 * @param cohort the cohort it borrows from and lends to; absent for none (or without tenancy)
 * @param quotas per resource of its quota: nominal, limits, usage and what it borrows; absent
 *     without tenancy, or for a queue that is not configured (jobs submitted before)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record QueueView(
    String name,
    int pending,
    int running,
    int gpusRunning,
    int gpusPending,
    String cohort,
    List<Quota> quotas) {

  /** A queue's load without tenancy. */
  public QueueView(String name, int pending, int running, int gpusRunning, int gpusPending) {
    this(name, pending, running, gpusRunning, gpusPending, null, null);
  }

  /**
   * One resource of a queue's quota.
   *
   * @param resource {@code gpu:MODEL}, {@code cpu} (cores) or {@code memory} (bytes)
   * @param nominal what the queue is entitled to
   * @param borrowingLimit how much it may borrow above nominal; absent: no limit
   * @param lendingLimit how much of its unused quota it lends; absent: all
   * @param usage what its running jobs hold now
   * @param borrowed how much of {@code usage} is above nominal (borrowed from the cohort)
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Quota(
      String resource,
      long nominal,
      Long borrowingLimit,
      Long lendingLimit,
      long usage,
      long borrowed) {}
}
