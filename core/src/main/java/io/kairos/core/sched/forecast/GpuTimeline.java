package io.kairos.core.sched.forecast;

import java.util.Arrays;

/**
 * Free GPUs of the whole cluster over time, as a step function, and conservative backfilling on it:
 * each job takes the earliest window, from now on, in which as many GPUs as it needs stay free for
 * its whole run, beside everything placed before it.
 *
 * <p>Design note. The step function is two parallel arrays, {@code timesSec[k]} (increasing) and
 * {@code free[k]}, the free GPUs during {@code [timesSec[k], timesSec[k + 1])}; the last step lasts
 * forever. It starts from the GPUs free now and the running jobs' expected ends. {@link #place}
 * scans from the first step for a window (a step with too few GPUs inside a candidate window moves
 * the candidate past it), then splits a step at the window's end and takes the GPUs from every step
 * inside. So a query costs O(steps), and the steps grow by at most one per placed job: placing
 * {@code m} jobs over {@code r} running ones costs O(m (r + m)). Counts only: which nodes the GPUs
 * are on, topology and CPUs are not modelled, so a gang that needs whole nodes may be predicted
 * earlier than it can start.
 */
public final class GpuTimeline {
  private long[] timesSec;
  private long[] free;
  private int size;

  /**
   * @param nowSec the first instant
   * @param freeNow GPUs free now
   * @param releases each running job's expected end (seconds) and GPUs, packed by {@link #release}
   */
  public GpuTimeline(long nowSec, long freeNow, long[] releases) {
    long[] sorted = releases.clone();
    Arrays.sort(sorted);
    timesSec = new long[sorted.length + 16];
    free = new long[timesSec.length];
    timesSec[0] = nowSec;
    free[0] = freeNow;
    size = 1;
    for (long r : sorted) {
      long t = Math.max(nowSec, endOf(r));
      long gpus = gpusOf(r);
      if (timesSec[size - 1] == t) {
        free[size - 1] += gpus;
      } else {
        timesSec[size] = t;
        free[size] = free[size - 1] + gpus;
        size++;
      }
    }
  }

  private static final int GPU_BITS = 22;
  private static final long GPU_MASK = (1L << GPU_BITS) - 1;

  /** A running job's expected end and GPUs, packed for the constructor (ends below 2^41 s). */
  public static long release(long endSec, int gpus) {
    return (endSec << GPU_BITS) | Math.min(gpus, GPU_MASK);
  }

  /** The end of a packed {@link #release}. */
  public static long endOf(long release) {
    return release >>> GPU_BITS;
  }

  /** The GPUs of a packed {@link #release}. */
  public static int gpusOf(long release) {
    return (int) (release & GPU_MASK);
  }

  /**
   * Places a job of {@code gpus} GPUs running {@code runSec} at the earliest window where they stay
   * free, and takes them there. Returns the window's start, or -1 when the GPUs are never free (the
   * job is larger than what is ever free); then nothing is taken.
   */
  public long place(int gpus, long runSec) {
    return place(gpus, runSec, timesSec[0]);
  }

  /**
   * As {@link #place(int, long)}, starting no earlier than {@code notBeforeSec}: for a policy that
   * does not backfill, where no job starts before the one ahead of it.
   */
  public long place(int gpus, long runSec, long notBeforeSec) {
    long run = Math.max(1, runSec);
    int first = notBeforeSec <= timesSec[0] ? 0 : stepAt(notBeforeSec);
    int k = window(gpus, run, first);
    if (k < 0) {
      return -1;
    }
    long start = timesSec[k];
    int m = stepAt(start + run);
    for (int q = k; q < m; q++) {
      free[q] -= gpus;
    }
    return start;
  }

  /** The index of the step that starts at {@code t}, splitting the step that holds it if needed. */
  private int stepAt(long t) {
    int m = 0;
    while (m < size && timesSec[m] < t) {
      m++;
    }
    if (m == size || timesSec[m] != t) {
      if (size == timesSec.length) {
        timesSec = Arrays.copyOf(timesSec, size * 2);
        free = Arrays.copyOf(free, size * 2);
      }
      System.arraycopy(timesSec, m, timesSec, m + 1, size - m);
      System.arraycopy(free, m, free, m + 1, size - m);
      timesSec[m] = t;
      free[m] = free[m - 1];
      size++;
    }
    return m;
  }

  /**
   * The first step, from step {@code from} on, from which {@code gpus} stay free for {@code
   * runSec}; -1 if none.
   */
  private int window(int gpus, long runSec, int from) {
    int k = from;
    while (true) {
      while (k < size && free[k] < gpus) {
        k++;
      }
      if (k == size) {
        return -1;
      }
      long end = timesSec[k] + runSec;
      int tooFew = -1;
      for (int m = k + 1; m < size && timesSec[m] < end; m++) {
        if (free[m] < gpus) {
          tooFew = m;
          break;
        }
      }
      if (tooFew < 0) {
        return k;
      }
      k = tooFew + 1;
    }
  }
}
