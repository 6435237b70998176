package io.kairos.core.sched.order;

import io.kairos.core.Checks;

/**
 * Bounds the wait of the oldest job: once the longest-waiting job has waited at least {@code
 * minWaitSec} and either {@code factor} times its time limit or {@code maxWaitSec}, it is
 * considered first (within its priority), so it heads the queue and gets the reservation. One job
 * at a time: the rest keep the policy's order. {@code maxWaitSec} bounds the wait of jobs whose
 * limits are so long that {@code factor} times the limit would not. Part of a {@link
 * io.kairos.core.sched.Policy}; applied by {@link PassOrder#promoteOldest}.
 */
public record StarvationGuard(double factor, long minWaitSec, long maxWaitSec) {
  public StarvationGuard {
    Checks.argument(factor >= 0, () -> "starvation factor must be >= 0, got " + factor);
    Checks.nonNegative(minWaitSec, "minWaitSec");
    Checks.nonNegative(maxWaitSec, "maxWaitSec");
  }

  public boolean isStarving(long waitSec, long limitSec) {
    return waitSec >= minWaitSec && (waitSec >= factor * limitSec || waitSec >= maxWaitSec);
  }
}
