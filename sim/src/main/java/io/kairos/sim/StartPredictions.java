package io.kairos.sim;

import java.util.Arrays;
import java.util.function.IntPredicate;

/**
 * Measures the start times users are shown ({@code --predictions}): for every job still waiting
 * after the pass at its arrival, the start predicted then and at each whole hour of its wait; when
 * the job starts, the absolute error of each. The same moments are predicted by a naive baseline,
 * "now plus the mean wait of the jobs that started so far", so the report says whether the forecast
 * is worth reading.
 *
 * <p>State: per waiting job its predictions so far (forecast and baseline, a growable pair of
 * arrays), a heap of the next hour marks, the jobs that arrived in this instant, the errors of the
 * jobs that started, and the running sum of waits. A prediction at an hour mark between two events
 * is made on the state after the earlier event's pass (nothing changes in between), at the mark's
 * time. A job counts only its first wait: predictions stop at its first start.
 */
final class StartPredictions {
  static final long HOUR_SEC = 3_600;

  /** The predicted start of job {@code index} at {@code nowSec}, or -1 for none. */
  interface Forecast {
    long startOf(int index);
  }

  private final long[][] forecast;
  private final long[][] baseline;
  private final int[] count;
  private final boolean[] done;
  private final long[] arrivalSec;
  private final Errors forecastErrors = new Errors();
  private final Errors baselineErrors = new Errors();
  private long[] marks = new long[64]; // (markSec << 24) | index, a min-heap
  private int markCount;
  private int[] arrived = new int[16];
  private int arrivedCount;
  private double waitSum;
  private long started;

  StartPredictions(int jobs) {
    if (jobs >= 1 << 24) {
      throw new IllegalArgumentException("--predictions: at most 16,777,215 jobs, got " + jobs);
    }
    forecast = new long[jobs][];
    baseline = new long[jobs][];
    count = new int[jobs];
    done = new boolean[jobs];
    arrivalSec = new long[jobs];
  }

  /** Job {@code i} arrived at {@code t}; it is predicted after this instant's pass if it waits. */
  void arrived(int i, long t) {
    if (done[i] || forecast[i] != null) {
      return; // a requeued job: only its first wait counts
    }
    arrivalSec[i] = t;
    if (arrivedCount == arrived.length) {
      arrived = Arrays.copyOf(arrived, arrivedCount * 2);
    }
    arrived[arrivedCount++] = i;
  }

  /** Whether {@link #record} has something to predict at {@code t} or before {@code untilSec}. */
  boolean due(long untilSec, IntPredicate waiting) {
    for (int k = 0; k < arrivedCount; k++) {
      if (waiting.test(arrived[k])) {
        return true;
      }
    }
    return markCount > 0 && (marks[0] >>> 24) < untilSec;
  }

  /**
   * Predicts for the jobs that arrived at {@code t} and still wait, at {@code t}, and for the hour
   * marks in {@code [t, untilSec)}, at the mark; a forecast before the moment of prediction counts
   * as that moment (nobody is told a start in the past).
   */
  void record(long t, long untilSec, IntPredicate waiting, Forecast at) {
    for (int k = 0; k < arrivedCount; k++) {
      int i = arrived[k];
      if (!waiting.test(i)) {
        done[i] = true; // started at once: never shown a prediction
        continue;
      }
      forecast[i] = new long[4];
      baseline[i] = new long[4];
      add(i, t, at);
      push(t + HOUR_SEC, i);
    }
    arrivedCount = 0;
    while (markCount > 0 && (marks[0] >>> 24) < untilSec) {
      long mark = marks[0] >>> 24;
      int i = (int) (marks[0] & 0xFF_FFFF);
      pop();
      if (!done[i] && waiting.test(i)) {
        add(i, mark, at);
        push(mark + HOUR_SEC, i);
      }
    }
  }

  private void add(int i, long moment, Forecast at) {
    int c = count[i];
    if (c == forecast[i].length) {
      forecast[i] = Arrays.copyOf(forecast[i], 2 * c);
      baseline[i] = Arrays.copyOf(baseline[i], 2 * c);
    }
    long f = at.startOf(i);
    forecast[i][c] = f < 0 ? -1 : Math.max(f, moment);
    baseline[i][c] = moment + (started == 0 ? 0 : Math.round(waitSum / started));
    count[i] = c + 1;
  }

  /** Job {@code i} started at {@code s}: the errors of its predictions are known. */
  void started(int i, long s) {
    if (done[i]) {
      return;
    }
    done[i] = true;
    if (forecast[i] != null) {
      for (int c = 0; c < count[i]; c++) {
        if (forecast[i][c] >= 0) {
          forecastErrors.add(Math.abs(forecast[i][c] - s));
          baselineErrors.add(Math.abs(baseline[i][c] - s));
        }
      }
      forecast[i] = null;
      baseline[i] = null;
    }
    waitSum += s - arrivalSec[i];
    started++;
  }

  /** The figures; predictions of jobs that never started are left out. */
  PredictionReport report() {
    int[] f = forecastErrors.sorted();
    int[] b = baselineErrors.sorted();
    return new PredictionReport(
        f.length,
        quantile(f, 0.5),
        quantile(f, 0.9),
        share(f, 600),
        share(f, 3_600),
        quantile(b, 0.5),
        quantile(b, 0.9),
        share(b, 600),
        share(b, 3_600));
  }

  private static long quantile(int[] sorted, double q) {
    return sorted.length == 0 ? 0 : sorted[(int) Math.max(0, Math.ceil(q * sorted.length) - 1)];
  }

  private static double share(int[] sorted, int atMost) {
    if (sorted.length == 0) {
      return 0;
    }
    int lo = 0;
    int hi = sorted.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (sorted[mid] <= atMost) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return (double) lo / sorted.length;
  }

  private void push(long markSec, int i) {
    if (markCount == marks.length) {
      marks = Arrays.copyOf(marks, 2 * markCount);
    }
    long v = (markSec << 24) | i;
    int k = markCount++;
    while (k > 0) {
      int parent = (k - 1) >>> 1;
      if (marks[parent] <= v) {
        break;
      }
      marks[k] = marks[parent];
      k = parent;
    }
    marks[k] = v;
  }

  private void pop() {
    long last = marks[--markCount];
    int k = 0;
    while (true) {
      int child = 2 * k + 1;
      if (child >= markCount) {
        break;
      }
      if (child + 1 < markCount && marks[child + 1] < marks[child]) {
        child++;
      }
      if (marks[child] >= last) {
        break;
      }
      marks[k] = marks[child];
      k = child;
    }
    if (markCount > 0) {
      marks[k] = last;
    }
  }

  /** Absolute errors in seconds (capped at 2^31 - 1), kept to sort once at the end. */
  private static final class Errors {
    private int[] values = new int[1024];
    private int size;

    void add(long errorSec) {
      if (size == values.length) {
        values = Arrays.copyOf(values, 2 * size);
      }
      values[size++] = (int) Math.min(Integer.MAX_VALUE, errorSec);
    }

    int[] sorted() {
      int[] out = Arrays.copyOf(values, size);
      Arrays.sort(out);
      return out;
    }
  }
}
