package io.kairos.control.api;

import io.kairos.protocol.JobSubmission;
import io.kairos.protocol.slurm.TaskLayout;

/**
 * A submission's Slurm task options ({@code ntasks}, {@code ntasksPerNode}, {@code gpusPerTask}),
 * checked against its nodes and GPUs: every node must run at least one task, and the tasks on a
 * node must find their GPUs there. A 400 names the field.
 */
final class TaskOptions {
  private TaskOptions() {}

  /**
   * The layout of {@code s} on {@code nodes} nodes of {@code gpusPerNode} GPUs; null for one task
   * per node with all its GPUs (nothing given).
   */
  static TaskLayout layout(JobSubmission s, int nodes, int gpusPerNode, String prefix) {
    if (s.ntasks() == null && s.ntasksPerNode() == null && s.gpusPerTask() == null) {
      return null;
    }
    int ntasks = s.ntasks() == null ? 0 : s.ntasks();
    int perNode = s.ntasksPerNode() == null ? 0 : s.ntasksPerNode();
    int gpusPerTask = s.gpusPerTask() == null ? 0 : s.gpusPerTask();
    Submissions.check(
        s.ntasks() == null || (ntasks >= 1 && ntasks <= nodes * TaskLayout.MAX_PER_NODE),
        prefix + "ntasks",
        "ntasks must be between 1 and "
            + nodes * TaskLayout.MAX_PER_NODE
            + " for "
            + nodes
            + " node(s), got "
            + ntasks,
        "ask for at least one task per node");
    Submissions.check(
        s.ntasksPerNode() == null || (perNode >= 1 && perNode <= TaskLayout.MAX_PER_NODE),
        prefix + "ntasksPerNode",
        "ntasksPerNode must be between 1 and " + TaskLayout.MAX_PER_NODE + ", got " + perNode,
        "ask for the processes each node runs, e.g. one per GPU");
    Submissions.check(
        s.gpusPerTask() == null
            || (gpusPerTask >= 1 && gpusPerTask <= Submissions.MAX_GPUS_PER_NODE),
        prefix + "gpusPerTask",
        "gpusPerTask must be between 1 and "
            + Submissions.MAX_GPUS_PER_NODE
            + ", got "
            + gpusPerTask,
        "ask for the GPUs each process uses");
    Submissions.check(
        s.gpusPerTask() == null || gpusPerNode > 0,
        prefix + "gpusPerTask",
        "gpusPerTask needs GPUs, and the job asks for none",
        "ask for gpus (and gpusPerNode) too");
    var layout = new TaskLayout(ntasks, perNode, gpusPerTask);
    var problem = layout.problem(nodes, gpusPerNode);
    String field =
        problem.isPresent() && problem.get().startsWith("gpus")
                || problem.map(p -> p.contains("gpusPerTask")).orElse(false)
            ? "gpusPerTask"
            : s.ntasks() != null ? "ntasks" : "ntasksPerNode";
    Submissions.check(
        problem.isEmpty(),
        prefix + field,
        problem.orElse(""),
        "spread the tasks so that every node runs at least one and finds its GPUs");
    return layout.isOnePerNode() ? null : layout;
  }
}
