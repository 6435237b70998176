package io.kairos.core.model;

import io.kairos.core.Checks;
import java.util.Objects;

/**
 * All tasks of a job, placed together or not at all.
 *
 * <p>{@code distinctNodes} puts each task on its own node: "16 GPUs, 8 per node" is two tasks of 8
 * GPUs on two distinct nodes. Without it, several tasks may share a node: "16 GPUs" with no
 * per-node count is 16 one-GPU tasks, packed onto as few nodes as placement can find.
 */
public record GangSpec(int tasks, TaskShape shape, boolean distinctNodes) {
  public static final int MAX_TASKS = 1 << 20;

  public GangSpec {
    Checks.inRange(tasks, 1, MAX_TASKS, "gang.tasks");
    Objects.requireNonNull(shape, "gang.shape");
  }

  /** A job that needs {@code gpus} GPUs anywhere, one GPU per task. */
  public static GangSpec flexible(int gpus) {
    return new GangSpec(gpus, TaskShape.gpus(1), false);
  }

  /** {@code gpus / gpusPerNode} tasks of {@code gpusPerNode} GPUs, each on its own node. */
  public static GangSpec perNode(int gpus, int gpusPerNode) {
    Checks.positive(gpusPerNode, "gpusPerNode");
    Checks.argument(
        gpus % gpusPerNode == 0,
        () -> "gpus (" + gpus + ") must be a multiple of gpusPerNode (" + gpusPerNode + ")");
    return new GangSpec(gpus / gpusPerNode, TaskShape.gpus(gpusPerNode), true);
  }

  public int totalGpus() {
    return tasks * shape.gpus();
  }
}
