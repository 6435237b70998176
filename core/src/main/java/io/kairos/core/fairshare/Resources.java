package io.kairos.core.fairshare;

import io.kairos.core.Checks;

/**
 * An amount of each {@link Resource}: what a running job holds (charged per second it runs), or a
 * cluster's capacity.
 *
 * @param gpus whole GPUs
 * @param cpus CPU cores
 * @param memoryBytes memory in bytes
 */
public record Resources(long gpus, long cpus, long memoryBytes) {
  public static final Resources NONE = new Resources(0, 0, 0);

  public Resources {
    Checks.nonNegative(gpus, "resources.gpus");
    Checks.nonNegative(cpus, "resources.cpus");
    Checks.nonNegative(memoryBytes, "resources.memoryBytes");
  }

  /** The amount of one resource, in its unit (GPUs, cores, bytes). */
  public long amount(Resource resource) {
    return switch (resource) {
      case GPU -> gpus;
      case CPU -> cpus;
      case MEMORY -> memoryBytes;
    };
  }
}
