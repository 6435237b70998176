package io.kairos.protocol.agent;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * Launch one task of a job on this node.
 *
 * @param attempt the job's start count; (jobId, attempt, task) identifies a launch
 * @param task this task's rank in the gang (0-based)
 * @param tasks the gang's size (world size)
 * @param nodes the gang's nodes, in rank order (nodes[0] hosts rank 0)
 * @param gpus the node's GPU indexes this task may see
 * @param env the job's own environment (the agent adds CUDA_VISIBLE_DEVICES, KAIROS_* and the
 *     rendezvous variables)
 * @param workdir empty for the agent's per-job directory
 * @param timeLimitSec the agent stops the task after this long
 * @param masterAddr the host of rank 0's node (its agent's address), for {@code MASTER_ADDR}; null
 *     when unknown
 * @param gpuUuids the UUIDs of {@code gpus}, in the same order, as the node registered them
 *     (CUDA_VISIBLE_DEVICES names GPUs by UUID, which survives renumbering); null when unknown
 * @param killSignal the first signal of a stop (TERM, INT, HUP, QUIT, USR1, USR2); null = TERM
 * @param graceSec seconds between {@code killSignal} and SIGKILL; 0 = the agent's default
 * @param warnSignal a signal sent {@code warnBeforeSec} before the time limit; null for none
 * @param checkpointDir handed to the task as KAIROS_CHECKPOINT_DIR; null for none
 * @param barrier true when the gang starts together: the agent prepares the task, reports it READY,
 *     and starts the process only when a reply's {@code go} names it
 * @param restarts how many times the job was requeued before this attempt
 * @param output where the task's stdout goes, an absolute path with Slurm's patterns (%j job id, %A
 *     array job id, %a array index, %t rank, %N node, %u user, %x job name, %% a '%'), which the
 *     agent resolves; null for {@code stdout.log} in the task's directory
 * @param error where the task's stderr goes, as {@code output}; null for: the {@code output} file
 *     when there is one (as Slurm), else {@code stderr.log} in the task's directory
 * @param runAs the Unix account the task runs as (the job owner's, resolved by the agent through
 *     the node's NSS); null for the agent's own account (controllers before this field)
 * @param script the batch script's text, for the batch step: task 0 of a batch job writes it, as
 *     its owner, into its task directory and runs that copy with {@code command}'s arguments after
 *     the first, once, with a batch step's Slurm variables; null for any other task
 * @param holder for the other tasks of a batch job: the node's share of the allocation, held (GPUs,
 *     CPUs, memory) until the job ends; no program of the job runs there; null for any other task
 */
