package io.kairos.protocol.slurm;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * Where a job step's tasks run inside the job's allocation, by srun's rules (as a Slurm 22.05 ran
 * them):
 *
 * <ol>
 *   <li>{@code nodes} more than the allocation holds is an error ("Only allocated 2 nodes asked for
 *       3"); so is a {@code -w} node outside it ("Requested node configuration is not available").
 *   <li>More {@code -w} nodes than {@code nodes}: the first {@code nodes} are kept, with Slurm's
 *       warning.
 *   <li>No task count: {@code nodes x ntasksPerNode}, else one per node.
 *   <li>Fewer tasks than nodes: as many nodes as tasks ("can't run 1 processes on 2 nodes, setting
 *       nnodes to 1").
 *   <li>{@code ntasksPerNode} that does not multiply out to the task count is ignored, with Slurm's
 *       warning.
 *   <li>The nodes: the {@code -w} ones, then the allocation's others by how few step tasks they run
 *       now (so steps started together spread, as Slurm places concurrent steps on free resources),
 *       then by allocation order; listed in allocation order. Excluded nodes ({@code -x}) are never
 *       taken.
 *   <li>Tasks per node: {@code ntasksPerNode} each, else the block distribution of {@link
 *       TaskLayout#block}.
 * </ol>
 *
 * @param nodes indexes into the allocation, ascending
 * @param tasksPerNode how many tasks each of {@code nodes} runs
 * @param warnings what srun prints as "srun: Warning: ..." (or "srun: error: ..." for what it
 *     corrects), in order
 */
public record StepLayout(List<Integer> nodes, List<Integer> tasksPerNode, List<String> warnings) {
  public StepLayout {
    nodes = List.copyOf(nodes);
    tasksPerNode = List.copyOf(tasksPerNode);
    warnings = List.copyOf(warnings);
  }

  /** What srun asks for; null fields were not given. */
  public record Ask(
      Integer nodes,
      Integer ntasks,
      Integer ntasksPerNode,
      List<String> nodelist,
      List<String> exclude) {
    public Ask {
      nodelist = nodelist == null ? List.of() : List.copyOf(nodelist);
      exclude = exclude == null ? List.of() : List.copyOf(exclude);
    }
  }

  /**
   * The layout of {@code ask} in an allocation of {@code allocation} (node names, in the job's
   * order) whose nodes run {@code busy} step tasks each now.
   *
   * @throws IllegalArgumentException with Slurm's words, when the step cannot run there
   */
  public static StepLayout of(Ask ask, List<String> allocation, List<Integer> busy) {
    var warnings = new ArrayList<String>();
    var available = new ArrayList<Integer>();
    for (int i = 0; i < allocation.size(); i++) {
      if (!ask.exclude().contains(allocation.get(i))) {
        available.add(i);
      }
    }
    int nodes = ask.nodes() == null ? available.size() : ask.nodes();
    if (nodes < 1) {
      throw new IllegalArgumentException("Invalid node count: " + nodes);
    }
    if (nodes > available.size()) {
      throw new IllegalArgumentException(
          "Only allocated "
              + available.size()
              + " nodes asked for "
              + nodes
              + (ask.exclude().isEmpty() ? "" : " (are required nodes explicitly excluded?)"));
    }
    var required = new LinkedHashSet<Integer>();
    for (String name : ask.nodelist()) {
      int index = allocation.indexOf(name);
      if (index < 0 || !available.contains(index)) {
        throw new IllegalArgumentException(
            "Requested node configuration is not available ("
                + name
                + " is not in the job's"
                + " allocation "
                + HostList.compress(allocation)
                + ")");
      }
      required.add(index);
    }
    if (required.size() > nodes) {
      warnings.add(
          "error: Required nodelist includes more nodes than permitted by max-node count ("
              + required.size()
              + " > "
              + nodes
              + "). Eliminating nodes from the nodelist.");
      var kept = new LinkedHashSet<Integer>();
      for (int index : required) {
        if (kept.size() < nodes) {
          kept.add(index);
        }
      }
      required = kept;
    }
    Integer perNode = ask.ntasksPerNode();
    int tasks = ask.ntasks() != null ? ask.ntasks() : perNode != null ? nodes * perNode : nodes;
    if (tasks < 1) {
      throw new IllegalArgumentException("Invalid number of tasks: " + tasks);
    }
    if (tasks < nodes) {
      warnings.add(
          "Warning: can't run "
              + tasks
              + " processes on "
              + nodes
              + " nodes, setting nnodes to "
              + tasks);
      nodes = tasks;
      if (required.size() > nodes) {
        var kept = new LinkedHashSet<Integer>();
        for (int index : required) {
          if (kept.size() < nodes) {
            kept.add(index);
          }
        }
        required = kept;
      }
    }
    if (perNode != null && tasks != nodes * perNode) {
      warnings.add(
          "Warning: can't honor --ntasks-per-node set to "
              + perNode
              + " which doesn't match the requested tasks "
              + tasks
              + " with the number of requested nodes "
              + nodes
              + ". Ignoring --ntasks-per-node.");
      perNode = null;
    }
    var chosen = new ArrayList<>(required);
    var rest = new ArrayList<Integer>();
    for (int index : available) {
      if (!required.contains(index)) {
        rest.add(index);
      }
    }
    rest.sort(
        Comparator.<Integer>comparingInt(i -> i < busy.size() ? busy.get(i) : 0)
            .thenComparingInt(i -> i));
    for (int i = 0; chosen.size() < nodes; i++) {
      chosen.add(rest.get(i));
    }
    chosen.sort(Comparator.naturalOrder());
    List<Integer> counts =
        perNode != null
            ? java.util.Collections.nCopies(nodes, perNode)
            : TaskLayout.block(tasks, nodes);
    for (int c : counts) {
      if (c > TaskLayout.MAX_PER_NODE) {
        throw new IllegalArgumentException(
            "More processors requested than permitted (at most "
                + TaskLayout.MAX_PER_NODE
                + " tasks per node)");
      }
    }
    return new StepLayout(chosen, counts, warnings);
  }

  /** The step's task count. */
  public int tasks() {
    int sum = 0;
    for (int c : tasksPerNode) {
      sum += c;
    }
    return sum;
  }
}
