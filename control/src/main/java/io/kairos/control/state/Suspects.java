package io.kairos.control.state;

import io.kairos.protocol.NodeState;
import java.util.TreeSet;

/**
 * The evidence against nodes: a job that failed on a node and then succeeded on other nodes points
 * at the node rather than the job. (A job that fails everywhere blames no node, so a buggy job or
 * array cannot drain a cluster.) {@value #SUSPECT_JOBS} different jobs doing so within an hour make
 * the node suspect: it is drained (running jobs finish), with the jobs named, until an admin
 * resumes it, which forgets the evidence. Owns {@link NodeRecord#failures}.
 */
final class Suspects {
  static final int SUSPECT_JOBS = 2;
  static final long SUSPECT_WINDOW_MS = 3_600_000;

  /** Evidence kept per node, at most. */
  private static final int MAX_KEPT = 64;

  private final Records records;
  private final CoreBridge core;

  Suspects(Records records, CoreBridge core) {
    this.records = records;
    this.core = core;
  }

  /**
   * {@code job} just succeeded: the nodes it failed on before, and does not run on now, are blamed.
   */
  void succeeded(JobRecord job, long atMs) {
    for (String failedNode : job.failedOn) {
      NodeRecord node = records.node(failedNode);
      if (!job.runsOn(failedNode) && node != null) {
        blame(node, job, atMs);
      }
    }
  }

  /** An admin resumed the node: the evidence so far is forgotten. */
  void forgive(NodeRecord node) {
    node.failures.clear();
  }

  private void blame(NodeRecord node, JobRecord job, long atMs) {
    node.failures.removeIf(f -> f[0] < atMs - SUSPECT_WINDOW_MS);
    node.failures.add(new long[] {atMs, job.id});
    if (node.failures.size() > MAX_KEPT) {
      node.failures.removeFirst();
    }
    var jobsFailed = new TreeSet<Long>();
    for (long[] f : node.failures) {
      jobsFailed.add(f[1]);
    }
    if (node.state != NodeState.UP || jobsFailed.size() < SUSPECT_JOBS) {
      return;
    }
    node.state = NodeState.DRAINED;
    node.reason =
        "suspect: jobs "
            + jobsFailed
            + " failed here and then succeeded on other nodes"
            + " within an hour";
    core.cordon(node.name, atMs, true);
  }
}
