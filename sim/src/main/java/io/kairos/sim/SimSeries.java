package io.kairos.sim;

import java.util.Arrays;
import java.util.List;

/**
 * Time series of one simulation run, for charts ({@code --report}, {@code --charts}), sampled on a
 * fixed grid of at most {@link #MAX_POINTS} buckets.
 *
 * <p>Bucket {@code k} covers {@code [originSec + k * stepSec, originSec + (k + 1) * stepSec)}.
 * Every array holds <em>integrals</em> over its bucket (GPU-seconds, seconds), not samples, so two
 * adjacent buckets merge exactly by adding them ({@link #coarsenTo}), and a ratio of two integrals
 * is the time-weighted mean over the bucket: no event between grid points is lost.
 *
 * @param originSec the first submission of the simulated jobs
 * @param stepSec bucket width in seconds (the trace span over 1,000, doubled as needed)
 * @param clusterGpus GPUs in the cluster
 * @param coveredSec seconds of simulated time in each bucket (the last one may be partial)
 * @param busyGpuSec GPU-seconds of running jobs in each bucket
 * @param strandedGpuSec free GPU-seconds on partly busy nodes (some but not all of the node's GPUs
 *     free) in each bucket: free capacity a whole-node job cannot use
 * @param queues queue names, in the order of {@code queueGpuSec}; the largest queues by GPU time in
 *     the trace, the rest gathered in a last entry {@value #OTHER_QUEUES}
 * @param queueGpuSec GPU-seconds of each queue's running jobs in each bucket
 * @param waitCdfSec wait times (s), increasing, at which the CDF is drawn (at most {@link
 *     #MAX_CDF_POINTS})
 * @param waitCdfFraction the fraction of jobs that waited at most {@code waitCdfSec[i]}
 * @param quota under a tenancy file, each charted queue's GPUs held on the same grid, with its
 *     nominal quota; {@link QuotaUsage#NONE} without one
 */
