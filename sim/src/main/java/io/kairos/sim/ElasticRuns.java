package io.kairos.sim;

/**
 * The progress of elastic jobs ({@link ElasticModel}): work in GPU-seconds, done at the job's
 * current size.
 *
 * <p>Per elastic job (by index in submit order; other jobs are never asked about): its current
 * GPUs, its work left (GPU-seconds, at the start of the current segment), when progress at the
 * current size starts ({@code progressFrom}: the start, or a resize plus the checkpoint cost), when
 * its GPU time was last counted, whether it runs, and its resizes and GPU time used and lost. A run
 * ends at {@code progressFrom + ceil(work / gpus)}.
 *
 * <p>A resize first saves the work done so far (the resize is a checkpoint), then restarts at the
 * new size after the checkpoint cost, which is GPU time lost to the resize. A stall cut short (by
 * another resize or a stop) counts only the part that happened.
 */
final class ElasticRuns {
  private final long checkpointCostSec;
  private final int[] gpus;
  private final long[] work;
  private final long[] progressFrom;
  private final long[] countedTo;
  private final int[] resizes;
  private final double[] usedGpuSec;
  private final double[] lostGpuSec;
  private int totalResizes;
  private int totalGrows;
  private double resizeLostGpuSec;

  ElasticRuns(int n, long checkpointCostSec) {
    this.checkpointCostSec = checkpointCostSec;
    gpus = new int[n];
    work = new long[n];
    progressFrom = new long[n];
    countedTo = new long[n];
    resizes = new int[n];
    usedGpuSec = new double[n];
    lostGpuSec = new double[n];
  }

  /** Job {@code i} has {@code gpuSeconds} of work before it first starts. */
  void init(int i, long gpuSeconds) {
    work[i] = gpuSeconds;
  }

  /** Job {@code i} starts a run at {@code t} on {@code size} GPUs: returns when the run ends. */
  long start(int i, long t, int size) {
    gpus[i] = size;
    progressFrom[i] = t;
    countedTo[i] = t;
    return end(i);
  }

  /** Job {@code i} is resized at {@code t} to {@code size} GPUs: returns its new end. */
  long resize(int i, long t, int size) {
    count(i, t);
    work[i] -= done(i, t);
    cutStall(i, t);
    resizes[i]++;
    totalResizes++;
    totalGrows += size > gpus[i] ? 1 : 0;
    double lost = (double) size * checkpointCostSec;
    lostGpuSec[i] += lost;
    resizeLostGpuSec += lost;
    gpus[i] = size;
    progressFrom[i] = t + checkpointCostSec;
    return end(i);
  }

  /** Job {@code i} finished at {@code t}. */
  void finished(int i, long t) {
    count(i, t);
    work[i] = 0;
  }

  /**
   * Job {@code i} stops at {@code s} and is requeued, keeping the work done until {@code keep} (its
   * last checkpoint, or the signal of a preemption by checkpoint); returns the GPU-seconds lost.
   */
  double requeue(int i, long s, long keep) {
    count(i, s);
    long kept = Math.min(keep, s);
    work[i] -= done(i, kept);
    double lost = (double) gpus[i] * Math.max(0, s - Math.max(kept, progressFrom[i]));
    cutStall(i, s);
    return lost;
  }

  /**
   * The last periodic checkpoint of job {@code i} before {@code s}, every {@code everySec} of
   * progress at its current size (0: never; then the work saved at its start or last resize).
   */
  long lastPeriodicCheckpoint(int i, long s, long everySec) {
    long from = progressFrom[i];
    if (everySec <= 0 || s <= from) {
      return from;
    }
    return from + (s - from) / everySec * everySec;
  }

  int gpus(int i) {
    return gpus[i];
  }

  /** Job {@code i}'s work left at the start of its current segment, in GPU-seconds. */
  long workLeft(int i) {
    return work[i];
  }

  int resizes(int i) {
    return resizes[i];
  }

  /** GPU-seconds job {@code i} held over all its runs. */
  double usedGpuSec(int i) {
    return usedGpuSec[i];
  }

  /** GPU-seconds job {@code i} lost to its resizes' checkpoints. */
  double lostGpuSec(int i) {
    return lostGpuSec[i];
  }

  int totalResizes() {
    return totalResizes;
  }

  int totalGrows() {
    return totalGrows;
  }

  double resizeLostGpuSec() {
    return resizeLostGpuSec;
  }

  private long end(int i) {
    return progressFrom[i] + Math.ceilDiv(work[i], gpus[i]);
  }

  /** Work done by {@code t} in the current segment (never more than the work left). */
  private long done(int i, long t) {
    return Math.min(work[i], (long) gpus[i] * Math.max(0, t - progressFrom[i]));
  }

  /** Counts the GPU time held until {@code t}. */
  private void count(int i, long t) {
    usedGpuSec[i] += (double) gpus[i] * (t - countedTo[i]);
    countedTo[i] = t;
  }

  /** A resize's stall still under way at {@code t} ends there: the rest of it never happens. */
  private void cutStall(int i, long t) {
    if (t < progressFrom[i]) {
      double refund = (double) gpus[i] * (progressFrom[i] - t);
      lostGpuSec[i] -= refund;
      resizeLostGpuSec -= refund;
    }
  }
}
