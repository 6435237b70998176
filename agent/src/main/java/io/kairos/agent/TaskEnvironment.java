package io.kairos.agent;

import io.kairos.protocol.CheckpointLocation;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.slurm.HostList;
import io.kairos.protocol.slurm.TaskLayout;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The environment of one process of a task, built in layers, later layers winning:
 *
 * <ol>
 *   <li>the agent's own environment, less its {@code KAIROS_*} variables (which may hold the join
 *       token) and any {@code SLURM_*} and {@code SLURMD_*} ones (an agent started inside a Slurm
 *       job must not hand its own identity on);
 *   <li>the rendezvous address: {@code MASTER_ADDR}, {@code MASTER_PORT};
 *   <li>the job's own {@code env} (so a job may choose its rendezvous address); for a step, srun's
 *       environment (Slurm's {@code --export=ALL});
 *   <li>what the process is and may use, which the job cannot override: {@code
 *       CUDA_VISIBLE_DEVICES} and {@code NVIDIA_VISIBLE_DEVICES} (GPU UUIDs when the node reported
 *       them, else indexes; with {@code gpusPerTask}, the process's own share by local rank),
 *       {@code KAIROS_*} (including {@code KAIROS_GPUS}, the indexes, {@code KAIROS_RESTART_COUNT},
 *       {@code KAIROS_CHECKPOINT_DIR}, and for srun {@code KAIROS_SERVER}, {@code KAIROS_CA} and
 *       the job's step credential {@code KAIROS_JOB_TOKEN}), {@code RANK}, {@code WORLD_SIZE},
 *       {@code LOCAL_RANK}, {@code LOCAL_WORLD_SIZE}, {@code NODE_RANK}, the agent's {@code bin}
 *       directory (srun, scontrol) first on {@code PATH}, and Slurm's names for the same things, so
 *       that scripts written for Slurm run unchanged.
 * </ol>
 *
 * <p>Slurm's names, as a Slurm 22.05 sets them for a task: {@code SLURM_JOB_ID} and {@code
 * SLURM_JOBID}, {@code SLURM_JOB_NAME}, {@code SLURM_PROCID} (= RANK), {@code SLURM_LOCALID} (=
 * LOCAL_RANK), {@code SLURM_NODEID} (the node's index in the job, or in the step), {@code
 * SLURM_NTASKS} and {@code SLURM_NPROCS} (= WORLD_SIZE), {@code SLURM_NNODES} (the job's or the
 * step's nodes), {@code SLURM_JOB_NUM_NODES} (the job's), {@code SLURM_JOB_NODELIST} and {@code
 * SLURM_NODELIST} (the job's nodes in Slurm's compressed form, {@code n[1-3]}), {@code
 * SLURM_TASKS_PER_NODE} ({@code 2(x3)}), {@code SLURMD_NODENAME}, {@code SLURM_GPUS_ON_NODE},
 * {@code SLURM_GPUS_PER_TASK} and {@code SLURM_CPUS_PER_TASK} (when asked for), {@code
 * SLURM_RESTART_COUNT}, {@code SLURM_SUBMIT_DIR} and, for an array job, {@code SLURM_ARRAY_JOB_ID}
 * and {@code SLURM_ARRAY_TASK_ID}. A step's tasks also get {@code SLURM_STEP_ID} and {@code
 * SLURM_STEPID}, {@code SLURM_STEP_NODELIST}, {@code SLURM_STEP_NUM_NODES}, {@code
 * SLURM_STEP_NUM_TASKS} and {@code SLURM_STEP_TASKS_PER_NODE}.
 */
final class TaskEnvironment {
  /** The controllers' URLs, comma-separated, for srun. */
  static final String SERVER = "KAIROS_SERVER";

  /** The cluster CA (PEM file) srun checks the controller's certificate against. */
  static final String CA = "KAIROS_CA";

  /** The directory holding srun and scontrol, put first on {@code PATH}. */
  static final String BIN = "KAIROS_SLURM_BIN";

  /** The job's step credential. */
  static final String JOB_TOKEN = "KAIROS_JOB_TOKEN";

  private TaskEnvironment() {}

  static Map<String, String> of(
      TaskAssignment a,
      String node,
      Map<String, String> agentEnv,
      Map<String, String> kairosEnv,
      Path workdir,
      int local) {
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
        a.masterAddr() == null || a.masterAddr().isBlank()
            ? LaunchSpec.UNKNOWN_MASTER_ADDR
            : a.masterAddr());
    env.put(
        "MASTER_PORT", Integer.toString(LaunchSpec.MASTER_PORT_BASE + (int) (a.jobId() % 1000)));
    // 3. The job's own variables (a step's: srun's).
    if (a.env() != null) {
      a.env().forEach((k, v) -> env.put(k, v == null ? "" : v));
    }
    // 4. Identity and devices, which it may not.
    devices(env, a, local);
    kairos(env, a, node, kairosEnv, local);
    slurm(env, a, node, workdir, local);
    return env;
  }

  /** This process's GPUs: all of the entry's, or its own {@code gpusPerTask} by local rank. */
  static List<Integer> gpus(TaskAssignment a, int local) {
    List<Integer> all = a.gpus() == null ? List.of() : a.gpus();
    int per = a.gpusPerTask() == null || a.isBatchStep() ? 0 : a.gpusPerTask();
    return per <= 0 ? all : all.subList(local * per, (local + 1) * per);
  }

  private static void devices(Map<String, String> env, TaskAssignment a, int local) {
    List<Integer> mine = gpus(a, local);
    String indexes = mine.stream().map(String::valueOf).collect(Collectors.joining(","));
    List<String> uuids = a.gpuUuids();
    int per = a.gpusPerTask() == null || a.isBatchStep() ? 0 : a.gpusPerTask();
    if (uuids != null && a.gpus() != null && uuids.size() == a.gpus().size() && per > 0) {
      uuids = uuids.subList(local * per, (local + 1) * per);
    }
    // By UUID when known: CUDA renumbers the visible devices from 0, and a UUID names the same
    // device whatever the enumeration order (CUDA_DEVICE_ORDER) or a GPU falling off the bus.
    // Emulated GPUs keep their indexes: their made-up UUIDs would mean nothing to CUDA.
    String visible =
        uuids != null
                && uuids.size() == mine.size()
                && uuids.stream().noneMatch(EmulatedGpus::isEmulated)
            ? String.join(",", uuids)
            : indexes;
    env.put("CUDA_VISIBLE_DEVICES", visible);
    env.put("NVIDIA_VISIBLE_DEVICES", visible);
    env.put("KAIROS_GPUS", indexes);
  }

  private static void kairos(
      Map<String, String> env,
      TaskAssignment a,
      String node,
      Map<String, String> kairosEnv,
      int local) {
    int rank = a.firstRank() + local;
    env.put("KAIROS_RESTART_COUNT", Integer.toString(a.restarts()));
    if (a.checkpointDir() != null
        && !a.checkpointDir().isBlank()
        && !CheckpointLocation.isObjectStorage(a.checkpointDir())) {
      env.put("KAIROS_CHECKPOINT_DIR", a.checkpointDir());
    } else {
      env.remove("KAIROS_CHECKPOINT_DIR");
    }
    env.put("KAIROS_JOB_ID", Long.toString(a.jobId()));
    env.put("KAIROS_JOB_NAME", Objects.requireNonNullElse(a.name(), ""));
    env.put("KAIROS_ATTEMPT", Integer.toString(a.attempt()));
    env.put("KAIROS_TASK", Integer.toString(rank));
    env.put("KAIROS_TASKS", Integer.toString(a.worldSize()));
    env.put("KAIROS_NODE", node);
    env.put("KAIROS_NODES", String.join(",", a.allocation()));
    env.put("KAIROS_USER", Objects.requireNonNullElse(a.user(), ""));
    for (String name : List.of(SERVER, CA)) {
      if (kairosEnv.containsKey(name)) {
        env.put(name, kairosEnv.get(name));
      } else {
        env.remove(name);
      }
    }
    if (a.jobToken() != null) {
      env.put(JOB_TOKEN, a.jobToken());
    } else {
      env.remove(JOB_TOKEN);
    }
    String bin = kairosEnv.get(BIN);
    if (bin != null) {
      String path = env.getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin");
      if (!path.equals(bin) && !path.startsWith(bin + ":")) {
        env.put("PATH", bin + ":" + path);
      }
    }
    env.put("RANK", Integer.toString(rank));
    env.put("WORLD_SIZE", Integer.toString(a.worldSize()));
    env.put("LOCAL_RANK", Integer.toString(local));
    env.put("LOCAL_WORLD_SIZE", Integer.toString(a.localTasks()));
    env.put("NODE_RANK", Integer.toString(a.task()));
  }

  /** Slurm's names for what the process is, so that scripts written for Slurm run unchanged. */
  private static void slurm(
      Map<String, String> env, TaskAssignment a, String node, Path workdir, int local) {
    String jobId = Long.toString(a.jobId());
    String tasks = Integer.toString(a.worldSize());
    List<String> nodes = a.nodes() == null ? List.of() : a.nodes();
    String jobNodeList = HostList.compress(a.allocation());
    List<Integer> perNode =
        a.tasksPerNode() != null ? a.tasksPerNode() : Collections.nCopies(nodes.size(), 1);
    String tasksPerNode = TaskLayout.slurmTasksPerNode(perNode);
    env.put("SLURM_JOB_ID", jobId);
    env.put("SLURM_JOBID", jobId);
    env.put("SLURM_JOB_NAME", Objects.requireNonNullElse(a.name(), ""));
    env.put("SLURM_PROCID", Integer.toString(a.firstRank() + local));
    env.put("SLURM_LOCALID", Integer.toString(local));
    env.put("SLURM_NODEID", Integer.toString(a.task()));
    env.put("SLURM_NTASKS", tasks);
    env.put("SLURM_NPROCS", tasks);
    env.put("SLURM_NNODES", Integer.toString(nodes.size()));
    env.put("SLURM_JOB_NUM_NODES", Integer.toString(a.allocation().size()));
    env.put("SLURM_JOB_NODELIST", jobNodeList);
    env.put("SLURM_NODELIST", jobNodeList);
    env.put("SLURM_TASKS_PER_NODE", tasksPerNode);
    env.put("SLURMD_NODENAME", node);
    env.put("SLURM_GPUS_ON_NODE", Integer.toString(a.gpus() == null ? 0 : a.gpus().size()));
    putOrRemove(
        env,
        "SLURM_GPUS_PER_TASK",
        a.gpusPerTask() != null && a.gpusPerTask() > 0 ? Integer.toString(a.gpusPerTask()) : null);
    putOrRemove(env, "SLURM_CPUS_PER_TASK", a.cpus() > 0 ? Integer.toString(a.cpus()) : null);
    env.put("SLURM_RESTART_COUNT", Integer.toString(a.restarts()));
    if (!a.launchesStep()) {
      env.put("SLURM_SUBMIT_DIR", workdir.toString());
    }
    var stepNames =
        List.of(
            "SLURM_STEP_ID",
            "SLURM_STEPID",
            "SLURM_STEP_NODELIST",
            "SLURM_STEP_NUM_NODES",
            "SLURM_STEP_NUM_TASKS",
            "SLURM_STEP_TASKS_PER_NODE");
    if (a.launchesStep()) {
      var values =
          List.of(
              Integer.toString(a.step()),
              Integer.toString(a.step()),
              HostList.compress(nodes),
              Integer.toString(nodes.size()),
              tasks,
              tasksPerNode);
      for (int i = 0; i < stepNames.size(); i++) {
        env.put(stepNames.get(i), values.get(i));
      }
    } else {
      stepNames.forEach(env::remove);
    }
    Map<String, String> jobEnv = a.env() == null ? Map.of() : a.env();
    String arrayTask = jobEnv.get("KAIROS_ARRAY_TASK_ID");
    if (arrayTask != null && !arrayTask.isBlank()) {
      env.put("SLURM_ARRAY_TASK_ID", arrayTask);
      String arrayJob = jobEnv.get("KAIROS_ARRAY_JOB_ID");
      env.put("SLURM_ARRAY_JOB_ID", arrayJob == null || arrayJob.isBlank() ? jobId : arrayJob);
    } else if (!a.launchesStep()) {
      env.remove("SLURM_ARRAY_TASK_ID");
      env.remove("SLURM_ARRAY_JOB_ID");
    }
  }

  private static void putOrRemove(Map<String, String> env, String name, String value) {
    if (value == null) {
      env.remove(name);
    } else {
      env.put(name, value);
    }
  }
}
