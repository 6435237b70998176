package io.kairos.cli;

import java.util.Arrays;

/**
 * Percentiles of a set of samples by the nearest-rank method: the p-th percentile of n sorted
 * values is the value at rank {@code ceil(p / 100 * n)} (1-based), so it is always one of the
 * samples. Exact, since benchmarks here keep every sample (a million longs is 8 MB). Immutable.
 */
final class Percentiles {
  private final long[] sorted;

  private Percentiles(long[] sorted) {
    this.sorted = sorted;
  }

  /** Copies and sorts {@code values}. */
  static Percentiles of(long... values) {
    long[] copy = values.clone();
    Arrays.sort(copy);
    return new Percentiles(copy);
  }

  int count() {
    return sorted.length;
  }

  /** The {@code percent}-th percentile (0 < percent <= 100); 0 when there are no samples. */
  long value(double percent) {
    if (!(percent > 0 && percent <= 100)) {
      throw new IllegalArgumentException("percentile must be in (0, 100], got " + percent);
    }
    if (sorted.length == 0) {
      return 0;
    }
    // The epsilon keeps binary rounding from pushing an exact rank up by one (99.9% of 1000).
    int rank = (int) Math.ceil(percent / 100.0 * sorted.length - 1e-9);
    return sorted[Math.clamp(rank, 1, sorted.length) - 1];
  }

  /** The arithmetic mean; 0 when there are no samples. */
  long mean() {
    if (sorted.length == 0) {
      return 0;
    }
    double sum = 0;
    for (long v : sorted) {
      sum += v;
    }
    return Math.round(sum / sorted.length);
  }

  long min() {
    return sorted.length == 0 ? 0 : sorted[0];
  }

  long max() {
    return sorted.length == 0 ? 0 : sorted[sorted.length - 1];
  }
}
