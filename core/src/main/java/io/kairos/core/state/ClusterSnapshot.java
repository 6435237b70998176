package io.kairos.core.state;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.Job;
import io.kairos.core.model.RunningJob;

/**
 * A read-only view of the cluster for one scheduling pass: the static cluster (shared) and copies
 * of the per-node free counters, the pending jobs (arrival order) and the running jobs.
 *
 * <p>Arrays are owned by the snapshot; readers must not write them.
 */
public final class ClusterSnapshot {
  private final Cluster cluster;
  private final long[] freeMask;
  private final int[] freeCpus;
  private final long[] freeMemoryBytes;
  private final PendingJobs pending;
  private final RunningJob[] running;
  private final boolean arrivalOrdered;

  public ClusterSnapshot(
      Cluster cluster,
      long[] freeMask,
      int[] freeCpus,
      long[] freeMemoryBytes,
      PendingJobs pending,
      RunningJob[] running) {
    this(cluster, freeMask, freeCpus, freeMemoryBytes, pending, running, false);
  }

  /**
   * @param arrivalOrdered whether {@code pending} is known to be in arrival order already (higher
   *     priority, earlier eligible time, lower id first); false when not known
   */
  public ClusterSnapshot(
      Cluster cluster,
      long[] freeMask,
      int[] freeCpus,
      long[] freeMemoryBytes,
      PendingJobs pending,
      RunningJob[] running,
      boolean arrivalOrdered) {
    this.arrivalOrdered = arrivalOrdered;
    this.cluster = cluster;
    this.freeMask = freeMask;
    this.freeCpus = freeCpus;
    this.freeMemoryBytes = freeMemoryBytes;
    this.pending = pending;
    this.running = running;
  }

  public Cluster cluster() {
    return cluster;
  }

  public long freeMask(int node) {
    return freeMask[node];
  }

  public int freeCpus(int node) {
    return freeCpus[node];
  }

  public long freeMemoryBytes(int node) {
    return freeMemoryBytes[node];
  }

  public int pendingCount() {
    return pending.size();
  }

  public Job pending(int i) {
    return pending.jobs()[i];
  }

  /**
   * Whether the pending jobs are known to be in arrival order (higher priority, earlier eligible
   * time, lower id first), so that ordering them by arrival changes nothing. False when not known.
   */
  public boolean pendingInArrivalOrder() {
    return arrivalOrdered;
  }

  /** The pending jobs as parallel arrays (arrival order). Read-only. */
  public PendingJobs pendingJobs() {
    return pending;
  }

  public int runningCount() {
    return running.length;
  }

  public RunningJob running(int i) {
    return running[i];
  }
}
