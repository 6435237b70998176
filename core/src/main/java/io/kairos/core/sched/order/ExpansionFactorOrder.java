package io.kairos.core.sched.order;

/**
 * Largest expected slowdown first, with a size discount: the job whose wait hurts most relative
 * to its length goes first, and every job's claim grows without bound while it waits, so none
 * starves.
 *
 * <p>The score of a job waiting {@code w} seconds with time limit {@code L} and {@code G} GPUs is
 * the expansion factor {@code (w + L) / L}, divided by {@code G^sizeExponent}. Short jobs reach a
 * high factor quickly (which cuts mean slowdown and wait), long and wide jobs climb slowly but
 * steadily (which bounds their wait). With exponent 0 this is the classic "XFactor" order.
 *
 * <p>Key: the negated score in fixed point (1e-6), so that lower keys go first.
 */
public record ExpansionFactorOrder(double sizeExponent, long minLimitSec) implements JobOrder {
  @Override
  public String name() {
    return "expansion-factor";
  }

  @Override
  public long key(long submitSec, long limitSec, int gpus, long nowSec) {
    double limit = Math.max(limitSec, minLimitSec);
    double wait = Math.max(0, nowSec - submitSec);
    double factor = (wait + limit) / limit;
    if (sizeExponent != 0) {
      factor /= Math.pow(Math.max(1, gpus), sizeExponent);
    }
    return -(long) Math.min(factor * 1e6, 9e17);
  }

  @Override
  public boolean isStatic() {
    return false;
  }
}
