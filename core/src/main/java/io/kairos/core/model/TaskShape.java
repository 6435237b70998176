package io.kairos.core.model;

import io.kairos.core.Checks;

/** What one task of a gang needs on the node it runs on. */
public record TaskShape(int gpus, int cpus, long memoryBytes) {
  public TaskShape {
    Checks.inRange(gpus, 0, 64, "task.gpus");
    Checks.nonNegative(cpus, "task.cpus");
    Checks.nonNegative(memoryBytes, "task.memoryBytes");
    Checks.argument(
        gpus > 0 || cpus > 0 || memoryBytes > 0,
        () -> "task must ask for at least one GPU, CPU or byte of memory");
  }

  public static TaskShape gpus(int gpus) {
    return new TaskShape(gpus, 0, 0);
  }
}
