package io.kairos.sim;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.Placement;
import io.kairos.sim.trace.TraceJob;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Collects a run's {@link SimSeries} while the event loop runs, in bounded memory.
 *
 * <p>Design: a grid of {@link SimSeries#MAX_POINTS} buckets per series, starting at the first
 * submission. The first step is the submission span over half the buckets (so the tail after the
 * last arrival has room); when an interval reaches past the last bucket, every series doubles its
 * step by adding neighbouring buckets. Memory is {@code (3 + queues + quota queues) x 2,000}
 * doubles whatever the trace's length (at most 12 queues and 16 quota queues); each event costs
 * O(nodes of the job) plus the buckets its interval crosses. The step depends only on the trace and
 * on when the run ends, so it is deterministic; runs of one trace differ only by powers of two.
 *
 * <p>Busy and stranded GPUs are constant between two event instants, so the loop hands over each
 * interval once ({@link #interval}). Queue usage changes only at starts and finishes of that
 * queue's jobs, so each queue is integrated lazily, when it changes.
 */
final class SeriesRecorder {
  private static final int COVERED = 0;
  private static final int BUSY = 1;
  private static final int STRANDED = 2;
  private static final int FIRST_QUEUE = 3;

  private final Cluster cluster;
  private final long originSec;
  private long stepSec;
  private final double[][] sums;
  private final List<String> queues;
  private final int[] queueOfJob;
  private final long[] queueBusyGpus;
  private final long[] queueSinceSec;
  private final int[] freeOnNode;
  private long strandedGpus;
  private long lastSec;
  private final QuotaGroups quota;

  /** Row of the first quota queue; quota queue g is row {@code firstQuota + g}. */
  private final int firstQuota;

  /**
   * The tenancy queues charted against their quota ({@link SimSeries.QuotaUsage}): their names and
   * nominal GPUs, and each job's group (an index into {@code names}). Built by {@link
   * TenancyBook#quotaGroups}.
   */
  record QuotaGroups(List<String> names, long[] nominalGpus, int[] groupOfJob) {
    static final QuotaGroups NONE = new QuotaGroups(List.of(), new long[0], new int[0]);

    QuotaGroups {
      names = List.copyOf(names);
    }
  }

  SeriesRecorder(Cluster cluster, List<TraceJob> jobs) {
    this(cluster, jobs, QuotaGroups.NONE);
  }

  SeriesRecorder(Cluster cluster, List<TraceJob> jobs, QuotaGroups quota) {
    this.cluster = cluster;
    this.originSec = jobs.isEmpty() ? 0 : jobs.getFirst().submitSec();
    long span = jobs.isEmpty() ? 0 : jobs.getLast().submitSec() - originSec;
    this.stepSec = Math.max(1, ceilDiv(span, SimSeries.MAX_POINTS / 2));
    this.lastSec = originSec;
    // Queues by GPU time in the trace (largest first, then by name); the rest share one entry.
    var gpuSec = new HashMap<String, Double>();
    for (TraceJob j : jobs) {
      gpuSec.merge(j.queue(), (double) j.durationSec() * j.gpus(), Double::sum);
    }
    var byTime = new ArrayList<>(gpuSec.entrySet());
    byTime.sort(
        Comparator.comparing(Map.Entry<String, Double>::getValue)
            .reversed()
            .thenComparing(Map.Entry::getKey));
    var names = new ArrayList<String>();
    var index = new HashMap<String, Integer>();
    for (var e : byTime) {
      if (names.size() < SimSeries.MAX_QUEUES || byTime.size() == SimSeries.MAX_QUEUES + 1) {
        index.put(e.getKey(), names.size());
        names.add(e.getKey());
      } else {
        index.put(e.getKey(), SimSeries.MAX_QUEUES);
      }
    }
    if (index.size() > names.size()) {
      names.add(SimSeries.OTHER_QUEUES);
    }
    this.queues = List.copyOf(names);
    this.queueOfJob = new int[jobs.size()];
    for (int i = 0; i < jobs.size(); i++) {
      queueOfJob[i] = index.get(jobs.get(i).queue());
    }
    this.quota = quota;
    this.firstQuota = queues.size();
    int groups = queues.size() + quota.names().size();
    this.queueBusyGpus = new long[groups];
    this.queueSinceSec = new long[groups];
    Arrays.fill(queueSinceSec, originSec);
    this.sums = new double[FIRST_QUEUE + groups][SimSeries.MAX_POINTS];
    this.freeOnNode = new int[cluster.nodeCount()];
    for (int node = 0; node < freeOnNode.length; node++) {
      freeOnNode[node] = cluster.gpuCount(node);
    }
  }

  /** Job {@code job} starts at {@code t} on {@code placement}. */
  void started(int job, long t, Placement placement, int gpus) {
    changeQueue(queueOfJob[job], t, gpus);
    if (!quota.names().isEmpty()) {
      changeQueue(firstQuota + quota.groupOfJob()[job], t, gpus);
    }
    changeNodes(placement, -1);
  }

  /** Job {@code job}, which ran on {@code placement}, finishes at {@code t}. */
  void finished(int job, long t, Placement placement, int gpus) {
    changeQueue(queueOfJob[job], t, -gpus);
    if (!quota.names().isEmpty()) {
      changeQueue(firstQuota + quota.groupOfJob()[job], t, -gpus);
    }
    changeNodes(placement, +1);
  }

  /** The cluster held {@code busyGpus} busy GPUs from {@code fromSec} until {@code toSec}. */
  void interval(long fromSec, long toSec, long busyGpus) {
    add(COVERED, fromSec, toSec, 1);
    add(BUSY, fromSec, toSec, busyGpus);
    add(STRANDED, fromSec, toSec, strandedGpus);
    lastSec = Math.max(lastSec, toSec);
  }

  /** The series, once the run is over at {@code endSec}; {@code sortedWaits} ascending. */
  SimSeries finish(long endSec, long[] sortedWaits) {
    for (int q = 0; q < queueBusyGpus.length; q++) {
      changeQueue(q, endSec, 0);
    }
    lastSec = Math.max(lastSec, endSec);
    int used = (int) Math.max(1, ceilDiv(lastSec - originSec, stepSec));
    double[][] queueSums = new double[queues.size()][];
    for (int q = 0; q < queueSums.length; q++) {
      queueSums[q] = Arrays.copyOf(sums[FIRST_QUEUE + q], used);
    }
    double[][] quotaSums = new double[quota.names().size()][];
    for (int g = 0; g < quotaSums.length; g++) {
      quotaSums[g] = Arrays.copyOf(sums[FIRST_QUEUE + firstQuota + g], used);
    }
    long[] cdfSec = new long[Math.min(SimSeries.MAX_CDF_POINTS, sortedWaits.length)];
    double[] cdfFraction = new double[cdfSec.length];
    int points = cdf(sortedWaits, cdfSec, cdfFraction);
    return new SimSeries(
        originSec,
        stepSec,
        cluster.totalGpus(),
        Arrays.copyOf(sums[COVERED], used),
        Arrays.copyOf(sums[BUSY], used),
        Arrays.copyOf(sums[STRANDED], used),
        queues,
        queueSums,
        Arrays.copyOf(cdfSec, points),
        Arrays.copyOf(cdfFraction, points),
        quota.names().isEmpty()
            ? SimSeries.QuotaUsage.NONE
            : new SimSeries.QuotaUsage(quota.names(), quota.nominalGpus(), quotaSums));
  }

  /**
   * Fills the CDF at evenly spaced ranks: point {@code k} is the wait at rank {@code k/K} and the
   * exact fraction of jobs that waited no longer. Equal waits collapse into one point.
   */
  private static int cdf(long[] sorted, long[] sec, double[] fraction) {
    int n = sorted.length;
    int points = 0;
    for (int k = 1; k <= sec.length; k++) {
      int rank = (int) Math.ceil((double) k * n / sec.length);
      long wait = sorted[rank - 1];
      if (points > 0 && sec[points - 1] == wait) {
        continue;
      }
      sec[points] = wait;
      fraction[points] = (double) upperBound(sorted, wait) / n;
      points++;
    }
    return points;
  }

  /** Number of elements of {@code sorted} that are at most {@code value}. */
  private static int upperBound(long[] sorted, long value) {
    int lo = 0;
    int hi = sorted.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (sorted[mid] <= value) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  private void changeQueue(int q, long t, long deltaGpus) {
    add(FIRST_QUEUE + q, queueSinceSec[q], t, queueBusyGpus[q]);
    queueSinceSec[q] = t;
    queueBusyGpus[q] += deltaGpus;
  }

  /** Frees ({@code sign} +1) or takes (-1) the placement's GPUs, keeping the stranded count. */
  private void changeNodes(Placement placement, int sign) {
    for (int i = 0; i < placement.nodeCount(); i++) {
      int node = placement.node(i);
      strandedGpus -= stranded(node);
      freeOnNode[node] += sign * Long.bitCount(placement.gpuMask(i));
      strandedGpus += stranded(node);
    }
  }

  private long stranded(int node) {
    int free = freeOnNode[node];
    return free > 0 && free < cluster.gpuCount(node) ? free : 0;
  }

  /** Adds {@code value x overlap} to every bucket that {@code [fromSec, toSec)} overlaps. */
  private void add(int row, long fromSec, long toSec, double value) {
    if (toSec <= fromSec) {
      return;
    }
    while (toSec - originSec > stepSec * SimSeries.MAX_POINTS) {
      coarsen();
    }
    if (value == 0) {
      return;
    }
    long a = fromSec - originSec;
    long b = toSec - originSec;
    double[] values = sums[row];
    for (long k = a / stepSec; k * stepSec < b; k++) {
      long overlap = Math.min(b, (k + 1) * stepSec) - Math.max(a, k * stepSec);
      values[(int) k] += value * overlap;
    }
  }

  /** Doubles the step: bucket k becomes the sum of buckets 2k and 2k + 1. */
  private void coarsen() {
    for (double[] row : sums) {
      for (int k = 0; k < row.length / 2; k++) {
        row[k] = row[2 * k] + row[2 * k + 1];
      }
      Arrays.fill(row, row.length / 2, row.length, 0);
    }
    stepSec *= 2;
  }

  private static long ceilDiv(long a, long b) {
    return (a + b - 1) / b;
  }
}
