package io.kairos.core.sched.preempt;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.Placement;
import io.kairos.core.model.TopologyLevel;
import io.kairos.core.sched.place.Capacity;

/**
 * A what-if capacity: a base view (what is free now) plus the GPUs, CPUs and memory of the victims
 * added so far. {@link #add} and {@link #remove} are O(nodes of the victim x levels), so the
 * planner can try a victim set, undo one victim, and ask the placer again.
 *
 * <p>Per-domain upper bounds are the base's bound plus the freed GPUs in the domain, so the placer
 * keeps pruning domains. No best-fit buckets: the placer scans nodes instead. Single-threaded, one
 * planning call only.
 */
final class FreedCapacity implements Capacity {
  private static final TopologyLevel[] LEVELS = Cluster.GROUP_LEVELS.toArray(TopologyLevel[]::new);

  private final Cluster cluster;
  private final Capacity base;
  private final int[] gpus;
  private final int[] cpus;
  private final long[] memoryBytes;
  private final long[][] domainGpus = new long[TopologyLevel.values().length][];

  FreedCapacity(Cluster cluster, Capacity base) {
    this.cluster = cluster;
    this.base = base;
    int n = cluster.nodeCount();
    gpus = new int[n];
    cpus = new int[n];
    memoryBytes = new long[n];
    for (TopologyLevel level : LEVELS) {
      domainGpus[level.ordinal()] = new long[cluster.domainCount(level)];
    }
  }

  void add(VictimCandidate victim) {
    change(victim, 1);
  }

  void remove(VictimCandidate victim) {
    change(victim, -1);
  }

  private void change(VictimCandidate victim, int sign) {
    var shape = victim.job().job().spec().gang().shape();
    Placement p = victim.job().placement();
    for (int i = 0; i < p.nodeCount(); i++) {
      int node = p.node(i);
      int tasks = p.tasksOn(i);
      int g = sign * tasks * shape.gpus();
      gpus[node] += g;
      cpus[node] += sign * tasks * shape.cpus();
      memoryBytes[node] += sign * tasks * shape.memoryBytes();
      for (TopologyLevel level : LEVELS) {
        domainGpus[level.ordinal()][cluster.domainOf(level, node)] += g;
      }
    }
  }

  @Override
  public int usableGpus(int node) {
    return Math.min(cluster.gpuCount(node), base.usableGpus(node) + gpus[node]);
  }

  @Override
  public int freeCpus(int node) {
    return (int) Math.min(Integer.MAX_VALUE, (long) base.freeCpus(node) + cpus[node]);
  }

  @Override
  public long freeMemoryBytes(int node) {
    long sum = base.freeMemoryBytes(node) + memoryBytes[node];
    return sum < 0 ? Long.MAX_VALUE : sum; // saturate: "ample" memory is near Long.MAX_VALUE / 4
  }

  @Override
  public long domainUpperBound(TopologyLevel level, int domain) {
    return base.domainUpperBound(level, domain) + domainGpus[level.ordinal()][domain];
  }

  @Override
  public int nextNodeWithFree(int k, int from) {
    return -1;
  }

  @Override
  public boolean hasBuckets() {
    return false;
  }
}
