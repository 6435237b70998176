package io.kairos.sim.trace;

/**
 * One job as a trace describes it, before it becomes a {@code JobSpec}.
 *
 * @param id the trace's job id (positive, unique within the trace)
 * @param submitSec submission time, seconds from the trace's origin
 * @param gpus GPUs the job uses in total (processors, for HPC traces)
 * @param durationSec how long the job really ran
 * @param timeLimitSec the user's runtime estimate; never below {@code durationSec}
 * @param user user name ("" when the trace has none)
 * @param queue queue or virtual cluster ("default" when the trace has none)
 * @param priority priority (0 when the trace has none)
 * @param gpusPerNode when positive, the job needs {@code gpus / gpusPerNode} whole nodes' worth of
 *     GPUs on distinct nodes; 0 means the GPUs may be packed anywhere
 * @param precedingJobId the trace id of a job this one waits for (SWF's field 17, "preceding job
 *     number"): it is submitted only {@code thinkTimeSec} after that job ends; 0 for none
 * @param thinkTimeSec seconds from the preceding job's end to this job's submission (SWF's field
 *     18); 0 without a preceding job
 */
public record TraceJob(
    long id,
    long submitSec,
    int gpus,
    long durationSec,
    long timeLimitSec,
    String user,
    String queue,
    int priority,
    int gpusPerNode,
    long precedingJobId,
    long thinkTimeSec) {

  /** A job that depends on no other. */
  public TraceJob(
      long id,
      long submitSec,
      int gpus,
      long durationSec,
      long timeLimitSec,
      String user,
      String queue,
      int priority,
      int gpusPerNode) {
    this(id, submitSec, gpus, durationSec, timeLimitSec, user, queue, priority, gpusPerNode, 0, 0);
  }
}
