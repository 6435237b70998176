package io.kairos.core.sched.order;

/**
 * Shortest job first with linear aging, as a static key: a job's key is its eligible time (its
 * submission unless held) plus {@code agingFactor} times its time limit (capped at {@code
 * maxLimitSec}).
 *
 * <p>Reading: a job of limit {@code L} is ordered as if it had arrived {@code agingFactor * L}
 * seconds later than it did. Short jobs pass long ones that arrived shortly before them; a job that
 * has waited {@code agingFactor * L} is ahead of every job that arrives after, so its wait before
 * it heads the queue is bounded, and the head's reservation then bounds the rest: no starvation.
 * The key does not depend on the time of the pass, so the order is static: the store can keep it,
 * and a simulator can skip passes that provably start nothing.
 *
 * <p>Example, factor 1: job A (submitted t=0, limit 10 h) and job B (submitted t=1 h, limit 1 h):
 * keys 10 h and 2 h, B goes first. Job C (submitted t=9.5 h, limit 1 h) has key 10.5 h: behind A.
 */
public record AgedShortestFirstOrder(double agingFactor, long maxLimitSec) implements JobOrder {
  @Override
  public String name() {
    return "aged-shortest-first";
  }

  @Override
  public long key(long eligibleSec, long limitSec, int gpus, long nowSec) {
    return eligibleSec + (long) (agingFactor * Math.min(limitSec, maxLimitSec));
  }
}
