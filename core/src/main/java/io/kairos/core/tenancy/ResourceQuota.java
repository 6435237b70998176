package io.kairos.core.tenancy;

/**
 * A queue's quota of one resource, as in Kueue's ClusterQueue.
 *
 * <p>Values are checked by {@link TenancyConfig}, which knows the key path to name in its messages;
 * on its own a quota is just three numbers.
 *
 * @param nominal what the queue is entitled to; unused nominal quota may be lent to the cohort
 * @param borrowingLimit how much the queue may use above its nominal quota, borrowed from the
 *     cohort; {@code null}: as much as the cohort has unused. Needs a cohort
 * @param lendingLimit how much of its unused nominal quota the queue lends to the cohort; {@code
 *     null}: all of it. {@code nominal - lendingLimit} is kept for the queue alone, even when it is
 *     idle. Needs a cohort
 */
public record ResourceQuota(long nominal, Long borrowingLimit, Long lendingLimit) {
  /** A nominal quota with no limits on borrowing or lending. */
  public static ResourceQuota of(long nominal) {
    return new ResourceQuota(nominal, null, null);
  }

  public ResourceQuota withBorrowingLimit(long limit) {
    return new ResourceQuota(nominal, limit, lendingLimit);
  }

  public ResourceQuota withLendingLimit(long limit) {
    return new ResourceQuota(nominal, borrowingLimit, limit);
  }

  /** The part of the nominal quota never lent: {@code nominal - lendingLimit}, or 0. */
  public long guaranteed() {
    return lendingLimit == null ? 0 : Math.max(0, nominal - lendingLimit);
  }
}
