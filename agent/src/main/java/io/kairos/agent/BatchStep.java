package io.kairos.agent;

import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.slurm.HostList;
import io.kairos.protocol.slurm.TaskLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The two kinds of task a batch job has ({@link TaskAssignment#script}, {@link
 * TaskAssignment#holder}), as {@link LaunchSpec#of} starts them.
 *
 * <ul>
 *   <li>The batch step (task 0, on the first node): the script's copy, {@value #SCRIPT_FILE} in the
 *       task directory, written there by its owner as the task starts ({@link UserLaunch}), run
 *       with the command's arguments after the first, and the environment Slurm gives a batch step
 *       (checked against Slurm 22.05): {@code SLURM_PROCID}, {@code SLURM_LOCALID} and {@code
 *       SLURM_NODEID} 0, {@code SLURM_JOB_NODELIST} in Slurm's compressed form ({@code
 *       gpu[001-004]}), {@code SLURM_TASKS_PER_NODE} ({@code 1(x4)}), {@code SLURM_JOB_GPUS},
 *       {@code SLURM_CPUS_ON_NODE} and {@code SLURM_JOB_CPUS_PER_NODE} ({@code 4(x2)}) when the job
 *       asked for CPUs, {@code SLURM_JOB_USER}, {@code SLURM_GTIDS}, {@code ENVIRONMENT=BATCH}; and
 *       none of torch's {@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK}, {@code
 *       LOCAL_WORLD_SIZE}, {@code NODE_RANK}, nor {@code SLURM_NTASKS}, which Slurm sets only for a
 *       job that asked for tasks (unless the job's own environment sets them).
 *   <li>A holder (every other task): the node's share of the allocation. It runs {@code sleep}
 *       until the job ends and stops it, in the task directory, with its output there: the job's
 *       program does not run on that node, and its output files are not opened there.
 * </ul>
 */
final class BatchStep {
  /** The batch script's copy in the task directory, as slurmd names it. */
  static final String SCRIPT_FILE = "slurm_script";

  /**
   * What a holder runs: a sleep that the job's end stops (68 years, the largest all sleeps take).
   */
  static final List<String> HOLDER_ARGV = List.of("sleep", "2147483647");

  private static final List<String> NOT_IN_A_BATCH_STEP =
      List.of("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK");

  private BatchStep() {}

  /** The batch step's argv: the script's copy, then the command's arguments after the first. */
  static List<String> argv(TaskAssignment a, Path taskDir) {
    var argv = new ArrayList<String>();
    argv.add(taskDir.resolve(SCRIPT_FILE).toString());
    List<String> command = a.command() == null ? List.of() : a.command();
    if (command.size() > 1) {
      argv.addAll(command.subList(1, command.size()));
    }
    return argv;
  }

  /** Turns a task's environment ({@link LaunchSpec}'s layers) into the batch step's. */
  static void environment(Map<String, String> env, TaskAssignment a) {
    Map<String, String> own = a.env() == null ? Map.of() : a.env();
    for (String name : NOT_IN_A_BATCH_STEP) {
      // Not the gang's rank variables: the job's own value (an exported shell's), else none.
      if (own.get(name) != null) {
        env.put(name, own.get(name));
      } else {
        env.remove(name);
      }
    }
    for (String name : List.of("SLURM_NTASKS", "SLURM_NPROCS")) {
      env.remove(name);
    }
    List<String> nodes = a.nodes() == null ? List.of() : a.nodes();
    String nodeList = HostList.compress(nodes);
    env.put("SLURM_JOB_NODELIST", nodeList);
    env.put("SLURM_NODELIST", nodeList);
    env.put("SLURM_TASKS_PER_NODE", tasksPerNode(ones(nodes.size())));
    if (a.tasksPerNode() != null) {
      // The job asked for tasks (--ntasks, --ntasks-per-node): a batch step has their count, which
      // srun takes as its default (checked on Slurm 22.05: SLURM_NTASKS=2,
      // SLURM_NTASKS_PER_NODE=1).
      String total = Integer.toString(a.worldSize());
      env.put("SLURM_NTASKS", total);
      env.put("SLURM_NPROCS", total);
      env.put("SLURM_TASKS_PER_NODE", TaskLayout.slurmTasksPerNode(a.tasksPerNode()));
      if (new java.util.HashSet<>(a.tasksPerNode()).size() == 1) {
        env.put("SLURM_NTASKS_PER_NODE", Integer.toString(a.tasksPerNode().getFirst()));
      }
    }
    env.put("SLURM_JOB_GPUS", Objects.requireNonNullElse(env.get("KAIROS_GPUS"), ""));
    env.put(
        "SLURM_JOB_USER", Objects.requireNonNullElse(a.runAs(), a.user() == null ? "" : a.user()));
    env.put("SLURM_GTIDS", "0");
    env.put("ENVIRONMENT", "BATCH");
    if (a.cpus() > 0) {
      env.put("SLURM_CPUS_ON_NODE", Integer.toString(a.cpus()));
      env.put(
          "SLURM_JOB_CPUS_PER_NODE",
          a.cpus() + (nodes.size() > 1 ? "(x" + nodes.size() + ")" : ""));
    }
  }

  private static int[] ones(int n) {
    int[] counts = new int[Math.max(1, n)];
    java.util.Arrays.fill(counts, 1);
    return counts;
  }

  /**
   * Tasks per node as Slurm writes {@code SLURM_TASKS_PER_NODE}: runs of equal counts as {@code
   * count(xrun)}, so {2, 2, 1} is {@code 2(x2),1} and {1} is {@code 1}.
   */
  static String tasksPerNode(int[] counts) {
    var out = new StringBuilder();
    int i = 0;
    while (i < counts.length) {
      int j = i;
      while (j < counts.length && counts[j] == counts[i]) {
        j++;
      }
      if (!out.isEmpty()) {
        out.append(',');
      }
      out.append(counts[i]);
      if (j - i > 1) {
        out.append("(x").append(j - i).append(')');
      }
      i = j;
    }
    return out.toString();
  }
}
