package io.kairos.agent.isolate;

import java.util.List;

/**
 * What one task may use on its node, enforced by its cgroup when the host allows it.
 *
 * @param cpus whole CPUs of CPU time per period; 0 means unlimited
 * @param memoryBytes resident memory (and swap, where that can be limited too); 0 means unlimited
 * @param pids processes and threads at once; 0 means {@link #DEFAULT_PIDS}
 * @param gpuMinors the GPUs ({@code /dev/nvidia<minor>}) the task may open; every other GPU is
 *     denied where device rules can be enforced
 */
public record TaskLimits(int cpus, long memoryBytes, int pids, List<Integer> gpuMinors) {
  /** Enough for a data loader's worker pool and its threads, low enough to stop a fork bomb. */
  public static final int DEFAULT_PIDS = 4096;

  public TaskLimits {
    if (cpus < 0) {
      throw new IllegalArgumentException("cpus must be >= 0, got " + cpus);
    }
    if (memoryBytes < 0) {
      throw new IllegalArgumentException("memoryBytes must be >= 0, got " + memoryBytes);
    }
    if (pids < 0) {
      throw new IllegalArgumentException("pids must be >= 0, got " + pids);
    }
    gpuMinors = List.copyOf(gpuMinors);
  }

  public static TaskLimits unlimited() {
    return new TaskLimits(0, 0, 0, List.of());
  }

  /** The pids limit to write: {@link #pids} or the default. */
  public int effectivePids() {
    return pids == 0 ? DEFAULT_PIDS : pids;
  }
}
