package io.kairos.core.model;

import io.kairos.core.Checks;
import java.util.Objects;

/**
 * All tasks of a job, placed together or not at all.
 *
 * <p>{@code distinctNodes} puts each task on its own node: "16 GPUs, 8 per node" is two tasks of 8
 * GPUs on two distinct nodes. Without it, several tasks may share a node: "16 GPUs" with no
 * per-node count is 16 one-GPU tasks, packed onto as few nodes as placement can find.
 *
 * <p>An <b>elastic</b> gang ({@code maxTasks > tasks}) runs with any number of tasks from {@code
 * tasks} (its minimum) to {@code maxTasks}, one per node (torchrun's {@code --nnodes=1:4}): "8-32
 * GPUs, 8 per node" is 1 to 4 nodes. Placement, quota and reservations of a waiting elastic job
 * count its minimum; the pass's elastic stage grows it and shrinks it by whole nodes ({@code
 * sched.ElasticStage}).
 *
 * @param tasks the tasks placed together; for an elastic gang, its minimum
 * @param maxTasks the most tasks an elastic gang may grow to; {@code tasks} for a fixed gang
 */
public record GangSpec(int tasks, TaskShape shape, boolean distinctNodes, int maxTasks) {
  public static final int MAX_TASKS = 1 << 20;

  public GangSpec {
    Checks.inRange(tasks, 1, MAX_TASKS, "gang.tasks");
    Objects.requireNonNull(shape, "gang.shape");
    Checks.inRange(maxTasks, tasks, MAX_TASKS, "gang.maxTasks");
    Checks.argument(
        maxTasks == tasks || distinctNodes,
        () -> "an elastic gang (maxTasks > tasks) must put each task on its own node");
  }

  /** A gang of a fixed size. */
  public GangSpec(int tasks, TaskShape shape, boolean distinctNodes) {
    this(tasks, shape, distinctNodes, tasks);
  }

  /** A job that needs {@code gpus} GPUs anywhere, one GPU per task. */
  public static GangSpec flexible(int gpus) {
    return new GangSpec(gpus, TaskShape.gpus(1), false);
  }

  /** {@code gpus / gpusPerNode} tasks of {@code gpusPerNode} GPUs, each on its own node. */
  public static GangSpec perNode(int gpus, int gpusPerNode) {
    return elastic(gpus, gpus, gpusPerNode);
  }

  /**
   * An elastic gang of {@code minGpus / gpusPerNode} to {@code maxGpus / gpusPerNode} tasks of
   * {@code gpusPerNode} GPUs, each on its own node (a fixed gang when {@code minGpus == maxGpus}).
   */
  public static GangSpec elastic(int minGpus, int maxGpus, int gpusPerNode) {
    Checks.positive(gpusPerNode, "gpusPerNode");
    Checks.argument(
        minGpus % gpusPerNode == 0,
        () -> "gpus (" + minGpus + ") must be a multiple of gpusPerNode (" + gpusPerNode + ")");
    Checks.argument(
        maxGpus % gpusPerNode == 0,
        () -> "maxGpus (" + maxGpus + ") must be a multiple of gpusPerNode (" + gpusPerNode + ")");
    return new GangSpec(
        minGpus / gpusPerNode, TaskShape.gpus(gpusPerNode), true, maxGpus / gpusPerNode);
  }

  /** Whether the gang may run with more tasks than its minimum. */
  public boolean isElastic() {
    return maxTasks > tasks;
  }

  /** GPUs of the gang at its minimum (its only size unless elastic). */
  public int totalGpus() {
    return tasks * shape.gpus();
  }

  /** GPUs of the gang at its largest size. */
  public long maxGpus() {
    return (long) maxTasks * shape.gpus();
  }
}
