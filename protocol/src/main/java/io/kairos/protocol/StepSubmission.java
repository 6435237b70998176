package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * The body of {@code POST /api/v1/jobs/{id}/steps}: a job step, as {@code srun} asks for one inside
 * a running job. Null fields were not given; the controller lays the step out by srun's rules
 * ({@link io.kairos.protocol.slurm.StepLayout}).
 *
 * @param command the program and its arguments, run as is in every task (no shell)
 * @param env the tasks' environment (srun's own, by {@code --export}); the agent adds the task's
 *     identity (SLURM_PROCID, CUDA_VISIBLE_DEVICES, ...) over it
 * @param workdir where the tasks start: srun's working directory, or {@code --chdir}
 * @param nodes {@code -N}: how many of the job's nodes; null: all of them
 * @param ntasks {@code -n}: how many tasks; null: {@code nodes x ntasksPerNode}, else one per node
 * @param ntasksPerNode {@code --ntasks-per-node}
 * @param nodelist {@code -w}: nodes the step must use (each in the job's allocation)
 * @param exclude {@code -x}: nodes the step must not use
 * @param gpusPerTask {@code --gpus-per-task}: each task gets this many of its node's GPUs of the
 *     job, its own; null: every task sees all of them
 * @param cpusPerTask {@code -c}: handed to the tasks as SLURM_CPUS_PER_TASK
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StepSubmission(
    List<String> command,
    Map<String, String> env,
    String workdir,
    Integer nodes,
    Integer ntasks,
    Integer ntasksPerNode,
    List<String> nodelist,
    List<String> exclude,
    Integer gpusPerTask,
    Integer cpusPerTask) {}