public record SimSeries(
    long originSec,
    long stepSec,
    long clusterGpus,
    double[] coveredSec,
    double[] busyGpuSec,
    double[] strandedGpuSec,
    List<String> queues,
    double[][] queueGpuSec,
    long[] waitCdfSec,
    double[] waitCdfFraction,
    QuotaUsage quota) {
  /** Most buckets a series has. */
  public static final int MAX_POINTS = 2000;

  /** Most points of the wait CDF. */
  public static final int MAX_CDF_POINTS = 400;

  /** Queues shown by name; the rest are summed into {@value #OTHER_QUEUES}. */
  public static final int MAX_QUEUES = 11;

  /** The name of the entry that gathers the smaller queues. */
  public static final String OTHER_QUEUES = "(other queues)";

  /**
   * Under a tenancy file: the GPUs held by each queue of the file, for the usage-against-quota
   * charts. Queues are those with jobs in the trace or a nominal GPU quota, largest GPU time in the
   * trace first (then by name); past {@link #MAX_QUOTA_QUEUES} the rest are summed into {@value
   * #OTHER_QUEUES}, whose nominal is the sum of theirs.
   *
   * @param queues queue names, in the order of {@code gpuSec}
   * @param nominalGpus each queue's nominal GPU quota (all GPU models)
   * @param gpuSec GPU-seconds of each queue's running jobs in each bucket
   */
  public record QuotaUsage(List<String> queues, long[] nominalGpus, double[][] gpuSec) {
    /** No tenancy file. */
    public static final QuotaUsage NONE = new QuotaUsage(List.of(), new long[0], new double[0][]);

    public QuotaUsage {
      queues = List.copyOf(queues);
      if (nominalGpus.length != queues.size() || gpuSec.length != queues.size()) {
        throw new IllegalArgumentException(
            "quota usage: "
                + queues.size()
                + " queues, "
                + nominalGpus.length
                + " nominals, "
                + gpuSec.length
                + " series");
      }
    }

    public boolean isEmpty() {
      return queues.isEmpty();
    }

    QuotaUsage merged(int factor) {
      double[][] sums = new double[gpuSec.length][];
      for (int q = 0; q < sums.length; q++) {
        sums[q] = merge(gpuSec[q], factor);
      }
      return new QuotaUsage(queues, nominalGpus, sums);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof QuotaUsage u
          && queues.equals(u.queues)
          && Arrays.equals(nominalGpus, u.nominalGpus)
          && Arrays.deepEquals(gpuSec, u.gpuSec);
    }

    @Override
    public int hashCode() {
      return queues.hashCode() * 31 + Arrays.hashCode(nominalGpus);
    }

    @Override
    public String toString() {
      return "QuotaUsage" + queues;
    }
  }

  /** Most tenancy queues charted by name against their quota; the rest are summed. */
  public static final int MAX_QUOTA_QUEUES = 15;

  /** The series without quota usage (a run without a tenancy file). */
  public SimSeries(
      long originSec,
      long stepSec,
      long clusterGpus,
      double[] coveredSec,
      double[] busyGpuSec,
      double[] strandedGpuSec,
      List<String> queues,
      double[][] queueGpuSec,
      long[] waitCdfSec,
      double[] waitCdfFraction) {
    this(
        originSec,
        stepSec,
        clusterGpus,
        coveredSec,
        busyGpuSec,
        strandedGpuSec,
        queues,
        queueGpuSec,
        waitCdfSec,
        waitCdfFraction,
        QuotaUsage.NONE);
  }

  public SimSeries {
    queues = List.copyOf(queues);
    java.util.Objects.requireNonNull(quota, "quota");
    if (stepSec <= 0
        || coveredSec.length > MAX_POINTS
        || busyGpuSec.length != coveredSec.length
        || strandedGpuSec.length != coveredSec.length
        || queueGpuSec.length != queues.size()
        || waitCdfSec.length != waitCdfFraction.length) {
      throw new IllegalArgumentException(
          "series: step "
              + stepSec
              + " s, "
              + coveredSec.length
              + " buckets, "
              + queueGpuSec.length
              + " queue series for "
              + queues.size()
              + " queues");
    }
    for (double[] q : queueGpuSec) {
      if (q.length != coveredSec.length) {
        throw new IllegalArgumentException("series: queue series of " + q.length + " buckets");
      }
    }
    for (double[] q : quota.gpuSec()) {
      if (q.length != coveredSec.length) {
        throw new IllegalArgumentException("series: quota series of " + q.length + " buckets");
      }
    }
  }

  /** Buckets in each series. */
  public int points() {
    return coveredSec.length;
  }

  /** Start of bucket {@code k}, seconds since {@link #originSec}. */
  public long bucketStartSec(int k) {
    return k * stepSec;
  }

  /** Busy GPUs over cluster GPUs, time-weighted over bucket {@code k}. */
  public double utilization(int k) {
    return ratio(busyGpuSec[k], clusterGpus * coveredSec[k]);
  }

  /** Queue {@code q}'s busy GPUs over cluster GPUs, time-weighted over bucket {@code k}. */
  public double queueShare(int q, int k) {
    return ratio(queueGpuSec[q][k], clusterGpus * coveredSec[k]);
  }

  /** Quota queue {@code q}'s GPUs held, time-weighted over bucket {@code k} (0 when empty). */
  public double quotaGpus(int q, int k) {
    return coveredSec[k] <= 1e-9 ? 0 : Math.max(0, quota.gpuSec()[q][k] / coveredSec[k]);
  }

  /**
   * Stranded free GPUs over all free GPUs, time-weighted over bucket {@code k}; 0 when no GPU was
   * free.
   */
  public double fragmentation(int k) {
    return ratio(strandedGpuSec[k], clusterGpus * coveredSec[k] - busyGpuSec[k]);
  }

  private static double ratio(double part, double whole) {
    return whole <= 1e-9 ? 0 : Math.min(1, Math.max(0, part / whole));
  }

  /**
   * The same series on buckets of {@code step} seconds, which must be this series' step times a
   * power of two (runs of one trace differ only in how often they doubled). Exact: integrals add.
   */
  public SimSeries coarsenTo(long step) {
    if (step == stepSec) {
      return this;
    }
    long factor = step / stepSec;
    if (step % stepSec != 0 || Long.bitCount(factor) != 1) {
      throw new IllegalArgumentException(
          "series: cannot coarsen buckets of " + stepSec + " s to " + step + " s");
    }
    double[][] queueSums = new double[queueGpuSec.length][];
    for (int q = 0; q < queueSums.length; q++) {
      queueSums[q] = merge(queueGpuSec[q], (int) factor);
    }
    return new SimSeries(
        originSec,
        step,
        clusterGpus,
        merge(coveredSec, (int) factor),
        merge(busyGpuSec, (int) factor),
        merge(strandedGpuSec, (int) factor),
        queues,
        queueSums,
        waitCdfSec,
        waitCdfFraction,
        quota.merged((int) factor));
  }

  private static double[] merge(double[] sums, int factor) {
    double[] out = new double[(sums.length + factor - 1) / factor];
    for (int k = 0; k < sums.length; k++) {
      out[k / factor] += sums[k];
    }
    return out;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SimSeries s
        && originSec == s.originSec
        && stepSec == s.stepSec
        && clusterGpus == s.clusterGpus
        && Arrays.equals(coveredSec, s.coveredSec)
        && Arrays.equals(busyGpuSec, s.busyGpuSec)
        && Arrays.equals(strandedGpuSec, s.strandedGpuSec)
        && queues.equals(s.queues)
        && Arrays.deepEquals(queueGpuSec, s.queueGpuSec)
        && Arrays.equals(waitCdfSec, s.waitCdfSec)
        && Arrays.equals(waitCdfFraction, s.waitCdfFraction)
        && quota.equals(s.quota);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(originSec) * 31 + Arrays.hashCode(busyGpuSec);
  }

  @Override
  public String toString() {
    return "SimSeries[step " + stepSec + " s, " + points() + " points, queues " + queues + "]";
  }
}
