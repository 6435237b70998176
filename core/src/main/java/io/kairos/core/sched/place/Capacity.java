package io.kairos.core.sched.place;

import io.kairos.core.model.TopologyLevel;

/**
 * What a placement may use on each node. Two views exist: the ledger "now" (free GPUs, bounded by
 * the spare capacity of the reservations a job must not delay), and the availability profile at a
 * future time (an array, CPU and memory not tracked).
 */
public interface Capacity {
  /** GPUs the gang may use on {@code node}. Hot path: must not allocate. */
  int usableGpus(int node);

  int freeCpus(int node);

  long freeMemoryBytes(int node);

  /** An upper bound of the usable GPUs summed over a domain; never below the true sum. */
  long domainUpperBound(TopologyLevel level, int domain);

  /**
   * The first node at index {@code from} or above whose free GPU count is exactly {@code k}, or -1.
   * Only views with a best-fit index support this ({@link #hasBuckets()}).
   */
  int nextNodeWithFree(int k, int from);

  boolean hasBuckets();
}
