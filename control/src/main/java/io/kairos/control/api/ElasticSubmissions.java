package io.kairos.control.api;

import io.kairos.protocol.JobSubmission;

/**
 * Validates an elastic submission's range ({@code gpus} to {@code maxGpus}, {@code gpusPerNode} on
 * each node); a bad field is a 400 that names it and the fix.
 */
final class ElasticSubmissions {
  private ElasticSubmissions() {}

  /**
   * The {@code maxGpus} the log records: 0 for a job of a fixed size (none given, or equal to
   * {@code gpus}).
   */
  static int maxGpus(JobSubmission s, int gpus, int perNode, String prefix) {
    if (s.maxGpus() == null) {
      return 0;
    }
    int max = s.maxGpus();
    String field = prefix + "maxGpus";
    Submissions.check(
        perNode > 0,
        field,
        "an elastic job (maxGpus) needs gpusPerNode: it grows and shrinks by whole nodes",
        "set gpusPerNode to the GPUs each node gives the job, e.g. gpus: 8, maxGpus: 32,"
            + " gpusPerNode: 8 for 1 to 4 nodes");
    Submissions.check(
        max >= gpus,
        field,
        "maxGpus (" + max + ") must not be below gpus (" + gpus + "), the job's minimum",
        "give the range as gpus (the minimum) up to maxGpus (the maximum), e.g. 8 and 32");
    Submissions.check(
        max <= Submissions.MAX_GPUS,
        field,
        "maxGpus must be at most " + Submissions.MAX_GPUS + ", got " + max,
        "ask for at most " + Submissions.MAX_GPUS);
    Submissions.check(
        max % perNode == 0,
        field,
        "maxGpus (" + max + ") must be a multiple of gpusPerNode (" + perNode + ")",
        "set maxGpus to the most nodes x gpusPerNode, e.g. " + (4 * perNode) + " for four nodes");
    if (max == gpus) {
      return 0;
    }
    Submissions.check(
        s.script() == null,
        field,
        "a batch script cannot be elastic: it runs once on the first node",
        "run the command on every node (leave script out), or leave maxGpus out");
    Submissions.check(
        s.ntasks() == null,
        prefix + "ntasks",
        "ntasks counts processes in all, which an elastic job's size changes",
        "use ntasksPerNode for several processes on each node, or leave maxGpus out");
    return max;
  }
}
