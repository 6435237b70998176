package io.kairos.protocol.slurm;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * How many processes a job starts and how they share its nodes' GPUs: Slurm's {@code --ntasks},
 * {@code --ntasks-per-node} and {@code --gpus-per-task}. Each field is 0 when not given.
 *
 * <p>{@link #perNode} spreads the tasks over the job's nodes as Slurm's block distribution does:
 * {@code --ntasks-per-node=P} gives each node P (the last may get fewer when {@code --ntasks} is
 * smaller); {@code --ntasks=T} alone gives the first {@code T mod N} nodes one more than the others
 * (5 tasks on 2 nodes: 3,2); neither gives one per node. Ranks then count up node by node: node 0
 * holds ranks 0..c0-1, node 1 the next c1, and so on.
 *
 * @param ntasks the job's task count; 0: from the nodes and {@code ntasksPerNode}
 * @param ntasksPerNode tasks on each node; 0: one, or as {@code ntasks} spreads
 * @param gpusPerTask GPUs each task sees of its node's; 0: every task sees all of them (Slurm's
 *     default for {@code --gres}), and tells them apart by its local rank
 */
@JsonInclude(JsonInclude.Include.NON_DEFAULT)
public record TaskLayout(int ntasks, int ntasksPerNode, int gpusPerTask) {
  /** The most tasks one node may run for one job or step. */
  public static final int MAX_PER_NODE = 1024;

  /** One task per node, all GPUs each: what Kairos ran before these options. */
  public static final TaskLayout ONE_PER_NODE = new TaskLayout(0, 0, 0);

  public TaskLayout {
    if (ntasks < 0 || ntasksPerNode < 0 || gpusPerTask < 0) {
      throw new IllegalArgumentException(
          "task counts must not be negative: ntasks "
              + ntasks
              + ", ntasksPerNode "
              + ntasksPerNode
              + ", gpusPerTask "
              + gpusPerTask);
    }
  }

  /** Whether this is one task per node with all its GPUs. */
  @JsonIgnore
  public boolean isOnePerNode() {
    return ntasks == 0 && ntasksPerNode == 0 && gpusPerTask == 0;
  }

  /**
   * Why this layout cannot run on {@code nodes} nodes with {@code gpusPerNode} GPUs each, in words;
   * empty when it can.
   */
  public Optional<String> problem(int nodes, int gpusPerNode) {
    if (ntasksPerNode > MAX_PER_NODE) {
      return Optional.of("ntasksPerNode must be at most " + MAX_PER_NODE);
    }
    if (ntasks > 0 && ntasks < nodes) {
      return Optional.of(
          "ntasks ("
              + ntasks
              + ") is smaller than the job's node count ("
              + nodes
              + "): every node runs at least one task");
    }
    if (ntasks > 0 && ntasksPerNode > 0 && ntasks > nodes * ntasksPerNode) {
      return Optional.of(
          "ntasks ("
              + ntasks
              + ") is more than "
              + nodes
              + " node(s) x ntasksPerNode ("
              + ntasksPerNode
              + ")");
    }
    if (ntasks > 0 && ntasksPerNode > 0 && ntasks <= (nodes - 1) * ntasksPerNode) {
      return Optional.of(
          "ntasks ("
              + ntasks
              + ") leaves a node without a task at "
              + ntasksPerNode
              + " per node; ask for fewer nodes");
    }
    int most = Collections.max(perNode(nodes));
    if (most > MAX_PER_NODE) {
      return Optional.of("at most " + MAX_PER_NODE + " tasks per node, got " + most);
    }
    if (gpusPerTask > 0 && most * gpusPerTask > gpusPerNode) {
      return Optional.of(
          most
              + " task(s) on a node x gpusPerTask ("
              + gpusPerTask
              + ") need more than the "
              + gpusPerNode
              + " GPUs per node the job asks for");
    }
    return Optional.empty();
  }

  /** The number of tasks on each of {@code nodes} nodes, in node order. */
  public List<Integer> perNode(int nodes) {
    if (nodes < 1) {
      throw new IllegalArgumentException("a job has at least one node, got " + nodes);
    }
    if (ntasksPerNode > 0) {
      int total = ntasks > 0 ? ntasks : nodes * ntasksPerNode;
      var out = new ArrayList<Integer>(nodes);
      for (int i = 0; i < nodes; i++) {
        out.add(Math.max(0, Math.min(ntasksPerNode, total - i * ntasksPerNode)));
      }
      return List.copyOf(out);
    }
    return block(ntasks > 0 ? ntasks : nodes, nodes);
  }

  /** The total number of tasks on {@code nodes} nodes. */
  public int total(int nodes) {
    int sum = 0;
    for (int n : perNode(nodes)) {
      sum += n;
    }
    return sum;
  }

  /** {@code tasks} over {@code nodes}: the first {@code tasks mod nodes} get one more. */
  public static List<Integer> block(int tasks, int nodes) {
    var out = new ArrayList<Integer>(nodes);
    for (int i = 0; i < nodes; i++) {
      out.add(tasks / nodes + (i < tasks % nodes ? 1 : 0));
    }
    return List.copyOf(out);
  }

  /** The first rank on node {@code index}: the tasks of the nodes before it. */
  public static int firstRank(List<Integer> perNode, int index) {
    int rank = 0;
    for (int i = 0; i < index; i++) {
      rank += perNode.get(i);
    }
    return rank;
  }

  /** Slurm's {@code SLURM_TASKS_PER_NODE}: runs of equal counts as {@code 2(x3)}: 2(x3),1. */
  public static String slurmTasksPerNode(List<Integer> perNode) {
    var out = new StringBuilder();
    int i = 0;
    while (i < perNode.size()) {
      int j = i;
      while (j + 1 < perNode.size() && perNode.get(j + 1).equals(perNode.get(i))) {
        j++;
      }
      if (out.length() > 0) {
        out.append(',');
      }
      out.append(perNode.get(i));
      if (j > i) {
        out.append("(x").append(j - i + 1).append(')');
      }
      i = j + 1;
    }
    return out.toString();
  }
}
