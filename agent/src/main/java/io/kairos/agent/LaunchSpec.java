package io.kairos.agent;

import io.kairos.agent.account.Account;
import io.kairos.protocol.agent.TaskAssignment;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * How to start one process of a task: the program and its arguments (no shell), the full
 * environment, the working directory and where stdout and stderr go. Built from an assignment by
 * {@link #of}, a pure function: it touches no file and reads no environment of its own.
 *
 * <p>An assignment may start several processes on its node ({@code tasksPerNode}: Slurm's {@code
 * --ntasks-per-node}); {@code local} picks one, and its rank is the entry's first rank plus {@code
 * local}. Its environment is {@link TaskEnvironment}'s.
 *
 * <p>Output goes to {@code stdout.log} and {@code stderr.log} in the task directory, shared by the
 * entry's processes, unless the assignment names files ({@code output}, {@code error}: Slurm's
 * {@code --output} and {@code --error}); their patterns are resolved here ({@link #resolve}), with
 * {@code %t} the process's rank. With {@code output} alone, stderr goes to the same file, as in
 * Slurm. A step's processes ({@code spooled}) write to pipes the agent reads into its own spool
 * files, {@code <dataDir>/spool/<key>/<local>.out} and {@code .err}, which srun reads back through
 * the controller.
 *
 * <p>A batch job's tasks are started as {@link BatchStep} says: the batch step runs the script's
 * copy with a batch step's environment, and the other tasks only hold their node.
 *
 * <p>Example: task 1 of job 42 (attempt 2, 2 tasks on n1 and n2), GPUs 2 and 3, on n2 gives {@code
 * CUDA_VISIBLE_DEVICES=2,3 RANK=1 WORLD_SIZE=2 NODE_RANK=1 KAIROS_NODES=n1,n2 MASTER_PORT=29542},
 * in {@code <dataDir>/tasks/42-2-1/}.
 *
 * @param workdir where the process starts; the task directory unless the assignment names one
 * @param taskDir {@code <dataDir>/tasks/<job>-<attempt>-<task>/}, holding the output files unless
 *     the assignment sends them elsewhere
 * @param stdout where the process' stdout is appended
 * @param stderr where its stderr is appended; may equal {@code stdout}
 * @param owner the account the task runs as, whose own shell opens its files ({@link UserLaunch});
 *     null when the agent opens them itself (tests, and tasks started without an owner)
 * @param local which of the entry's processes this is, from 0
 * @param spooled stdout and stderr are pipes the agent copies to {@code stdout} and {@code stderr}
 *     (a step's tasks), not files the process opens
 * @param script for a batch step ({@link BatchStep}): the script's text, which the task's owner
 *     writes to {@code argv[0]} (in the task directory) before running it; null for other tasks
 */
public record LaunchSpec(
    TaskKey key,
    List<String> argv,
    Map<String, String> env,
    Path workdir,
    Path taskDir,
    Path stdout,
    Path stderr,
    Account owner,
    int local,
    boolean spooled,
    String script) {

  /** The only process of its task, not a batch step, its files opened as {@code owner}. */
  public LaunchSpec(
      TaskKey key,
      List<String> argv,
      Map<String, String> env,
      Path workdir,
      Path taskDir,
      Path stdout,
      Path stderr,
      Account owner) {
    this(key, argv, env, workdir, taskDir, stdout, stderr, owner, 0, false, null);
  }

  /** A launch whose files the agent opens itself. */
  public LaunchSpec(
      TaskKey key,
      List<String> argv,
      Map<String, String> env,
      Path workdir,
      Path taskDir,
      Path stdout,
      Path stderr) {
    this(key, argv, env, workdir, taskDir, stdout, stderr, (Account) null);
  }

  /** The first rendezvous port; a job's port is this plus its id modulo 1000. */
  public static final int MASTER_PORT_BASE = 29_500;

  /** Slurm's %a outside an array job: NO_VAL, as Slurm writes it. */
  static final String NO_ARRAY_INDEX = "4294967294";

  /** Used until assignments carry the address of the node hosting rank 0. */
  static final String UNKNOWN_MASTER_ADDR = "127.0.0.1";

  public LaunchSpec {
    Objects.requireNonNull(key, "key");
    argv = List.copyOf(argv);
    env = Collections.unmodifiableSortedMap(new TreeMap<>(env));
    Objects.requireNonNull(workdir, "workdir");
    Objects.requireNonNull(taskDir, "taskDir");
    Objects.requireNonNull(stdout, "stdout");
    Objects.requireNonNull(stderr, "stderr");
  }

  /**
   * The launch of {@code a} on node {@code node}.
   *
   * @param agentEnv the agent's own environment ({@code System.getenv()} in production)
   * @throws IllegalArgumentException when the assignment cannot be launched (no command, a rank
   *     outside the gang, a kill or warning signal not in {@link ProcessLauncher#SIGNALS}), naming
   *     the field
   */
  public static LaunchSpec of(
      TaskAssignment a, String node, Path dataDir, Map<String, String> agentEnv) {
    return of(a, node, dataDir, agentEnv, Map.of(), 0);
  }

  /**
   * The launch of process {@code local} of {@code a} on node {@code node}.
   *
   * @param agentEnv the agent's own environment ({@code System.getenv()} in production)
   * @param kairosEnv what the agent tells every task about Kairos ({@link TaskEnvironment#SERVER},
   *     {@link TaskEnvironment#CA}, {@link TaskEnvironment#BIN}); empty for nothing
   * @throws IllegalArgumentException when the assignment cannot be launched (no command, a rank
   *     outside the gang, processes or GPUs per task that do not fit, a kill or warning signal not
   *     in {@link ProcessLauncher#SIGNALS}), naming the field
   */
  public static LaunchSpec of(
      TaskAssignment a,
      String node,
      Path dataDir,
      Map<String, String> agentEnv,
      Map<String, String> kairosEnv,
      int local) {
    TaskKey key = TaskKey.of(a);
    List<String> argv = a.command() == null ? List.of() : a.command();
    if (argv.isEmpty() || argv.getFirst() == null || argv.getFirst().isBlank()) {
      throw new IllegalArgumentException("command must not be empty");
    }
    if (argv.stream().anyMatch(Objects::isNull)) {
      throw new IllegalArgumentException("command must not contain null arguments");
    }
    if (a.tasks() < 1 || a.task() >= a.tasks()) {
      throw new IllegalArgumentException(
          "task must be between 0 and tasks - 1 = " + (a.tasks() - 1) + ", got " + a.task());
    }
    // Refused here, not when the signal is due: a stop that throws would leave the task running
    // and abort a killAll or killAllNow half way, with the other tasks still running too.
    checkSignal(a.killSignal(), "killSignal");
    checkSignal(a.warnSignal(), "warnSignal");
    checkLayout(a, local);
    Path taskDir = taskDir(dataDir, key);
    if (a.isHolder()) {
      // Holds the node's share of a batch job's allocation: nothing of the job runs here.
      return new LaunchSpec(
          key,
          BatchStep.HOLDER_ARGV,
          TaskEnvironment.of(a, node, agentEnv, kairosEnv, taskDir, 0),
          taskDir,
          taskDir,
          taskDir.resolve("stdout.log"),
          taskDir.resolve("stderr.log"));
    }
    Path workdir =
        a.workdir() == null || a.workdir().isBlank() ? taskDir : taskDir.resolve(a.workdir());
    int rank = a.firstRank() + local;
    Path stdout;
    Path stderr;
    if (key.isStep()) {
      Path spool = spoolDir(dataDir, key);
      stdout = spool.resolve(local + ".out");
      stderr = spool.resolve(local + ".err");
    } else {
      stdout =
          isSet(a.output())
              ? outputPath(resolve(a.output(), a, node, rank), "output")
              : taskDir.resolve("stdout.log");
      stderr =
          isSet(a.error())
              ? outputPath(resolve(a.error(), a, node, rank), "error")
              : isSet(a.output()) ? stdout : taskDir.resolve("stderr.log");
    }
    var env = TaskEnvironment.of(a, node, agentEnv, kairosEnv, workdir, local);
    TaskCheckpoints.environment(env, a, dataDir, kairosEnv);
    if (a.isBatchStep()) {
      BatchStep.environment(env, a);
      argv = BatchStep.argv(a, taskDir);
    }
    return new LaunchSpec(
        key,
        argv,
        env,
        workdir,
        taskDir,
        stdout,
        stderr,
        null,
        local,
        key.isStep(),
        a.isBatchStep() ? a.script() : null);
  }

  /** One launch per process of {@code a}'s entry, started as {@code owner} when there is one. */
  static List<LaunchSpec> all(
      TaskAssignment a,
      String node,
      Path dataDir,
      Map<String, String> agentEnv,
      Map<String, String> kairosEnv,
      Account owner) {
    var out = new java.util.ArrayList<LaunchSpec>(a.localTasks());
    for (int local = 0; local < Math.max(1, a.localTasks()); local++) {
      LaunchSpec spec = of(a, node, dataDir, agentEnv, kairosEnv, local);
      out.add(owner == null ? spec : UserLaunch.wrap(spec, owner, a.env()));
    }
    return List.copyOf(out);
  }

  /** Refuses a process outside its entry, or processes and GPUs per task that do not fit. */
  private static void checkLayout(TaskAssignment a, int local) {
    if (a.tasksPerNode() != null) {
      if (a.tasksPerNode().size() != a.tasks()) {
        throw new IllegalArgumentException(
            "tasksPerNode must have one count per node ("
                + a.tasks()
                + "), got "
                + a.tasksPerNode());
      }
      for (Integer n : a.tasksPerNode()) {
        if (n == null || n < 1 || n > io.kairos.protocol.slurm.TaskLayout.MAX_PER_NODE) {
          throw new IllegalArgumentException(
              "tasksPerNode counts must be between 1 and "
                  + io.kairos.protocol.slurm.TaskLayout.MAX_PER_NODE
                  + ", got "
                  + a.tasksPerNode());
        }
      }
    }
    if (local < 0 || local >= a.localTasks()) {
      throw new IllegalArgumentException(
          "process " + local + " is outside the node's " + a.localTasks());
    }
    int perTask = a.gpusPerTask() == null ? 0 : a.gpusPerTask();
    int gpus = a.gpus() == null ? 0 : a.gpus().size();
    if (perTask < 0 || perTask * a.localTasks() > gpus) {
      throw new IllegalArgumentException(
          "gpusPerTask "
              + perTask
              + " x "
              + a.localTasks()
              + " processes is more than the node's "
              + gpus
              + " GPUs");
    }
  }

  /** {@code <dataDir>/spool/<key>}: where the agent keeps a step's output (agent-owned, 0700). */
  public static Path spoolDir(Path dataDir, TaskKey key) {
    return dataDir.resolve("spool").resolve(key.dirName());
  }

  /** The same launch, starting {@code argv} instead (a wrapper around the task's own). */
  public LaunchSpec withArgv(List<String> argv) {
    return new LaunchSpec(
        key, argv, env, workdir, taskDir, stdout, stderr, owner, local, spooled, script);
  }

  /** The same launch, started as {@code owner} with environment {@code env}. */
  public LaunchSpec withOwner(Account owner, List<String> argv, Map<String, String> env) {
    return new LaunchSpec(
        key, argv, env, workdir, taskDir, stdout, stderr, owner, local, spooled, script);
  }

  /** The batch script's copy in the task directory; null when this is not a batch step. */
  public Path scriptFile() {
    return script == null ? null : taskDir.resolve(BatchStep.SCRIPT_FILE);
  }

  /** {@code <dataDir>/tasks/<key>.task}: the agent's own record of the task's files and owner. */
  public Path filesRecord() {
    return taskDir.resolveSibling(key.dirName() + ".task");
  }

  /** True when stdout is sent somewhere other than the task directory. */
  public boolean isRedirected() {
    return !stdout.equals(taskDir.resolve("stdout.log"))
        || !stderr.equals(taskDir.resolve("stderr.log"));
  }

  private static boolean isSet(String text) {
    return text != null && !text.isBlank();
  }

  private static Path outputPath(String resolved, String field) {
    if (!resolved.startsWith("/") || resolved.indexOf('\0') >= 0) {
      throw new IllegalArgumentException(
          field + " must be an absolute path, got '" + resolved + "'");
    }
    return Path.of(resolved).normalize();
  }

  /**
   * Slurm's filename patterns in {@code pattern}, filled in for task {@code a} on {@code node}: %j
   * job id, %A array job id, %a array index, %t rank, %N node, %u user, %x job name, %% a '%'. %A
   * and %a come from the job's {@code KAIROS_ARRAY_JOB_ID} and {@code KAIROS_ARRAY_TASK_ID};
   * outside an array job they are the job id and 4294967294, as in Slurm. Any other letter after
   * '%' is kept as written (the controller refuses such patterns).
   *
   * <p>Example: "/logs/%x-%j.%t.out" for rank 1 of job 42 "train" gives "/logs/train-42.1.out".
   */
  public static String resolve(String pattern, TaskAssignment a, String node) {
    return resolve(pattern, a, node, a.task());
  }

  /** As {@link #resolve(String, TaskAssignment, String)}, with {@code %t} the given rank. */
  public static String resolve(String pattern, TaskAssignment a, String node, int rank) {
    Map<String, String> jobEnv = a.env() == null ? Map.of() : a.env();
    String jobId = Long.toString(a.jobId());
    var out = new StringBuilder(pattern.length() + 16);
    for (int i = 0; i < pattern.length(); i++) {
      char c = pattern.charAt(i);
      if (c != '%' || i + 1 == pattern.length()) {
        out.append(c);
        continue;
      }
      char letter = pattern.charAt(++i);
      switch (letter) {
        case 'j' -> out.append(jobId);
        case 'A' -> out.append(orElse(jobEnv.get("KAIROS_ARRAY_JOB_ID"), jobId));
        case 'a' -> out.append(orElse(jobEnv.get("KAIROS_ARRAY_TASK_ID"), NO_ARRAY_INDEX));
        case 't' -> out.append(rank);
        case 'N' -> out.append(node);
        case 'u' -> out.append(Objects.requireNonNullElse(a.user(), ""));
        // A name may hold '/': it must not open a directory of its own.
        case 'x' -> out.append(Objects.requireNonNullElse(a.name(), "").replace('/', '_'));
        case '%' -> out.append('%');
        default -> out.append('%').append(letter);
      }
    }
    return out.toString();
  }

  private static String orElse(String value, String fallback) {
    return value == null || value.isBlank() ? fallback : value;
  }

  private static void checkSignal(String signal, String field) {
    if (signal != null && !ProcessLauncher.SIGNALS.contains(signal)) {
      throw new IllegalArgumentException(
          field + " must be one of " + ProcessLauncher.SIGNALS + ", got " + signal);
    }
  }

  /** {@code <dataDir>/tasks/<job>-<attempt>-<task>}. */
  public static Path taskDir(Path dataDir, TaskKey key) {
    return dataDir.resolve("tasks").resolve(key.dirName());
  }
}