public record TaskAssignment(
    long jobId,
    int attempt,
    int task,
    int tasks,
    List<String> nodes,
    String name,
    String user,
    List<String> command,
    Map<String, String> env,
    String workdir,
    List<Integer> gpus,
    int cpus,
    long memoryMb,
    long timeLimitSec,
    String masterAddr,
    List<String> gpuUuids,
    String killSignal,
    long graceSec,
    String warnSignal,
    long warnBeforeSec,
    String checkpointDir,
    boolean barrier,
    int restarts,
    String output,
    String error,
    @JsonInclude(JsonInclude.Include.NON_NULL) String runAs,
    @JsonInclude(JsonInclude.Include.NON_NULL) String script,
    @JsonInclude(JsonInclude.Include.NON_NULL) Boolean holder) {

  /** An assignment of a task that runs its command (no batch step, no holder). */
  public TaskAssignment(
      long jobId,
      int attempt,
      int task,
      int tasks,
      List<String> nodes,
      String name,
      String user,
      List<String> command,
      Map<String, String> env,
      String workdir,
      List<Integer> gpus,
      int cpus,
      long memoryMb,
      long timeLimitSec,
      String masterAddr,
      List<String> gpuUuids,
      String killSignal,
      long graceSec,
      String warnSignal,
      long warnBeforeSec,
      String checkpointDir,
      boolean barrier,
      int restarts,
      String output,
      String error,
      String runAs) {
    this(
        jobId,
        attempt,
        task,
        tasks,
        nodes,
        name,
        user,
        command,
        env,
        workdir,
        gpus,
        cpus,
        memoryMb,
        timeLimitSec,
        masterAddr,
        gpuUuids,
        killSignal,
        graceSec,
        warnSignal,
        warnBeforeSec,
        checkpointDir,
        barrier,
        restarts,
        output,
        error,
        runAs,
        null,
        null);
  }

  /** Whether this task only holds its node's share of a batch job's allocation. */
  @JsonIgnore
  public boolean isHolder() {
    return Boolean.TRUE.equals(holder);
  }

  /** Whether this is a batch job's batch step: it runs the script. */
  @JsonIgnore
  public boolean isBatchStep() {
    return script != null;
  }

  /** An assignment that runs as the agent's own account (controllers before {@code runAs}). */
  public TaskAssignment(
      long jobId,
      int attempt,
      int task,
      int tasks,
      List<String> nodes,
      String name,
      String user,
      List<String> command,
      Map<String, String> env,
      String workdir,
      List<Integer> gpus,
      int cpus,
      long memoryMb,
      long timeLimitSec,
      String masterAddr,
      List<String> gpuUuids,
      String killSignal,
      long graceSec,
      String warnSignal,
      long warnBeforeSec,
      String checkpointDir,
      boolean barrier,
      int restarts,
      String output,
      String error) {
    this(
        jobId,
        attempt,
        task,
        tasks,
        nodes,
        name,
        user,
        command,
        env,
        workdir,
        gpus,
        cpus,
        memoryMb,
        timeLimitSec,
        masterAddr,
        gpuUuids,
        killSignal,
        graceSec,
        warnSignal,
        warnBeforeSec,
        checkpointDir,
        barrier,
        restarts,
        output,
        error,
        null);
  }

  /** An assignment without output or error paths. */
  public TaskAssignment(
      long jobId,
      int attempt,
      int task,
      int tasks,
      List<String> nodes,
      String name,
      String user,
      List<String> command,
      Map<String, String> env,
      String workdir,
      List<Integer> gpus,
      int cpus,
      long memoryMb,
      long timeLimitSec,
      String masterAddr,
      List<String> gpuUuids,
      String killSignal,
      long graceSec,
      String warnSignal,
      long warnBeforeSec,
      String checkpointDir,
      boolean barrier,
      int restarts) {
    this(
        jobId,
        attempt,
        task,
        tasks,
        nodes,
        name,
        user,
        command,
        env,
        workdir,
        gpus,
        cpus,
        memoryMb,
        timeLimitSec,
        masterAddr,
        gpuUuids,
        killSignal,
        graceSec,
        warnSignal,
        warnBeforeSec,
        checkpointDir,
        barrier,
        restarts,
        null,
        null);
  }

  /** An assignment with the fields of the first protocol version. */
  public TaskAssignment(
      long jobId,
      int attempt,
      int task,
      int tasks,
      List<String> nodes,
      String name,
      String user,
      List<String> command,
      Map<String, String> env,
      String workdir,
      List<Integer> gpus,
      int cpus,
      long memoryMb,
      long timeLimitSec,
      String masterAddr) {
    this(
        jobId,
        attempt,
        task,
        tasks,
        nodes,
        name,
        user,
        command,
        env,
        workdir,
        gpus,
        cpus,
        memoryMb,
        timeLimitSec,
        masterAddr,
        null,
        null,
        0,
        null,
        0,
        null,
        false,
        0,
        null,
        null);
  }

  /** An assignment without a known rank-0 host. */
  public TaskAssignment(
      long jobId,
      int attempt,
      int task,
      int tasks,
      List<String> nodes,
      String name,
      String user,
      List<String> command,
      Map<String, String> env,
      String workdir,
      List<Integer> gpus,
      int cpus,
      long memoryMb,
      long timeLimitSec) {
    this(
        jobId,
        attempt,
        task,
        tasks,
        nodes,
        name,
        user,
        command,
        env,
        workdir,
        gpus,
        cpus,
        memoryMb,
        timeLimitSec,
        null);
  }
}
