package io.kairos.core.model;

import io.kairos.core.Checks;
import java.util.Arrays;

/**
 * Where a gang's tasks go: for each node used (ascending node index), how many tasks it runs and
 * which GPUs (a bit mask of GPU indexes) they hold.
 *
 * <p>A reservation's placement names nodes and task counts but no GPU indexes yet ({@code gpuMask}
 * is 0): which GPUs are chosen when the job actually starts. Immutable; arrays are copied on the
 * way in and out.
 */
public final class Placement {
  private final int[] nodes;
  private final int[] tasks;
  private final long[] gpuMasks;

  private Placement(int[] nodes, int[] tasks, long[] gpuMasks) {
    Checks.argument(
        nodes.length == tasks.length && nodes.length == gpuMasks.length,
        () -> "placement arrays differ in length");
    for (int i = 0; i < nodes.length; i++) {
      int at = i;
      Checks.argument(tasks[i] > 0, () -> "placement: node " + nodes[at] + " has no task");
      Checks.argument(
          i == 0 || nodes[i - 1] < nodes[i], () -> "placement nodes must be ascending and unique");
    }
    this.nodes = nodes;
    this.tasks = tasks;
    this.gpuMasks = gpuMasks;
  }

  public static Placement of(int[] nodes, int[] tasks, long[] gpuMasks) {
    return new Placement(nodes.clone(), tasks.clone(), gpuMasks.clone());
  }

  /** Takes ownership of arrays the caller built and will not write again (no copies). */
  public static Placement adopt(int[] nodes, int[] tasks, long[] gpuMasks) {
    return new Placement(nodes, tasks, gpuMasks);
  }

  public int nodeCount() {
    return nodes.length;
  }

  public int node(int i) {
    return nodes[i];
  }

  public int tasksOn(int i) {
    return tasks[i];
  }

  public long gpuMask(int i) {
    return gpuMasks[i];
  }

  public int totalTasks() {
    int sum = 0;
    for (int t : tasks) {
      sum += t;
    }
    return sum;
  }

  public int[] nodes() {
    return nodes.clone();
  }

  /** The node indexes themselves, not a copy: for hot paths that promise not to write. */
  public int[] nodesUnsafe() {
    return nodes;
  }

  /** This placement without its slot {@code slot} (a node whose tasks let their GPUs go). */
  public Placement without(int slot) {
    Checks.inRange(slot, 0, nodes.length - 1, "slot");
    int n = nodes.length - 1;
    int[] keptNodes = new int[n];
    int[] keptTasks = new int[n];
    long[] keptMasks = new long[n];
    for (int i = 0, j = 0; i < nodes.length; i++) {
      if (i != slot) {
        keptNodes[j] = nodes[i];
        keptTasks[j] = tasks[i];
        keptMasks[j] = gpuMasks[i];
        j++;
      }
    }
    return new Placement(keptNodes, keptTasks, keptMasks);
  }

  /** The slot of node index {@code node}, or -1 when the placement does not use it. */
  public int slotOf(int node) {
    int slot = Arrays.binarySearch(nodes, node);
    return slot >= 0 ? slot : -1;
  }

  public Placement withGpuMasks(long[] masks) {
    return new Placement(nodes, tasks, masks.clone());
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Placement p
        && Arrays.equals(nodes, p.nodes)
        && Arrays.equals(tasks, p.tasks)
        && Arrays.equals(gpuMasks, p.gpuMasks);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * Arrays.hashCode(nodes) + Arrays.hashCode(tasks)) + Arrays.hashCode(gpuMasks);
  }

  @Override
  public String toString() {
    var sb = new StringBuilder("Placement[");
    for (int i = 0; i < nodes.length; i++) {
      if (i > 0) {
        sb.append(", ");
      }
      sb.append('n').append(nodes[i]).append('x').append(tasks[i]);
      if (gpuMasks[i] != 0) {
        sb.append(" gpus=").append(Long.toBinaryString(gpuMasks[i]));
      }
    }
    return sb.append(']').toString();
  }
}
