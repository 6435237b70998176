package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * A job step as the API shows it ({@code GET /api/v1/jobs/{id}/steps/{step}}).
 *
 * @param step the step's id in its job, from 0 (Slurm's {@code SLURM_STEP_ID})
 * @param attempt the job attempt it runs in
 * @param state RUNNING, then COMPLETED (every task exited 0), FAILED or CANCELLED
 * @param nodes the step's nodes, in the job's order
 * @param tasksPerNode how many tasks each of {@code nodes} runs; ranks count up node by node
 * @param exitCode once ended: srun's exit code ({@link io.kairos.protocol.slurm.StepExit})
 * @param taskExits per rank: its exit code (128 + N when killed by signal N, -1 when lost with its
 *     node), null while it runs
 * @param warnings what srun prints before the step starts (Slurm's warnings for the layout)
 * @param message why it ended when that was not its tasks' doing (cancelled, the job ended)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StepView(
    long jobId,
    int step,
    int attempt,
    String state,
    List<String> nodes,
    List<Integer> tasksPerNode,
    int ntasks,
    Integer exitCode,
    List<Integer> taskExits,
    List<String> warnings,
    String message,
    Long startMs,
    Long endMs) {
  public static final String RUNNING = "RUNNING";
  public static final String COMPLETED = "COMPLETED";
  public static final String FAILED = "FAILED";
  public static final String CANCELLED = "CANCELLED";

  /** Whether the step has ended (every task's end is known). */
  public boolean ended() {
    return !RUNNING.equals(state);
  }
}
