package io.kairos.sim;

/**
 * Per-job results of a simulation, in trace order, for {@code --jobs-out}: parallel arrays indexed
 * by the job's position among the jobs that were simulated.
 */
public record SimJobs(
    long[] traceIds, long[] submitSec, long[] startSec, long[] endSec, int[][] nodes) {
  public int size() {
    return traceIds.length;
  }
}
