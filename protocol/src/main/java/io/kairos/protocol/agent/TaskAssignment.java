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
 * @param checkpointDir the job's checkpoint location: a directory (KAIROS_CHECKPOINT_DIR) or an
 *     {@code s3://} URL (KAIROS_CHECKPOINT_URL); null for none
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
 * @param step null for the job's own tasks; else the job step (srun) this launch belongs to, and
 *     then {@code task} indexes the step's nodes, {@code tasks} counts them and {@code nodes} names
 *     them (the job's are {@code jobNodes})
 * @param tasksPerNode how many processes each entry of {@code nodes} starts (ranks count up entry
 *     by entry: Slurm's block distribution); null for one each
 * @param gpusPerTask each process sees this many of {@code gpus}, by its local rank; null or 0 for
 *     all of them
 * @param jobNodes the job's nodes when {@code nodes} are a step's; null when the same
 * @param script the batch script's text, for the batch step: task 0 of a batch job writes it, as
 *     its owner, into its task directory and runs that copy with {@code command}'s arguments after
 *     the first, once, with a batch step's Slurm variables; null for any other task
 * @param holder for the other tasks of a batch job: the node's share of the allocation, held (GPUs,
 *     CPUs, memory) until the job ends; no program of the job runs there; null for any other task
 * @param jobToken the job's step credential, handed to its processes so that their {@code srun} may
 *     start steps in this job (and only this one); null for none. A secret: never logged
 * @param checkpoint the job's checkpoint declaration and its newest recorded step, for the task's
 *     {@code KAIROS_CHECKPOINT_*} variables; null for a job that does not declare checkpoints
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
    @JsonInclude(JsonInclude.Include.NON_NULL) Integer step,
    @JsonInclude(JsonInclude.Include.NON_NULL) List<Integer> tasksPerNode,
    @JsonInclude(JsonInclude.Include.NON_NULL) Integer gpusPerTask,
    @JsonInclude(JsonInclude.Include.NON_NULL) List<String> jobNodes,
    @JsonInclude(JsonInclude.Include.NON_NULL) String jobToken,
    @JsonInclude(JsonInclude.Include.NON_NULL) String script,
    @JsonInclude(JsonInclude.Include.NON_NULL) Boolean holder,
    @JsonInclude(JsonInclude.Include.NON_NULL) TaskCheckpoint checkpoint) {

  /** This assignment telling its task about the job's checkpoints. */
  public TaskAssignment withCheckpoint(TaskCheckpoint checkpoint) {
    return new TaskAssignment(
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
        step,
        tasksPerNode,
        gpusPerTask,
        jobNodes,
        jobToken,
        script,
        holder,
        checkpoint);
  }

  /** An assignment of the job's own tasks, one process each (controllers before steps). */
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
        null,
        null,
        null,
        null,
        null,
        null,
        null);
  }

  /** An assignment with tasks per node, a step or a credential (not a batch step or holder). */
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
      String runAs,
      Integer step,
      List<Integer> tasksPerNode,
      Integer gpusPerTask,
      List<String> jobNodes,
      String jobToken) {
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
        step,
        tasksPerNode,
        gpusPerTask,
        jobNodes,
        jobToken,
        null,
        null,
        null);
  }

  /** A batch job's task: its batch step ({@code script}) or a holder. */
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
      String runAs,
      String script,
      Boolean holder) {
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
        null,
        null,
        null,
        null,
        script,
        holder,
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

  /** The processes this entry starts: its count in {@code tasksPerNode}, else one. */
  public int localTasks() {
    return script != null
            || isHolder()
            || tasksPerNode == null
            || task < 0
            || task >= tasksPerNode.size()
        ? 1
        : tasksPerNode.get(task);
  }

  /** The global rank of this entry's first process. */
  public int firstRank() {
    if (tasksPerNode == null) {
      return task;
    }
    int rank = 0;
    for (int i = 0; i < task && i < tasksPerNode.size(); i++) {
      rank += tasksPerNode.get(i);
    }
    return rank;
  }

  /** Every process of the job (or step): the sum of {@code tasksPerNode}, else {@code tasks}. */
  public int worldSize() {
    if (tasksPerNode == null) {
      return tasks;
    }
    int sum = 0;
    for (int n : tasksPerNode) {
      sum += n;
    }
    return sum;
  }

  /** The job's nodes: {@code jobNodes}, else {@code nodes}. */
  public List<String> allocation() {
    return jobNodes != null ? jobNodes : nodes == null ? List.of() : nodes;
  }

  /** Whether this launches a step's tasks rather than the job's own. */
  public boolean launchesStep() {
    return step != null;
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
