package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * The body of {@code POST /api/v1/jobs}. Only {@code command} is required; every other field has a
 * default, applied by the controller (not here, so that "absent" stays visible).
 *
 * @param name a label for people; defaults to the command's first word
 * @param command the program and its arguments, run as is on each node (no shell)
 * @param env extra environment variables for the tasks
 * @param workdir the working directory on the node; defaults to the agent's job directory
 * @param gpus total GPUs; default 0. Without {@code gpusPerNode}, all on one node, one process
 * @param gpusPerNode spreads {@code gpus} over {@code gpus / gpusPerNode} distinct nodes, one
 *     process per node, started together (a gang)
 * @param cpus CPUs reserved per process (per node); default 1 for a CPU-only job, 0 for a GPU job
 * @param memoryMb memory per process in MiB; default 0 (not limited)
 * @param timeLimit the longest the job may run: seconds ("3600") or "90s", "30m", "2h", "1d",
 *     "1:30:00"; default 1 day
 * @param queue default "default"
 * @param priority higher first; default 0
 * @param gpuModel the GPU model every node must have (as its agent reports it, e.g. H100); default
 *     any
 * @param user only an admin may submit on behalf of another user; default: the token's user
 * @param killSignal the signal a cancel, time limit or preemption sends first: TERM (default), INT,
 *     HUP, QUIT, USR1 or USR2; SIGKILL follows after {@code gracePeriod}
 * @param gracePeriod how long the job has to checkpoint and exit after {@code killSignal}, before
 *     SIGKILL of its whole process tree; a duration as for {@code timeLimit}; default 30s
 * @param warnSignal a signal sent ahead of the time limit, Slurm's {@code --signal}: "USR1@120"
 *     sends SIGUSR1 120 seconds before the limit; "USR1" alone means 60 seconds
 * @param checkpointDir where the job's checkpoints live, kept across requeues so a requeued job
 *     resumes from its last checkpoint: an absolute path (every task gets {@code
 *     KAIROS_CHECKPOINT_DIR} and a {@code file://} {@code KAIROS_CHECKPOINT_URL}) or an S3 location
 *     {@code s3://bucket/prefix} (every task gets it as {@code KAIROS_CHECKPOINT_URL}, and the
 *     node's endpoint as {@code KAIROS_S3_ENDPOINT})
 * @param maxRestarts how often a failed task (non-zero exit) restarts the whole gang before the job
 *     fails; default 0. Losing a node never counts: such a job is always requeued
 * @param excludeNodes nodes the job must not run on (Slurm's {@code --exclude})
 * @param array Slurm's {@code --array}: "0-15", "1,3,5", "0-15%4" (at most 4 at once), "0-20:2";
 *     one job per index, each with KAIROS_ARRAY_TASK_ID (and SLURM_ARRAY_TASK_ID) set
 * @param dependency Slurm's {@code --dependency}: "afterok:12:13", "afterany:14", "afternotok:15",
 *     "after:16", several joined by ','; the job waits until they hold
 * @param output where each task's stdout goes (Slurm's {@code --output}), an absolute path with
 *     Slurm's patterns: %j job id, %A array job id, %a array index, %t task rank, %N node, %u user,
 *     %x job name, %% a '%'; default the task's own directory on its node
 * @param error where each task's stderr goes (Slurm's {@code --error}), as {@code output}; default:
 *     the {@code output} file when there is one (as in Slurm), else the task's own directory
 * @param account the fair-share account charged for the job (Slurm's {@code --account}); with a
 *     tenancy file it must be one of its accounts; default: the queue's default account, else the
 *     user
 * @param priorityClass a priority class of the tenancy file (Slurm's {@code --qos}); it sets the
 *     job's priority and whether it may be preempted; default: the queue's default class, else none
 *     (the job keeps {@code priority})
 * @param script a batch script's text (Slurm's sbatch): the job's first task runs this copy, with
 *     {@code command}'s arguments after the first, once, on the first node of the allocation; the
 *     other nodes hold their resources until it ends, and the job ends with it. It must start with
 *     {@code #!}; at most {@value #MAX_SCRIPT_BYTES} bytes as UTF-8. Absent for a job whose command
 *     runs on every node
 * @param nodes how many nodes a job without GPUs spreads over, one task on each (Slurm's {@code
 *     --nodes}); a job with {@code gpusPerNode} has {@code gpus / gpusPerNode}; default 1
 * @param ntasks Slurm's {@code --ntasks}: how many processes the job starts in all; default one per
 *     node, or {@code ntasksPerNode} on each
 * @param ntasksPerNode Slurm's {@code --ntasks-per-node}: processes on each node; each gets its own
 *     RANK, LOCAL_RANK, SLURM_PROCID and SLURM_LOCALID; default 1
 * @param gpusPerTask Slurm's {@code --gpus-per-task}: each process sees this many of its node's
 *     GPUs (by local rank); default: every process sees all of them
 * @param qos Slurm's {@code --qos}: the priority class of that name when the controller has one
 *     (unless {@code priorityClass} names one); else the job is accepted without it and the reply
 *     warns, unless the site makes an unknown QOS an error ({@code strictQos})
 * @param checkpoint the job checkpoints with Kairos ({@link CheckpointSpec}): a private checkpoint
 *     directory for every attempt, its checkpoints recorded and pruned, and preemption by
 *     checkpoint; absent for a job that does not declare it
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record JobSubmission(
    String name,
    List<String> command,
    Map<String, String> env,
    String workdir,
    Integer gpus,
    Integer gpusPerNode,
    Integer cpus,
    Long memoryMb,
    String timeLimit,
    String queue,
    Integer priority,
    String gpuModel,
    String user,
    String killSignal,
    String gracePeriod,
    String warnSignal,
    String checkpointDir,
    Integer maxRestarts,
    List<String> excludeNodes,
    String array,
    String dependency,
    String output,
    String error,
    String account,
    String priorityClass,
    Integer ntasks,
    Integer ntasksPerNode,
    Integer gpusPerTask,
    String script,
    Integer nodes,
    String qos,
    CheckpointSpec checkpoint,
    Integer maxGpus) {

  /** This submission elastic from {@code gpus} to {@code maxGpus} (null: a fixed size). */
  public JobSubmission withGpus(Integer gpus, Integer maxGpus) {
    return copy(env, checkpointDir, ntasks, ntasksPerNode, gpusPerTask, checkpoint, gpus, maxGpus);
  }

  /** A submission without a checkpoint declaration. */
  public JobSubmission(
      String name,
      List<String> command,
      Map<String, String> env,
      String workdir,
      Integer gpus,
      Integer gpusPerNode,
      Integer cpus,
      Long memoryMb,
      String timeLimit,
      String queue,
      Integer priority,
      String gpuModel,
      String user,
      String killSignal,
      String gracePeriod,
      String warnSignal,
      String checkpointDir,
      Integer maxRestarts,
      List<String> excludeNodes,
      String array,
      String dependency,
      String output,
      String error,
      String account,
      String priorityClass,
      Integer ntasks,
      Integer ntasksPerNode,
      Integer gpusPerTask,
      String script,
      Integer nodes,
      String qos) {
    this(
        name,
        command,
        env,
        workdir,
        gpus,
        gpusPerNode,
        cpus,
        memoryMb,
        timeLimit,
        queue,
        priority,
        gpuModel,
        user,
        killSignal,
        gracePeriod,
        warnSignal,
        checkpointDir,
        maxRestarts,
        excludeNodes,
        array,
        dependency,
        output,
        error,
        account,
        priorityClass,
        ntasks,
        ntasksPerNode,
        gpusPerTask,
        script,
        nodes,
        qos,
        null,
        null);
  }

  /** This submission declaring {@code checkpoint}. */
  public JobSubmission withCheckpoint(CheckpointSpec checkpoint) {
    return copy(env, checkpointDir, ntasks, ntasksPerNode, gpusPerTask, checkpoint, gpus, maxGpus);
  }

  /** This submission with its checkpoints in {@code location} and {@code env} for its tasks. */
  public JobSubmission withCheckpointLocation(String location, Map<String, String> env) {
    return copy(env, location, ntasks, ntasksPerNode, gpusPerTask, checkpoint, gpus, maxGpus);
  }

  private JobSubmission copy(
      Map<String, String> env,
      String checkpointDir,
      Integer ntasks,
      Integer ntasksPerNode,
      Integer gpusPerTask,
      CheckpointSpec checkpoint,
      Integer gpus,
      Integer maxGpus) {
    return new JobSubmission(
        name,
        command,
        env,
        workdir,
        gpus,
        gpusPerNode,
        cpus,
        memoryMb,
        timeLimit,
        queue,
        priority,
        gpuModel,
        user,
        killSignal,
        gracePeriod,
        warnSignal,
        checkpointDir,
        maxRestarts,
        excludeNodes,
        array,
        dependency,
        output,
        error,
        account,
        priorityClass,
        ntasks,
        ntasksPerNode,
        gpusPerTask,
        script,
        nodes,
        qos,
        checkpoint,
        maxGpus);
  }

  /** The longest batch script, as Slurm's default {@code max_script_size}: 4 MiB. */
  public static final int MAX_SCRIPT_BYTES = 4 << 20;

  /** A submission without a batch script, node count or QOS. */
  public JobSubmission(
      String name,
      List<String> command,
      Map<String, String> env,
      String workdir,
      Integer gpus,
      Integer gpusPerNode,
      Integer cpus,
      Long memoryMb,
      String timeLimit,
      String queue,
      Integer priority,
      String gpuModel,
      String user,
      String killSignal,
      String gracePeriod,
      String warnSignal,
      String checkpointDir,
      Integer maxRestarts,
      List<String> excludeNodes,
      String array,
      String dependency,
      String output,
      String error,
      String account,
      String priorityClass) {
    this(
        name,
        command,
        env,
        workdir,
        gpus,
        gpusPerNode,
        cpus,
        memoryMb,
        timeLimit,
        queue,
        priority,
        gpuModel,
        user,
        killSignal,
        gracePeriod,
        warnSignal,
        checkpointDir,
        maxRestarts,
        excludeNodes,
        array,
        dependency,
        output,
        error,
        account,
        priorityClass,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null);
  }

  /** A submission with Slurm's task options, without a batch script, node count or QOS. */
  public JobSubmission(
      String name,
      List<String> command,
      Map<String, String> env,
      String workdir,
      Integer gpus,
      Integer gpusPerNode,
      Integer cpus,
      Long memoryMb,
      String timeLimit,
      String queue,
      Integer priority,
      String gpuModel,
      String user,
      String killSignal,
      String gracePeriod,
      String warnSignal,
      String checkpointDir,
      Integer maxRestarts,
      List<String> excludeNodes,
      String array,
      String dependency,
      String output,
      String error,
      String account,
      String priorityClass,
      Integer ntasks,
      Integer ntasksPerNode,
      Integer gpusPerTask) {
    this(
        name,
        command,
        env,
        workdir,
        gpus,
        gpusPerNode,
        cpus,
        memoryMb,
        timeLimit,
        queue,
        priority,
        gpuModel,
        user,
        killSignal,
        gracePeriod,
        warnSignal,
        checkpointDir,
        maxRestarts,
        excludeNodes,
        array,
        dependency,
        output,
        error,
        account,
        priorityClass,
        ntasks,
        ntasksPerNode,
        gpusPerTask,
        null,
        null,
        null,
        null,
        null);
  }

  /** A batch submission (script, node count, QOS) without Slurm's task options. */
  public JobSubmission(
      String name,
      List<String> command,
      Map<String, String> env,
      String workdir,
      Integer gpus,
      Integer gpusPerNode,
      Integer cpus,
      Long memoryMb,
      String timeLimit,
      String queue,
      Integer priority,
      String gpuModel,
      String user,
      String killSignal,
      String gracePeriod,
      String warnSignal,
      String checkpointDir,
      Integer maxRestarts,
      List<String> excludeNodes,
      String array,
      String dependency,
      String output,
      String error,
      String account,
      String priorityClass,
      String script,
      Integer nodes,
      String qos) {
    this(
        name,
        command,
        env,
        workdir,
        gpus,
        gpusPerNode,
        cpus,
        memoryMb,
        timeLimit,
        queue,
        priority,
        gpuModel,
        user,
        killSignal,
        gracePeriod,
        warnSignal,
        checkpointDir,
        maxRestarts,
        excludeNodes,
        array,
        dependency,
        output,
        error,
        account,
        priorityClass,
        null,
        null,
        null,
        script,
        nodes,
        qos,
        null,
        null);
  }

  /** This submission with Slurm's task options in place of its own. */
  public JobSubmission withTasks(Integer ntasks, Integer ntasksPerNode, Integer gpusPerTask) {
    return copy(env, checkpointDir, ntasks, ntasksPerNode, gpusPerTask, checkpoint, gpus, maxGpus);
  }

  /** A submission without account or priority class. */
  public JobSubmission(
      String name,
      List<String> command,
      Map<String, String> env,
      String workdir,
      Integer gpus,
      Integer gpusPerNode,
      Integer cpus,
      Long memoryMb,
      String timeLimit,
      String queue,
      Integer priority,
      String gpuModel,
      String user,
      String killSignal,
      String gracePeriod,
      String warnSignal,
      String checkpointDir,
      Integer maxRestarts,
      List<String> excludeNodes,
      String array,
      String dependency,
      String output,
      String error) {
    this(
        name,
        command,
        env,
        workdir,
        gpus,
        gpusPerNode,
        cpus,
        memoryMb,
        timeLimit,
        queue,
        priority,
        gpuModel,
        user,
        killSignal,
        gracePeriod,
        warnSignal,
        checkpointDir,
        maxRestarts,
        excludeNodes,
        array,
        dependency,
        output,
        error,
        null,
        null);
  }

  /** A submission without array or dependency. */
  public JobSubmission(
      String name,
      List<String> command,
      Map<String, String> env,
      String workdir,
      Integer gpus,
      Integer gpusPerNode,
      Integer cpus,
      Long memoryMb,
      String timeLimit,
      String queue,
      Integer priority,
      String gpuModel,
      String user,
      String killSignal,
      String gracePeriod,
      String warnSignal,
      String checkpointDir,
      Integer maxRestarts,
      List<String> excludeNodes) {
    this(
        name,
        command,
        env,
        workdir,
        gpus,
        gpusPerNode,
        cpus,
        memoryMb,
        timeLimit,
        queue,
        priority,
        gpuModel,
        user,
        killSignal,
        gracePeriod,
        warnSignal,
        checkpointDir,
        maxRestarts,
        excludeNodes,
        null,
        null,
        null,
        null);
  }

  /** A submission with the fields of the first API version; the rest take their defaults. */
  public JobSubmission(
      String name,
      List<String> command,
      Map<String, String> env,
      String workdir,
      Integer gpus,
      Integer gpusPerNode,
      Integer cpus,
      Long memoryMb,
      String timeLimit,
      String queue,
      Integer priority,
      String gpuModel,
      String user) {
    this(
        name,
        command,
        env,
        workdir,
        gpus,
        gpusPerNode,
        cpus,
        memoryMb,
        timeLimit,
        queue,
        priority,
        gpuModel,
        user,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null);
  }

  /** The smallest valid submission: a command and a GPU count. */
  public static JobSubmission of(List<String> command, int gpus) {
    return new JobSubmission(
        null, command, null, null, gpus, null, null, null, null, null, null, null, null);
  }
}
