package io.kairos.core.sched.place;

/**
 * Chooses GPU indexes inside one node. Each task prefers the NVLink domain with the fewest free
 * GPUs that still holds it (best fit keeps whole domains free for larger tasks); a task that no
 * single domain holds takes the lowest free GPUs.
 *
 * <p>Example: 8 GPUs in two NVLink domains of 4, GPUs 0 and 4 busy (free 0b1110_1110), a task of 2:
 * both domains have 3 free, the first wins, the task gets GPUs 1 and 2.
 */
public final class GpuPicker {
  private GpuPicker() {}

  /** Returns the mask of GPUs chosen for {@code tasks} tasks of {@code gpusPerTask} each. */
  public static long pick(
      long freeMask, int gpuCount, int nvlinkDomainSize, int tasks, int gpusPerTask) {
    long free = freeMask;
    long chosen = 0;
    int domains = Math.max(1, gpuCount / Math.max(1, nvlinkDomainSize));
    for (int t = 0; t < tasks; t++) {
      long source = free;
      if (domains > 1) {
        int bestCount = Integer.MAX_VALUE;
        long bestDomain = 0;
        for (int d = 0; d < domains; d++) {
          long domainMask = lowBits(nvlinkDomainSize) << (d * nvlinkDomainSize);
          long inDomain = free & domainMask;
          int count = Long.bitCount(inDomain);
          if (count >= gpusPerTask && count < bestCount) {
            bestCount = count;
            bestDomain = inDomain;
          }
        }
        if (bestCount != Integer.MAX_VALUE) {
          source = bestDomain;
        }
      }
      long taken = lowest(source, gpusPerTask);
      if (Long.bitCount(taken) != gpusPerTask) {
        throw new IllegalStateException(
            "node has " + Long.bitCount(free) + " free GPUs, task needs " + gpusPerTask);
      }
      chosen |= taken;
      free &= ~taken;
    }
    return chosen;
  }

  private static long lowBits(int count) {
    return count >= 64 ? -1L : (1L << count) - 1;
  }

  private static long lowest(long mask, int count) {
    long taken = 0;
    long rest = mask;
    for (int i = 0; i < count && rest != 0; i++) {
      long bit = Long.lowestOneBit(rest);
      taken |= bit;
      rest &= ~bit;
    }
    return taken;
  }
}
