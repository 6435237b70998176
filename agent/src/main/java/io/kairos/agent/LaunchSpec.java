package io.kairos.agent;

import io.kairos.agent.account.Account;
import io.kairos.protocol.agent.TaskAssignment;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * How to start one task: the program and its arguments (no shell), the full environment, the
 * working directory and where stdout and stderr go. Built from an assignment by {@link #of}, a pure
 * function: it touches no file and reads no environment of its own.
 *
 * <p>The environment is built in layers, later layers winning:
 *
 * <ol>
 *   <li>the agent's own environment, less its {@code KAIROS_*} variables (which may hold the join
 *       token) and any {@code SLURM_*} and {@code SLURMD_*} ones (an agent started inside a Slurm
 *       job must not hand its own identity on);
 *   <li>the rendezvous address: {@code MASTER_ADDR}, {@code MASTER_PORT};
 *   <li>the job's own {@code env} (so a job may choose its rendezvous address);
 *   <li>what the task is and may use, which the job cannot override: {@code CUDA_VISIBLE_DEVICES}
 *       and {@code NVIDIA_VISIBLE_DEVICES} (GPU UUIDs when the node reported them, else indexes),
 *       {@code KAIROS_*} (including {@code KAIROS_GPUS}, the indexes, {@code KAIROS_RESTART_COUNT}
 *       and {@code KAIROS_CHECKPOINT_DIR}), {@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK},
 *       {@code LOCAL_WORLD_SIZE}, {@code NODE_RANK}, and Slurm's names for the same things, so that
 *       scripts written for Slurm run unchanged: {@code SLURM_JOB_ID} and {@code SLURM_JOBID},
 *       {@code SLURM_JOB_NAME}, {@code SLURM_PROCID} (= RANK), {@code SLURM_NTASKS} and {@code
 *       SLURM_NPROCS} (= WORLD_SIZE), {@code SLURM_NNODES} and {@code SLURM_JOB_NUM_NODES}, {@code
 *       SLURM_NODEID} (= NODE_RANK), {@code SLURM_LOCALID} (= LOCAL_RANK), {@code
 *       SLURM_JOB_NODELIST} and {@code SLURM_NODELIST} (the gang's nodes, comma-separated, not
 *       compressed to n[1-2]), {@code SLURMD_NODENAME}, {@code SLURM_GPUS_ON_NODE}, {@code
 *       SLURM_CPUS_PER_TASK} (when the job asked for CPUs), {@code SLURM_RESTART_COUNT} (=
 *       KAIROS_RESTART_COUNT), {@code SLURM_SUBMIT_DIR} (the working directory) and, for an array
 *       job ({@code KAIROS_ARRAY_*} in the job's env), {@code SLURM_ARRAY_JOB_ID} and {@code
 *       SLURM_ARRAY_TASK_ID}.
 * </ol>
 *
 * <p>A batch job's tasks are started as {@link BatchStep} says: the batch step runs the script's
 * copy with a batch step's environment, and the other tasks only hold their node.
 *
 * <p>Output goes to {@code stdout.log} and {@code stderr.log} in the task directory, unless the
 * assignment names files ({@code output}, {@code error}: Slurm's {@code --output} and {@code
 * --error}); their patterns are resolved here ({@link #resolve}). With {@code output} alone, stderr
 * goes to the same file, as in Slurm.
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
    String script) {

  /** A launch that is not a batch step. */
  public LaunchSpec(
      TaskKey key,
      List<String> argv,
      Map<String, String> env,
      Path workdir,
      Path taskDir,
      Path stdout,
      Path stderr,
      Account owner) {
    this(key, argv, env, workdir, taskDir, stdout, stderr, owner, null);
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
    this(key, argv, env, workdir, taskDir, stdout, stderr, null, null);
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
    Path taskDir = taskDir(dataDir, key);
    if (a.isHolder()) {
      // Holds the node's share of a batch job's allocation: nothing of the job runs here.
      return new LaunchSpec(
          key,
          BatchStep.HOLDER_ARGV,
          environment(a, node, agentEnv, taskDir),
          taskDir,
          taskDir,
          taskDir.resolve("stdout.log"),
          taskDir.resolve("stderr.log"));
    }
    Path workdir =
        a.workdir() == null || a.workdir().isBlank() ? taskDir : taskDir.resolve(a.workdir());
    Path stdout =
        isSet(a.output())
            ? outputPath(resolve(a.output(), a, node), "output")
            : taskDir.resolve("stdout.log");
    Path stderr =
        isSet(a.error())
            ? outputPath(resolve(a.error(), a, node), "error")
            : isSet(a.output()) ? stdout : taskDir.resolve("stderr.log");
    Map<String, String> env = environment(a, node, agentEnv, workdir);
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
        a.isBatchStep() ? a.script() : null);
  }

  /** The same launch, starting {@code argv} instead (a wrapper around the task's own). */
  public LaunchSpec withArgv(List<String> argv) {
    return new LaunchSpec(key, argv, env, workdir, taskDir, stdout, stderr, owner, script);
  }

  /** The same launch, started as {@code owner} with environment {@code env}. */
  public LaunchSpec withOwner(Account owner, List<String> argv, Map<String, String> env) {
    return new LaunchSpec(key, argv, env, workdir, taskDir, stdout, stderr, owner, script);
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
        case 't' -> out.append(a.task());
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

  private static Map<String, String> environment(
      TaskAssignment a, String node, Map<String, String> agentEnv, Path workdir) {
    var env = new TreeMap<String, String>();
    // 1. The agent's environment, without its own settings.
    agentEnv.forEach(
        (k, v) -> {
          if (!k.startsWith("KAIROS_") && !k.startsWith("SLURM_") && !k.startsWith("SLURMD_")) {
            env.put(k, v);
          }
        });
    // 2. Rendezvous address, which a job may override.
    env.put(
        "MASTER_ADDR",
        a.masterAddr() == null || a.masterAddr().isBlank() ? UNKNOWN_MASTER_ADDR : a.masterAddr());
    env.put("MASTER_PORT", Integer.toString(MASTER_PORT_BASE + (int) (a.jobId() % 1000)));
    // 3. The job's own variables.
    if (a.env() != null) {
      a.env().forEach((k, v) -> env.put(k, v == null ? "" : v));
    }
    // 4. Identity and devices, which it may not.
    String indexes =
        a.gpus() == null
            ? ""
            : a.gpus().stream().map(String::valueOf).collect(Collectors.joining(","));
    // By UUID when known: CUDA renumbers the visible devices from 0, and a UUID names the same
    // device whatever the enumeration order (CUDA_DEVICE_ORDER) or a GPU falling off the bus.
    // Emulated GPUs keep their indexes: their made-up UUIDs would mean nothing to CUDA.
    String gpus =
        a.gpuUuids() != null
                && a.gpus() != null
                && a.gpuUuids().size() == a.gpus().size()
                && a.gpuUuids().stream().noneMatch(EmulatedGpus::isEmulated)
            ? String.join(",", a.gpuUuids())
            : indexes;
    env.put("CUDA_VISIBLE_DEVICES", gpus);
    env.put("NVIDIA_VISIBLE_DEVICES", gpus);
    env.put("KAIROS_GPUS", indexes);
    env.put("KAIROS_RESTART_COUNT", Integer.toString(a.restarts()));
    if (a.checkpointDir() != null && !a.checkpointDir().isBlank()) {
      env.put("KAIROS_CHECKPOINT_DIR", a.checkpointDir());
    } else {
      env.remove("KAIROS_CHECKPOINT_DIR");
    }
    List<String> nodes = a.nodes() == null ? List.of() : a.nodes();
    env.put("KAIROS_JOB_ID", Long.toString(a.jobId()));
    env.put("KAIROS_JOB_NAME", Objects.requireNonNullElse(a.name(), ""));
    env.put("KAIROS_ATTEMPT", Integer.toString(a.attempt()));
    env.put("KAIROS_TASK", Integer.toString(a.task()));
    env.put("KAIROS_TASKS", Integer.toString(a.tasks()));
    env.put("KAIROS_NODE", node);
    env.put("KAIROS_NODES", String.join(",", nodes));
    env.put("KAIROS_USER", Objects.requireNonNullElse(a.user(), ""));
    env.put("RANK", Integer.toString(a.task()));
    env.put("WORLD_SIZE", Integer.toString(a.tasks()));
    env.put("LOCAL_RANK", "0");
    env.put("LOCAL_WORLD_SIZE", "1");
    env.put("NODE_RANK", Integer.toString(a.task()));
    slurm(env, a, node, nodes, workdir);
    return env;
  }

  /** Slurm's names for what the task is, so that scripts written for Slurm run unchanged. */
  private static void slurm(
      Map<String, String> env, TaskAssignment a, String node, List<String> nodes, Path workdir) {
    String jobId = Long.toString(a.jobId());
    String tasks = Integer.toString(a.tasks());
    String nodeList = String.join(",", nodes);
    env.put("SLURM_JOB_ID", jobId);
    env.put("SLURM_JOBID", jobId);
    env.put("SLURM_JOB_NAME", Objects.requireNonNullElse(a.name(), ""));
    env.put("SLURM_PROCID", Integer.toString(a.task()));
    env.put("SLURM_NTASKS", tasks);
    env.put("SLURM_NPROCS", tasks);
    // One task per node: the gang's size is its node count.
    env.put("SLURM_NNODES", tasks);
    env.put("SLURM_JOB_NUM_NODES", tasks);
    env.put("SLURM_NODEID", Integer.toString(a.task()));
    env.put("SLURM_LOCALID", "0");
    env.put("SLURM_JOB_NODELIST", nodeList);
    env.put("SLURM_NODELIST", nodeList);
    env.put("SLURMD_NODENAME", node);
    env.put("SLURM_GPUS_ON_NODE", Integer.toString(a.gpus() == null ? 0 : a.gpus().size()));
    if (a.cpus() > 0) {
      env.put("SLURM_CPUS_PER_TASK", Integer.toString(a.cpus()));
    } else {
      env.remove("SLURM_CPUS_PER_TASK");
    }
    env.put("SLURM_RESTART_COUNT", Integer.toString(a.restarts()));
    env.put("SLURM_SUBMIT_DIR", workdir.toString());
    Map<String, String> jobEnv = a.env() == null ? Map.of() : a.env();
    String arrayTask = jobEnv.get("KAIROS_ARRAY_TASK_ID");
    if (arrayTask != null && !arrayTask.isBlank()) {
      env.put("SLURM_ARRAY_TASK_ID", arrayTask);
      env.put("SLURM_ARRAY_JOB_ID", orElse(jobEnv.get("KAIROS_ARRAY_JOB_ID"), jobId));
    } else {
      env.remove("SLURM_ARRAY_TASK_ID");
      env.remove("SLURM_ARRAY_JOB_ID");
    }
  }
}
