package io.kairos.core.model;

import io.kairos.core.Checks;
import java.util.Objects;

/**
 * A submitted job: its identity, what it asked for, when it arrived, and from when it may start.
 *
 * <p>{@code eligibleSec} is Slurm's begin time ({@code --begin}, and the backoff of a requeued
 * job): no pass starts the job, reserves for it or lets it block others before then. Waiting is
 * counted from it, as Slurm counts age from the eligible time: order keys (arrival, expansion
 * factor) and the starvation guard read {@code eligibleSec}, not {@code submitSec}. It is never
 * before {@code submitSec}; a begin time in the past is simply the submission time.
 *
 * @param submitSec when the job arrived
 * @param eligibleSec the earliest time it may start; {@code submitSec} unless held
 */
public record Job(JobId id, JobSpec spec, long submitSec, long eligibleSec) {
  public Job {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(spec, "spec");
    Checks.nonNegative(submitSec, "submitSec");
    Checks.argument(
        eligibleSec >= submitSec,
        () -> "eligibleSec (" + eligibleSec + ") must not be before submitSec (" + submitSec + ")");
  }

  /** A job that may start as soon as it arrives. */
  public Job(JobId id, JobSpec spec, long submitSec) {
    this(id, spec, submitSec, submitSec);
  }

  /**
   * This job held until {@code eligibleSec} (a requeue backoff or a begin time); a time before the
   * submission means "eligible at submission".
   */
  public Job withEligibleSec(long eligibleSec) {
    return new Job(id, spec, submitSec, Math.max(eligibleSec, submitSec));
  }

  /** Whether the job may start at {@code nowSec}. */
  public boolean isEligibleAt(long nowSec) {
    return eligibleSec <= nowSec;
  }

  public int totalGpus() {
    return spec.gang().totalGpus();
  }

  public long timeLimitSec() {
    return spec.timeLimitSec();
  }
}
