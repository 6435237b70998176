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
  private final int[] tenantShareMilli;
  private final int[] runningShareMilli;
  // Whether some pending or running job is elastic: unknown (scan on first ask) unless the store
  // that built the snapshot counted them.
  private static final byte UNKNOWN = -1;
  private byte elastic = UNKNOWN;

  /** A snapshot without run history: every job is expected to run to its limit. */
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
    this(
        cluster,
        freeMask,
        freeCpus,
        freeMemoryBytes,
        pending,
        running,
        arrivalOrdered,
        new int[0],
        new int[0]);
  }

  /**
   * @param arrivalOrdered whether {@code pending} is known to be in arrival order already (higher
   *     priority, earlier eligible time, lower id first); false when not known
   * @param tenantShareMilli per tenant key of {@code pending} ({@link PendingJobs#tenantIds}), its
   *     user's recent share of their limits in thousandths, or -1 when unknown
   * @param runningShareMilli the same per running job, by index of {@code running}
   */
  public ClusterSnapshot(
      Cluster cluster,
      long[] freeMask,
      int[] freeCpus,
      long[] freeMemoryBytes,
      PendingJobs pending,
      RunningJob[] running,
      boolean arrivalOrdered,
      int[] tenantShareMilli,
      int[] runningShareMilli) {
    this.arrivalOrdered = arrivalOrdered;
    this.tenantShareMilli = tenantShareMilli;
    this.runningShareMilli = runningShareMilli;
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

  /**
   * Whether some pending or running job is elastic ({@link
   * io.kairos.core.model.GangSpec#isElastic}). O(1) for a snapshot of the store, which counts them;
   * otherwise one scan, remembered.
   */
  public boolean anyElastic() {
    if (elastic == UNKNOWN) {
      boolean any = false;
      for (int i = 0; i < running.length && !any; i++) {
        any = running[i].job().spec().gang().isElastic();
      }
      for (Job job : pending.jobs()) {
        if (any) {
          break;
        }
        any = job != null && job.spec().gang().isElastic();
      }
      elastic = (byte) (any ? 1 : 0);
    }
    return elastic == 1;
  }

  /** Set by the store, which knows whether any of its jobs is elastic. */
  ClusterSnapshot knownElastic(boolean any) {
    elastic = (byte) (any ? 1 : 0);
    return this;
  }

  /** The pending jobs as parallel arrays (arrival order). Read-only. */
  public PendingJobs pendingJobs() {
    return pending;
  }

  /**
   * How long the pending job in {@code slot} is expected to run: its limit times its user's recent
   * share of their limits ({@link RunHistory}), or its limit when the user has no finished job yet.
   * Start forecasts read it; reservations and backfill keep to the limit.
   */
  public long expectedRunSec(int slot) {
    int tenant = pending.tenantIds()[slot];
    int share = tenant < tenantShareMilli.length ? tenantShareMilli[tenant] : -1;
    return ClusterStore.scaled(pending.limitSec()[slot], share);
  }

  /**
   * When running job {@code i} is expected to end: its start plus its limit times its user's recent
   * share of their limits, or its limit when unknown. Start forecasts read it.
   */
  public long expectedEndSec(int i) {
    RunningJob job = running[i];
    int share = i < runningShareMilli.length ? runningShareMilli[i] : -1;
    return job.startSec() + ClusterStore.scaled(job.job().timeLimitSec(), share);
  }

  public int runningCount() {
    return running.length;
  }

  public RunningJob running(int i) {
    return running[i];
  }
}
