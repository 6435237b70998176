package io.kairos.control.state;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.kairos.protocol.slurm.StepLayout;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A validated job step, as the log records it: what srun asked for, less what the layout decides
 * when the step is applied (its nodes, tasks per node and GPUs: {@link JobSteps}).
 *
 * @param command the program and its arguments; empty once the step has ended (not needed then)
 * @param env the tasks' environment (srun's); empty once the step has ended
 * @param workdir where the tasks start; empty for the task directory
 * @param nodes {@code -N}; null: every node of the job
 * @param ntasks {@code -n}; null: from the nodes
 * @param ntasksPerNode {@code --ntasks-per-node}; null: not given
 * @param nodelist {@code -w}, expanded
 * @param exclude {@code -x}, expanded
 * @param gpusPerTask 0: every task sees all of the job's GPUs on its node
 * @param cpusPerTask 0: not given (the tasks see the job's)
 * @param by who started it (the job's owner, or an admin)
 */
@JsonInclude(JsonInclude.Include.NON_DEFAULT)
public record StepRequest(
    List<String> command,
    Map<String, String> env,
    String workdir,
    Integer nodes,
    Integer ntasks,
    Integer ntasksPerNode,
    List<String> nodelist,
    List<String> exclude,
    int gpusPerTask,
    int cpusPerTask,
    String by) {
  public StepRequest {
    command = command == null ? List.of() : List.copyOf(command);
    env = env == null ? Map.of() : Map.copyOf(env);
    workdir = workdir == null ? "" : workdir;
    nodelist = nodelist == null ? List.of() : List.copyOf(nodelist);
    exclude = exclude == null ? List.of() : List.copyOf(exclude);
    Objects.requireNonNull(by, "by");
  }

  /** What the layout is asked for. */
  public StepLayout.Ask ask() {
    return new StepLayout.Ask(nodes, ntasks, ntasksPerNode, nodelist, exclude);
  }

  /** The same, less the command and environment: kept once the step has ended. */
  public StepRequest ended() {
    return new StepRequest(
        List.of(),
        Map.of(),
        workdir,
        nodes,
        ntasks,
        ntasksPerNode,
        nodelist,
        exclude,
        gpusPerTask,
        cpusPerTask,
        by);
  }
}
