package io.kairos.cli;

import java.util.Arrays;

/** A growing list of {@code long} samples that many threads may add to (synchronized). */
final class Samples {
  private long[] values = new long[1024];
  private int size;

  synchronized void add(long value) {
    if (size == values.length) {
      values = Arrays.copyOf(values, size * 2);
    }
    values[size++] = value;
  }

  synchronized int size() {
    return size;
  }

  synchronized Percentiles percentiles() {
    return Percentiles.of(Arrays.copyOf(values, size));
  }
}
