package io.kairos.control.state;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.kairos.protocol.slurm.TaskLayout;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A validated submission with every default applied: what the log records for a new job.
 *
 * @param gpusPerNode 0 when the job runs as one process on one node
 * @param memoryMb per process; 0 = not limited
 * @param killSignal the first signal of a stop: TERM, INT, HUP, QUIT, USR1 or USR2
 * @param graceSec seconds from {@code killSignal} to SIGKILL
 * @param warnSignal sent {@code warnBeforeSec} before the time limit; null for none
 * @param checkpointDir the checkpoint location handed to every task: a directory or an {@code
 *     s3://} URL; empty for none
 * @param maxRestarts how often a failed task restarts the gang before the job fails
 * @param excludeNodes nodes the job must not run on, sorted
 * @param array null for one job; else the submit makes one job per task id
 * @param dependency null for none; else the job waits (out of the scheduler's store) until it holds
 * @param output where each task's stdout goes, a path with Slurm's patterns (%j, %t, ...); empty
 *     for the task's own directory
 * @param error where each task's stderr goes, as {@code output}; empty for: with {@code output},
 *     the same file, else the task's own directory
 * @param account the fair-share account charged; with tenancy, resolved at submission (the job's
 *     own, else its queue's default, else the user); empty without tenancy unless given
 * @param priorityClass the job's priority class, resolved at submission as {@code account}; empty
 *     for none. With a class, {@code priority} is the class's value
 * @param runAs the Unix account the job's tasks run as, from the user table at submission (so a
 *     replay does not depend on the table); null in entries written before it, which run as {@code
 *     user} ({@link #unixAccount}), and left out of the log's JSON when null so that they encode as
 *     they did
 * @param layout Slurm's task options (several processes per node, GPUs per task); null for one
 *     process per node with all its GPUs ({@link #taskLayout}), and then left out of the log's JSON
 * @param script a batch job's script text (its first task runs it once; the other nodes hold the
 *     allocation, and the job ends with the script); null for a job whose command runs on every
 *     node, and then left out of the log's JSON
 * @param nodes for a job without GPUs per node: how many nodes it spreads over, one task each; 0
 *     (left out of the log's JSON) for one
 * @param checkpoint the job checkpoints with Kairos (a private directory, recorded checkpoints,
 *     preemption by checkpoint); null (left out of the log's JSON) for a job that does not
 * @param maxGpus for an elastic job, the most GPUs it may grow to ({@code gpus} is its minimum;
 *     both multiples of {@code gpusPerNode}); 0 (left out of the log's JSON) for a job of a fixed
 *     size
 */
public record JobRequest(
    String name,
    List<String> command,
    Map<String, String> env,
    String workdir,
    int gpus,
    int gpusPerNode,
    int cpus,
    long memoryMb,
    long timeLimitSec,
    String queue,
    int priority,
    String gpuModel,
    String user,
    String killSignal,
    long graceSec,
    String warnSignal,
    long warnBeforeSec,
    String checkpointDir,
    int maxRestarts,
    List<String> excludeNodes,
    JobArray array,
    Dependency dependency,
    String output,
    String error,
    String account,
    String priorityClass,
    @JsonInclude(JsonInclude.Include.NON_NULL) String runAs,
    @JsonInclude(JsonInclude.Include.NON_NULL) TaskLayout layout,
    @JsonInclude(JsonInclude.Include.NON_NULL) String script,
    @JsonInclude(JsonInclude.Include.NON_DEFAULT) int nodes,
    @JsonInclude(JsonInclude.Include.NON_NULL) CheckpointPolicy checkpoint,
    @JsonInclude(JsonInclude.Include.NON_DEFAULT) int maxGpus) {
  public static final String DEFAULT_KILL_SIGNAL = "TERM";
  public static final long DEFAULT_GRACE_SEC = 30;

  /** A request without a recorded Unix account (entries written before the user table). */
  public JobRequest(
      String name,
      List<String> command,
      Map<String, String> env,
      String workdir,
      int gpus,
      int gpusPerNode,
      int cpus,
      long memoryMb,
      long timeLimitSec,
      String queue,
      int priority,
      String gpuModel,
      String user,
      String killSignal,
      long graceSec,
      String warnSignal,
      long warnBeforeSec,
      String checkpointDir,
      int maxRestarts,
      List<String> excludeNodes,
      JobArray array,
      Dependency dependency,
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
        timeLimitSec,
        queue,
        priority,
        gpuModel,
        user,
        killSignal,
        graceSec,
        warnSignal,
        warnBeforeSec,
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
        0,
        null,
        0);
  }

  /** A request without account or priority class (entries written before tenancy). */
  public JobRequest(
      String name,
      List<String> command,
      Map<String, String> env,
      String workdir,
      int gpus,
      int gpusPerNode,
      int cpus,
      long memoryMb,
      long timeLimitSec,
      String queue,
      int priority,
      String gpuModel,
      String user,
      String killSignal,
      long graceSec,
      String warnSignal,
      long warnBeforeSec,
      String checkpointDir,
      int maxRestarts,
      List<String> excludeNodes,
      JobArray array,
      Dependency dependency,
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
        timeLimitSec,
        queue,
        priority,
        gpuModel,
        user,
        killSignal,
        graceSec,
        warnSignal,
        warnBeforeSec,
        checkpointDir,
        maxRestarts,
        excludeNodes,
        array,
        dependency,
        output,
        error,
        "",
        "");
  }

  /** A request with the fields of the first log format; the others take their defaults. */
  public JobRequest(
      String name,
      List<String> command,
      Map<String, String> env,
      String workdir,
      int gpus,
      int gpusPerNode,
      int cpus,
      long memoryMb,
      long timeLimitSec,
      String queue,
      int priority,
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
        timeLimitSec,
        queue,
        priority,
        gpuModel,
        user,
        null,
        DEFAULT_GRACE_SEC,
        null,
        0,
        null,
        0,
        null,
        null,
        null,
        null,
        null);
  }

  /** A request without array, dependency, output or error. */
  public JobRequest(
      String name,
      List<String> command,
      Map<String, String> env,
      String workdir,
      int gpus,
      int gpusPerNode,
      int cpus,
      long memoryMb,
      long timeLimitSec,
      String queue,
      int priority,
      String gpuModel,
      String user,
      String killSignal,
      long graceSec,
      String warnSignal,
      long warnBeforeSec,
      String checkpointDir,
      int maxRestarts,
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
        timeLimitSec,
        queue,
        priority,
        gpuModel,
        user,
        killSignal,
        graceSec,
        warnSignal,
        warnBeforeSec,
        checkpointDir,
        maxRestarts,
        excludeNodes,
        null,
        null,
        null,
        null);
  }

  /** A request without output or error paths. */
  public JobRequest(
      String name,
      List<String> command,
      Map<String, String> env,
      String workdir,
      int gpus,
      int gpusPerNode,
      int cpus,
      long memoryMb,
      long timeLimitSec,
      String queue,
      int priority,
      String gpuModel,
      String user,
      String killSignal,
      long graceSec,
      String warnSignal,
      long warnBeforeSec,
      String checkpointDir,
      int maxRestarts,
      List<String> excludeNodes,
      JobArray array,
      Dependency dependency) {
    this(
        name,
        command,
        env,
        workdir,
        gpus,
        gpusPerNode,
        cpus,
        memoryMb,
        timeLimitSec,
        queue,
        priority,
        gpuModel,
        user,
        killSignal,
        graceSec,
        warnSignal,
        warnBeforeSec,
        checkpointDir,
        maxRestarts,
        excludeNodes,
        array,
        dependency,
        null,
        null);
  }

  public JobRequest {
    // Entries written before these fields existed read them as null or 0.
    layout = layout == null || layout.isOnePerNode() ? null : layout;
    killSignal = killSignal == null ? DEFAULT_KILL_SIGNAL : killSignal;
    checkpointDir = checkpointDir == null ? "" : checkpointDir;
    output = output == null ? "" : output;
    error = error == null ? "" : error;
    account = account == null ? "" : account;
    priorityClass = priorityClass == null ? "" : priorityClass;
    excludeNodes =
        excludeNodes == null ? List.of() : List.copyOf(new java.util.TreeSet<>(excludeNodes));
    Objects.requireNonNull(name, "name");
    command = List.copyOf(command);
    env = Map.copyOf(env);
    Objects.requireNonNull(workdir, "workdir");
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(gpuModel, "gpuModel");
    Objects.requireNonNull(user, "user");
  }

  /** How many jobs the submit makes of this request: one, or one per array element. */
  public int jobCount() {
    return array == null ? 1 : array.taskIds().size();
  }

  /** This request as one array element records it: the same, less the array. */
  public JobRequest element() {
    return copy(null, dependency, account, priorityClass, priority, runAs);
  }

  /** With {@code dependency} in place of this one's (tests and the generator). */
  public JobRequest withDependency(Dependency dependency) {
    return copy(array, dependency, account, priorityClass, priority, runAs);
  }

  /** With {@code array} in place of this one's. */
  public JobRequest withArray(JobArray array) {
    return copy(array, dependency, account, priorityClass, priority, runAs);
  }

  /**
   * Charged to {@code account}, in {@code priorityClass} with {@code priority} (tenancy resolved).
   */
  public JobRequest withTenancy(String account, String priorityClass, int priority) {
    return copy(array, dependency, account, priorityClass, priority, runAs);
  }

  /** Running as Unix account {@code runAs} (resolved at submission from the user table). */
  public JobRequest withRunAs(String runAs) {
    return copy(array, dependency, account, priorityClass, priority, runAs);
  }

  private JobRequest copy(
      JobArray array,
      Dependency dependency,
      String account,
      String priorityClass,
      int priority,
      String runAs) {
    return new JobRequest(
        name,
        command,
        env,
        workdir,
        gpus,
        gpusPerNode,
        cpus,
        memoryMb,
        timeLimitSec,
        queue,
        priority,
        gpuModel,
        user,
        killSignal,
        graceSec,
        warnSignal,
        warnBeforeSec,
        checkpointDir,
        maxRestarts,
        excludeNodes,
        array,
        dependency,
        output,
        error,
        account,
        priorityClass,
        runAs,
        layout,
        script,
        nodes,
        checkpoint,
        maxGpus);
  }

  /** Whether the job may run with {@code gpus} to {@code maxGpus} GPUs. */
  @JsonIgnore
  public boolean isElastic() {
    return maxGpus > gpus;
  }

  /** The most nodes the gang may take: {@link #tasks()} unless elastic. */
  public int maxTasks() {
    return isElastic() ? maxGpus / gpusPerNode : tasks();
  }

  /** The Unix account the tasks run as: the recorded one, else (older entries) the user's name. */
  public String unixAccount() {
    return runAs == null ? user : runAs;
  }

  /** How many nodes the gang takes (the core's tasks: one placement entry per node). */
  public int tasks() {
    return gpusPerNode == 0 ? Math.max(1, nodes) : gpus / gpusPerNode;
  }

  /** Whether it is a batch job: its first task runs the script, the others hold the allocation. */
  @JsonIgnore
  public boolean isBatch() {
    return script != null;
  }

  /** GPUs each node of the gang gives the job (the core's GPUs per task). */
  public int gpusPerTask() {
    return gpusPerNode == 0 ? gpus : gpusPerNode;
  }

  /** The processes per node and their GPUs: {@code layout}, else one per node with all. */
  public TaskLayout taskLayout() {
    return layout == null ? TaskLayout.ONE_PER_NODE : layout;
  }

  /** How many processes each node of the gang starts, in node order. */
  public List<Integer> tasksPerNode() {
    return taskLayout().perNode(tasks());
  }
}
