package io.kairos.core.sched.order;

/**
 * Largest expansion factor first.
 *
 * <p>A job waiting {@code w} seconds (counted from its eligible time) with time limit {@code L} has
 * expansion factor {@code (w + L) / L}: its slowdown if it started now. Ordering by it, largest
 * first, lets short jobs go quickly (a short job's factor grows fast), which cuts mean wait and
 * slowdown, while every job's factor grows while it waits. Growth alone does not bound a long job's
 * wait under a sustained stream of short jobs; {@link io.kairos.core.sched.Policy}'s starvation
 * guard does.
 *
 * <p>Key (lower first): {@code -factor * 1000}, the factor in thousandths, capped.
 *
 * @param minLimitSec limits below this count as this (keeps 1-second jobs from dominating)
 */
public record ExpansionFactorOrder(long minLimitSec, boolean expectedRun) implements JobOrder {
  private static final double MAX_FACTOR_KEY = (double) (1L << 40);

  public ExpansionFactorOrder(long minLimitSec) {
    this(minLimitSec, false);
  }

  @Override
  public boolean usesExpectedRun() {
    return expectedRun;
  }

  @Override
  public String name() {
    return "expansion-factor";
  }

  @Override
  public long key(long eligibleSec, long limitSec, int gpus, long nowSec) {
    double limit = Math.max(limitSec, minLimitSec);
    double factor = (Math.max(0, nowSec - eligibleSec) + limit) / limit;
    return -(long) Math.min(factor * 1000, MAX_FACTOR_KEY);
  }

  @Override
  public boolean isStatic() {
    return false;
  }
}
