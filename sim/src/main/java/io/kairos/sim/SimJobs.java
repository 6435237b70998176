package io.kairos.sim;

import java.util.Optional;

/**
 * Per-job results of a simulation, in trace order, for {@code --jobs-out}: parallel arrays indexed
 * by the job's position among the jobs that were simulated.
 *
 * @param elastic per-job sizes, resizes and GPU time, for a run under an enabled {@link
 *     ElasticModel}
 */
public record SimJobs(
    long[] traceIds,
    long[] submitSec,
    long[] startSec,
    long[] endSec,
    int[][] nodes,
    Optional<Elastic> elastic) {
  public SimJobs(long[] traceIds, long[] submitSec, long[] startSec, long[] endSec, int[][] nodes) {
    this(traceIds, submitSec, startSec, endSec, nodes, Optional.empty());
  }

  public int size() {
    return traceIds.length;
  }

  /**
   * Per job: its GPU range (equal for a fixed job), resizes, migrations (with {@code --migration}),
   * GPU time held over all runs, and GPU time lost to preemptions and resizes.
   */
  public record Elastic(
      int[] minGpus,
      int[] maxGpus,
      int[] resizes,
      int[] migrations,
      double[] gpuSeconds,
      double[] lostGpuSeconds) {}
}
