package io.kairos.core.sched;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.TaskShape;
import io.kairos.core.model.TopologyLevel;
import io.kairos.core.sched.place.Capacity;

/**
 * What is free on each node for the elastic stage: the snapshot's free GPUs, CPUs and memory less
 * what the pass's starts took, changed as the stage takes and gives back whole nodes. A {@link
 * Capacity} for what-if placements of a waiting job (no best-fit index: the stage places one job
 * per pass). O(nodes) to build; take and give are O(1).
 */
final class ElasticFreeNodes implements Capacity {
  private final Cluster cluster;
  private final long[] mask;
  private final int[] cpus;
  private final long[] memoryBytes;

  ElasticFreeNodes(Cluster cluster, long[] mask, int[] cpus, long[] memoryBytes) {
    this.cluster = cluster;
    this.mask = mask;
    this.cpus = cpus;
    this.memoryBytes = memoryBytes;
  }

  long mask(int node) {
    return mask[node];
  }

  /** Whether one task of {@code shape} fits what is free on {@code node}. */
  boolean holds(int node, TaskShape shape) {
    return Long.bitCount(mask[node]) >= shape.gpus()
        && cpus[node] >= shape.cpus()
        && memoryBytes[node] >= shape.memoryBytes();
  }

  void take(int node, long gpuMask, TaskShape shape) {
    take(node, gpuMask, shape.cpus(), shape.memoryBytes());
  }

  void take(int node, long gpuMask, int cpuCount, long memory) {
    mask[node] &= ~gpuMask;
    cpus[node] -= cpuCount;
    memoryBytes[node] -= memory;
  }

  void give(int node, long gpuMask, TaskShape shape) {
    give(node, gpuMask, shape.cpus(), shape.memoryBytes());
  }

  void give(int node, long gpuMask, int cpuCount, long memory) {
    mask[node] |= gpuMask;
    cpus[node] += cpuCount;
    memoryBytes[node] += memory;
  }

  @Override
  public int usableGpus(int node) {
    return Long.bitCount(mask[node]);
  }

  @Override
  public int freeCpus(int node) {
    return cpus[node];
  }

  @Override
  public long freeMemoryBytes(int node) {
    return memoryBytes[node];
  }

  @Override
  public long domainUpperBound(TopologyLevel level, int domain) {
    long sum = 0;
    for (int i = cluster.domainStart(level, domain), end = cluster.domainEnd(level, domain);
        i < end;
        i++) {
      sum += Long.bitCount(mask[i]);
    }
    return sum;
  }

  @Override
  public int nextNodeWithFree(int k, int from) {
    throw new UnsupportedOperationException("no best-fit index");
  }

  @Override
  public boolean hasBuckets() {
    return false;
  }
}
