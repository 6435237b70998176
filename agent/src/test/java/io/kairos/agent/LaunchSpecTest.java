package io.kairos.agent;

import static io.kairos.agent.Assignments.gang;
import static io.kairos.agent.Assignments.withGpus;
import static io.kairos.agent.Assignments.withRestarts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.kairos.protocol.agent.TaskAssignment;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class LaunchSpecTest {
  static TaskAssignment withRestartCount(TaskAssignment a, int restarts) {
    return copy(a, a.checkpointDir(), restarts);
  }

  static TaskAssignment withCheckpointLocation(TaskAssignment a, String location) {
    return copy(a, location, a.restarts());
  }

  /** {@code a} with another checkpoint location and restart count. */
  private static TaskAssignment copy(TaskAssignment a, String checkpointDir, int restarts) {
    return new TaskAssignment(
        a.jobId(),
        a.attempt(),
        a.task(),
        a.tasks(),
        a.nodes(),
        a.name(),
        a.user(),
        a.command(),
        a.env(),
        a.workdir(),
        a.gpus(),
        a.cpus(),
        a.memoryMb(),
        a.timeLimitSec(),
        a.masterAddr(),
        a.gpuUuids(),
        a.killSignal(),
        a.graceSec(),
        a.warnSignal(),
        a.warnBeforeSec(),
        checkpointDir,
        a.barrier(),
        restarts,
        a.output(),
        a.error());
  }

  private static final Path DATA = Path.of("/var/lib/kairos");
  private static final Map<String, String> AGENT_ENV =
      Map.of(
          "PATH",
          "/usr/bin",
          "HOME",
          "/home/agent",
          "KAIROS_JOIN_TOKEN",
          "secret",
          "KAIROS_CHECKPOINT_DIR",
          "/agent/checkpoints",
          "MASTER_PORT",
          "1");

  /** One row: an assignment on a node, and variables the task must (or must not) see. */
  record Case(
      String name,
      TaskAssignment assignment,
      String node,
      Map<String, String> expected,
      List<String> absent) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Case> environments() {
    return Stream.of(
        new Case(
            "single task without GPUs sees none",
            gang(7, 1, 0, List.of("n1"), List.of(), Map.of()),
            "n1",
            Map.ofEntries(
                Map.entry("CUDA_VISIBLE_DEVICES", ""),
                Map.entry("NVIDIA_VISIBLE_DEVICES", ""),
                Map.entry("KAIROS_JOB_ID", "7"),
                Map.entry("KAIROS_JOB_NAME", "train"),
                Map.entry("KAIROS_ATTEMPT", "1"),
                Map.entry("KAIROS_TASK", "0"),
                Map.entry("KAIROS_TASKS", "1"),
                Map.entry("KAIROS_NODE", "n1"),
                Map.entry("KAIROS_NODES", "n1"),
                Map.entry("KAIROS_USER", "bob"),
                Map.entry("RANK", "0"),
                Map.entry("WORLD_SIZE", "1"),
                Map.entry("LOCAL_RANK", "0"),
                Map.entry("LOCAL_WORLD_SIZE", "1"),
                Map.entry("NODE_RANK", "0"),
                Map.entry("MASTER_ADDR", "127.0.0.1"),
                Map.entry("MASTER_PORT", "29507")),
            List.of()),
        new Case(
            "rank 1 of a two-node gang sees its GPUs and the gang",
            gang(1234, 2, 1, List.of("n1", "n2"), List.of(2, 3), Map.of()),
            "n2",
            Map.of(
                "CUDA_VISIBLE_DEVICES", "2,3",
                "NVIDIA_VISIBLE_DEVICES", "2,3",
                "RANK", "1",
                "NODE_RANK", "1",
                "WORLD_SIZE", "2",
                "KAIROS_ATTEMPT", "2",
                "KAIROS_NODE", "n2",
                "KAIROS_NODES", "n1,n2",
                "MASTER_PORT", "29734"),
            List.of()),
        new Case(
            "the agent's environment is inherited, but not its own settings",
            gang(3, 1, 0, List.of("n1"), List.of(0), Map.of()),
            "n1",
            Map.of("PATH", "/usr/bin", "HOME", "/home/agent", "MASTER_PORT", "29503"),
            List.of("KAIROS_JOIN_TOKEN", "KAIROS_CHECKPOINT_DIR")),
        new Case(
            "the job's variables override the agent's and the rendezvous address",
            gang(
                3,
                1,
                0,
                List.of("n1"),
                List.of(0),
                Map.of(
                    "HOME",
                    "/scratch",
                    "MASTER_ADDR",
                    "10.0.0.5",
                    "MASTER_PORT",
                    "40000",
                    "NCCL_DEBUG",
                    "INFO")),
            "n1",
            Map.of(
                "HOME",
                "/scratch",
                "MASTER_ADDR",
                "10.0.0.5",
                "MASTER_PORT",
                "40000",
                "NCCL_DEBUG",
                "INFO"),
            List.of()),
        new Case(
            "the job cannot change its devices or identity",
            gang(
                3,
                1,
                0,
                List.of("n1"),
                List.of(5),
                Map.of(
                    "CUDA_VISIBLE_DEVICES",
                    "0,1,2,3",
                    "RANK",
                    "9",
                    "KAIROS_USER",
                    "root",
                    "WORLD_SIZE",
                    "64")),
            "n1",
            Map.of(
                "CUDA_VISIBLE_DEVICES", "5", "RANK", "0", "KAIROS_USER", "bob", "WORLD_SIZE", "1"),
            List.of()),
        new Case(
            "missing name, user and nodes become empty values",
            new TaskAssignment(
                9, 1, 0, 1, null, null, null, List.of("true"), null, null, null, 1, 0, 60),
            "n1",
            Map.of(
                "KAIROS_JOB_NAME",
                "",
                "KAIROS_USER",
                "",
                "KAIROS_NODES",
                "",
                "CUDA_VISIBLE_DEVICES",
                ""),
            List.of()),
        new Case(
            "GPUs are named by UUID when the node reported them, and KAIROS_GPUS by index",
            withGpus(
                gang(7, 1, 0, List.of("n1"), List.of(), Map.of()),
                List.of(2, 3),
                List.of("GPU-aaaa", "GPU-bbbb")),
            "n1",
            Map.of(
                "CUDA_VISIBLE_DEVICES", "GPU-aaaa,GPU-bbbb",
                "NVIDIA_VISIBLE_DEVICES", "GPU-aaaa,GPU-bbbb",
                "KAIROS_GPUS", "2,3"),
            List.of()),
        new Case(
            "GPUs are named by index when their UUIDs are unknown",
            withGpus(gang(7, 1, 0, List.of("n1"), List.of(), Map.of()), List.of(2, 3), null),
            "n1",
            Map.of(
                "CUDA_VISIBLE_DEVICES", "2,3",
                "NVIDIA_VISIBLE_DEVICES", "2,3",
                "KAIROS_GPUS", "2,3"),
            List.of()),
        new Case(
            "GPUs are named by index when the UUIDs do not match them one to one",
            withGpus(
                gang(7, 1, 0, List.of("n1"), List.of(), Map.of()),
                List.of(2, 3),
                List.of("GPU-aaaa")),
            "n1",
            Map.of(
                "CUDA_VISIBLE_DEVICES", "2,3",
                "NVIDIA_VISIBLE_DEVICES", "2,3",
                "KAIROS_GPUS", "2,3"),
            List.of()),
        new Case(
            "a restarted attempt is told its restart count and checkpoint directory",
            withRestarts(gang(7, 4, 0, List.of("n1"), List.of(0), Map.of()), 3, "/ckpt/job7"),
            "n1",
            Map.of("KAIROS_RESTART_COUNT", "3", "KAIROS_CHECKPOINT_DIR", "/ckpt/job7"),
            List.of()),
        new Case(
            "the assigned checkpoint directory wins over the job's variable",
            withRestarts(
                gang(7, 1, 0, List.of("n1"), List.of(0), jobSetsKairosVariables()),
                0,
                "/ckpt/job7"),
            "n1",
            Map.of("KAIROS_CHECKPOINT_DIR", "/ckpt/job7"),
            List.of()),
        new Case(
            "without a checkpoint directory, the job's and the agent's do not leak through",
            gang(7, 1, 0, List.of("n1"), List.of(5), jobSetsKairosVariables()),
            "n1",
            Map.of("KAIROS_RESTART_COUNT", "0", "KAIROS_GPUS", "5", "CUDA_VISIBLE_DEVICES", "5"),
            List.of("KAIROS_CHECKPOINT_DIR")),
        new Case(
            "a blank checkpoint directory is none",
            withRestarts(
                gang(7, 1, 0, List.of("n1"), List.of(0), jobSetsKairosVariables()), 1, " "),
            "n1",
            Map.of("KAIROS_RESTART_COUNT", "1"),
            List.of("KAIROS_CHECKPOINT_DIR")));
  }

  /** A job env that tries to set what the agent decides. */
  private static Map<String, String> jobSetsKairosVariables() {
    return Map.of(
        "KAIROS_CHECKPOINT_DIR", "/job/checkpoints",
        "KAIROS_RESTART_COUNT", "9",
        "KAIROS_GPUS", "0,1,2,3");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("environments")
  void environment(Case c) {
    LaunchSpec spec = LaunchSpec.of(c.assignment(), c.node(), DATA, AGENT_ENV);

    assertThat(spec.env())
        .containsAllEntriesOf(c.expected())
        .doesNotContainKeys(c.absent().toArray(String[]::new));
  }

  @Test
  void outputGoesToTheTaskDirectoryWhichIsAlsoTheDefaultWorkdir() {
    LaunchSpec spec =
        LaunchSpec.of(
            gang(42, 2, 1, List.of("n1", "n2"), List.of(), Map.of()), "n2", DATA, Map.of());

    Path dir = Path.of("/var/lib/kairos/tasks/42-2-1");
    assertThat(spec.taskDir()).isEqualTo(dir);
    assertThat(spec.workdir()).isEqualTo(dir);
    assertThat(spec.stdout()).isEqualTo(dir.resolve("stdout.log"));
    assertThat(spec.stderr()).isEqualTo(dir.resolve("stderr.log"));
    assertThat(spec.argv()).containsExactly("python", "train.py");
    assertThat(spec.key()).isEqualTo(new TaskKey(42, 2, 1));
  }

  @Test
  void slurmVariablesNameTheSameThingsAsKairosOnes() {
    var a =
        withRestartCount(
            gang(
                1234,
                2,
                1,
                List.of("n1", "n2"),
                List.of(2, 3),
                Map.of("SLURM_JOB_ID", "999", "SLURM_PROCID", "7", "SLURM_CPUS_PER_TASK", "64")),
            3);
    Map<String, String> agentEnv =
        Map.of(
            "SLURM_JOB_ID",
            "1",
            "SLURM_MEM_PER_NODE",
            "1024",
            "SLURMD_NODENAME",
            "host",
            "PATH",
            "/usr/bin");

    var env = LaunchSpec.of(a, "n2", DATA, agentEnv).env();

    assertThat(env)
        .containsAllEntriesOf(
            Map.ofEntries(
                Map.entry("SLURM_JOB_ID", "1234"),
                Map.entry("SLURM_JOBID", "1234"),
                Map.entry("SLURM_JOB_NAME", "train"),
                Map.entry("SLURM_PROCID", "1"),
                Map.entry("SLURM_NTASKS", "2"),
                Map.entry("SLURM_NPROCS", "2"),
                Map.entry("SLURM_NNODES", "2"),
                Map.entry("SLURM_JOB_NUM_NODES", "2"),
                Map.entry("SLURM_NODEID", "1"),
                Map.entry("SLURM_LOCALID", "0"),
                Map.entry("SLURM_JOB_NODELIST", "n[1-2]"),
                Map.entry("SLURM_NODELIST", "n[1-2]"),
                Map.entry("SLURMD_NODENAME", "n2"),
                Map.entry("SLURM_GPUS_ON_NODE", "2"),
                Map.entry("SLURM_CPUS_PER_TASK", "4"),
                Map.entry("SLURM_RESTART_COUNT", "3"),
                Map.entry("KAIROS_RESTART_COUNT", "3"),
                Map.entry("SLURM_SUBMIT_DIR", "/var/lib/kairos/tasks/1234-2-1"),
                Map.entry("PATH", "/usr/bin")));
    // The agent's own Slurm settings (it may run inside a Slurm job) are not handed on.
    assertThat(env).doesNotContainKeys("SLURM_MEM_PER_NODE", "SLURM_ARRAY_TASK_ID");
    assertThat(env.get("SLURM_PROCID")).isEqualTo(env.get("RANK"));
    assertThat(env.get("SLURM_NTASKS")).isEqualTo(env.get("WORLD_SIZE"));
  }

  @Test
  void aJobWithoutCpusHasNoSlurmCpusPerTaskAndArrayJobsSeeTheirIndex() {
    var a =
        new TaskAssignment(
            8,
            1,
            0,
            1,
            List.of("n1"),
            "sweep",
            "bob",
            List.of("true"),
            Map.of(
                "SLURM_CPUS_PER_TASK",
                "9",
                "KAIROS_ARRAY_JOB_ID",
                "5",
                "KAIROS_ARRAY_TASK_ID",
                "3"),
            "/data",
            List.of(0),
            0,
            0,
            60);

    var env = LaunchSpec.of(a, "n1", DATA, Map.of()).env();

    assertThat(env).doesNotContainKey("SLURM_CPUS_PER_TASK");
    assertThat(env)
        .containsEntry("SLURM_ARRAY_JOB_ID", "5")
        .containsEntry("SLURM_ARRAY_TASK_ID", "3")
        .containsEntry("SLURM_SUBMIT_DIR", "/data");
  }

  @Test
  void aJobWithCheckpointsInS3GetsItsUrlAndTheNodesEndpointButNoDirectory() {
    var a =
        withCheckpointLocation(
            gang(7, 1, 0, List.of("n1"), List.of(), Map.of()), "s3://ckpt-bucket/run1/");
    var env =
        LaunchSpec.of(
                a, "n1", DATA, AGENT_ENV, Map.of("KAIROS_S3_ENDPOINT", "http://10.0.0.9:9000"), 0)
            .env();
    assertThat(env)
        .containsEntry("KAIROS_CHECKPOINT_URL", "s3://ckpt-bucket/run1")
        .containsEntry("KAIROS_S3_ENDPOINT", "http://10.0.0.9:9000")
        .doesNotContainKey("KAIROS_CHECKPOINT_DIR");
    var withoutEndpoint = LaunchSpec.of(a, "n1", DATA, AGENT_ENV).env();
    assertThat(withoutEndpoint)
        .as("no endpoint configured: the SDK's default (AWS)")
        .containsEntry("KAIROS_CHECKPOINT_URL", "s3://ckpt-bucket/run1")
        .doesNotContainKeys("KAIROS_S3_ENDPOINT", "KAIROS_CHECKPOINT_DIR");
    var directory =
        LaunchSpec.of(
                withCheckpointLocation(a, "/ckpt/run1"),
                "n1",
                DATA,
                AGENT_ENV,
                Map.of("KAIROS_S3_ENDPOINT", "http://10.0.0.9:9000"),
                0)
            .env();
    assertThat(directory)
        .containsEntry("KAIROS_CHECKPOINT_DIR", "/ckpt/run1")
        .containsEntry("KAIROS_CHECKPOINT_URL", "file:///ckpt/run1")
        .doesNotContainKey("KAIROS_S3_ENDPOINT");
  }

  record Pattern(String name, String pattern, Map<String, String> env, String expected) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Pattern> patterns() {
    return Stream.of(
        new Pattern("job id and rank", "/logs/%j.%t.out", Map.of(), "/logs/1234.1.out"),
        new Pattern(
            "node, user and name", "/logs/%u/%x-%N.log", Map.of(), "/logs/bob/train-n2.log"),
        new Pattern("a literal percent", "/logs/100%%-%j", Map.of(), "/logs/100%-1234"),
        new Pattern(
            "array ids outside an array job",
            "/logs/%A_%a.out",
            Map.of(),
            "/logs/1234_4294967294.out"),
        new Pattern(
            "array ids of an array job",
            "/logs/%A_%a.out",
            Map.of("KAIROS_ARRAY_JOB_ID", "1200", "KAIROS_ARRAY_TASK_ID", "7"),
            "/logs/1200_7.out"),
        new Pattern("no pattern", "/logs/out.txt", Map.of(), "/logs/out.txt"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("patterns")
  void outputPattern(Pattern p) {
    var a =
        Assignments.withOutput(
            gang(1234, 2, 1, List.of("n1", "n2"), List.of(), p.env()), p.pattern(), null);

    var spec = LaunchSpec.of(a, "n2", DATA, Map.of());

    assertThat(spec.stdout()).isEqualTo(Path.of(p.expected()));
    assertThat(spec.stderr()).as("stderr follows stdout, as in Slurm").isEqualTo(spec.stdout());
  }

  @Test
  void anErrorPatternOfItsOwnAndANameWithASlash() {
    var a =
        Assignments.withOutput(
            Assignments.withName(gang(9, 1, 0, List.of("n1"), List.of(), Map.of()), "a/b"),
            null,
            "/logs/%x.err");

    var spec = LaunchSpec.of(a, "n1", DATA, Map.of());

    assertThat(spec.stdout()).isEqualTo(Path.of("/var/lib/kairos/tasks/9-1-0/stdout.log"));
    assertThat(spec.stderr()).isEqualTo(Path.of("/logs/a_b.err"));
  }

  @Test
  void aGivenWorkdirIsUsedAsIs() {
    var a = Assignments.withWorkdir(Assignments.assignment(5, "true"), "/data/project");

    assertThat(LaunchSpec.of(a, "n1", DATA, Map.of()).workdir())
        .isEqualTo(Path.of("/data/project"));
  }

  @Test
  void anAssignmentWithoutACommandCannotBeLaunched() {
    var a = Assignments.assignment(5);

    assertThatIllegalArgumentException()
        .isThrownBy(() -> LaunchSpec.of(a, "n1", DATA, Map.of()))
        .withMessageStartingWith("command");
  }

  @Test
  void aRankOutsideTheGangCannotBeLaunched() {
    var a =
        new TaskAssignment(
            5,
            1,
            2,
            2,
            List.of("n1", "n2"),
            "j",
            "u",
            List.of("true"),
            Map.of(),
            null,
            List.of(),
            1,
            0,
            60);

    assertThatIllegalArgumentException()
        .isThrownBy(() -> LaunchSpec.of(a, "n1", DATA, Map.of()))
        .withMessageStartingWith("task");
  }

  static Stream<TaskAssignment> badSignals() {
    var a = Assignments.assignment(5, "true");
    return Stream.of(
        Assignments.withKillSignal(a, "KILL", 0),
        Assignments.withKillSignal(a, "SIGTERM", 0),
        Assignments.withKillSignal(a, "usr1", 0),
        Assignments.withWarning(a, "STOP", 60),
        Assignments.withWarning(a, "", 60));
  }

  @ParameterizedTest
  @MethodSource("badSignals")
  void aSignalNotOnTheListCannotBeLaunched(TaskAssignment a) {
    String field = a.killSignal() != null ? "killSignal" : "warnSignal";

    assertThatIllegalArgumentException()
        .isThrownBy(() -> LaunchSpec.of(a, "n1", DATA, Map.of()))
        .withMessageStartingWith(field);
  }

  /** Linux's number for each signal a job may choose: the list and this table must agree. */
  static final Map<String, Integer> SIGNAL_NUMBERS =
      Map.of("TERM", 15, "INT", 2, "HUP", 1, "QUIT", 3, "USR1", 10, "USR2", 12);

  /**
   * Each signal on the list, as a job's kill and warning signal: the spec is built, the task starts
   * from it, and the launcher's {@code signal} with that name reaches the task as that signal (the
   * task traps every signal on the list and notes which one came). A signal this JVM ignores cannot
   * be trapped by its children (it is inherited as ignored), so it is only built and started; only
   * HUP, INT and QUIT are ignored by the ways tests are usually started (nohup, a background job).
   */
  @Test
  void everySignalOnTheListCanBeLaunched(@TempDir Path dataDir)
      throws IOException, InterruptedException {
    assertThat(SIGNAL_NUMBERS.keySet())
        .containsExactlyInAnyOrderElementsOf(ProcessLauncher.SIGNALS);
    var traps = new StringBuilder();
    for (String signal : ProcessLauncher.SIGNALS) {
      traps.append("trap 'echo ").append(signal).append(" >> got.txt; exit 0' ").append(signal);
      traps.append("; ");
    }
    var launcher = new ProcessLauncher();
    var delivered = new ArrayList<String>();
    var ignored = new ArrayList<String>();
    long jobId = 500;
    for (String signal : ProcessLauncher.SIGNALS) {
      var a =
          Assignments.withWarning(
              Assignments.withKillSignal(
                  Assignments.script(++jobId, traps + "touch ready; while :; do sleep 0.1; done"),
                  signal,
                  0),
              signal,
              60);
      var spec = LaunchSpec.of(a, "n1", dataDir, Map.of("PATH", System.getenv("PATH")));
      Process task = launcher.start(spec);
      try {
        Processes.awaitFile(spec.taskDir().resolve("ready"));
        if (Processes.ignoredByThisJvm(SIGNAL_NUMBERS.get(signal))) {
          ignored.add(signal);
          continue;
        }
        launcher.signal(task.toHandle(), a.killSignal());
        assertThat(task.waitFor(Processes.PROCESS_WAIT.toSeconds(), TimeUnit.SECONDS))
            .as("SIG%s ends the task through its trap", signal)
            .isTrue();
        assertThat(task.exitValue()).as("SIG%s: the trap's exit", signal).isZero();
        assertThat(Processes.lines(spec.taskDir().resolve("got.txt")))
            .as("the signal the task got")
            .containsExactly(signal);
        delivered.add(signal);
      } finally {
        launcher.forceKill(task.toHandle(), List.of());
      }
    }
    assertThat(ignored).as("signals ignored by this JVM").isSubsetOf("HUP", "INT", "QUIT");
    assertThat(delivered).contains("TERM", "USR1", "USR2");
  }
}
