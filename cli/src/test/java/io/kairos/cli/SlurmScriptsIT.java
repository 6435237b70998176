package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.slurm.HostList;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real Slurm batch scripts ({@code ../shared/slurm-scripts}, submitted as their authors committed
 * them: without their first line, without the execute bit) through {@code kairos sbatch} on a
 * cluster of real processes: a controller and two agents, gpu001 and gpu002, with eight emulated
 * A100s and 64 CPUs each (the Slurm peer's node size). The scripts' heavy commands (python,
 * torchrun, deepspeed, module, ...) are a probe on the submitting shell's PATH, which sbatch
 * exports to the job as Slurm does; the probe writes one line per process with its rank variables.
 *
 * <p>The expected lines are what the same scripts wrote under Slurm 22.05 on ../shared/peers/slurm
 * ({@code run.sh up --nodes 4}, same probe, same submit options), with the node names left out (the
 * two schedulers may pick other nodes). Slurm refused 06 as committed ({@code -w ttnusa1}: no such
 * node) and 09 ({@code -p defq}: no such partition); they ran there with {@code -w gpu002} and
 * {@code -p gpu}. 19's output directory does not exist there, so both runs give {@code -o}/{@code
 * -e} on sbatch's command line (Slurm's job failed to launch without).
 */
class SlurmScriptsIT {
  @TempDir static Path dir;
  static TestCluster cluster;
  static Path probes;

  /** The probe: one line per process, with what a rank sees. */
  static final String PROBE =
      """
      #!/bin/sh
      printf 'cmd=%s node=%s SLURM_PROCID=%s SLURM_LOCALID=%s SLURM_NODEID=%s RANK=%s \
      LOCAL_RANK=%s WORLD_SIZE=%s GPUS=%s NODELIST=%s NNODES=%s args=%s\\n' \
        "$(basename "$0")" "${SLURMD_NODENAME-}" "${SLURM_PROCID-}" "${SLURM_LOCALID-}" \
        "${SLURM_NODEID-}" "${RANK-}" "${LOCAL_RANK-}" "${WORLD_SIZE-}" \
        "${CUDA_VISIBLE_DEVICES-}" "${SLURM_JOB_NODELIST-}" "${SLURM_NNODES-}" "$*" \
        >> "$PROBE_LOG"
      """;

  static final List<String> HEAVY =
      List.of("python", "python3", "torchrun", "accelerate", "deepspeed", "module", "conda");

  private static final Pattern LINE =
      Pattern.compile(
          "cmd=(\\S*) node=(\\S*) SLURM_PROCID=(\\S*) SLURM_LOCALID=(\\S*) SLURM_NODEID=(\\S*)"
              + " RANK=(\\S*) LOCAL_RANK=(\\S*) WORLD_SIZE=(\\S*) GPUS=(\\S*) NODELIST=(\\S*)"
              + " NNODES=(\\S*) args=(.*)");

  @BeforeAll
  static void start() throws Exception {
    probes = Files.createDirectories(dir.resolve("probes"));
    for (String name : HEAVY) {
      Path p = probes.resolve(name);
      Files.writeString(p, PROBE);
      Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
    cluster = TestCluster.start(dir);
    // 64 CPUs a node, as Slurm's emulated nodes have (19 asks for 32 per task).
    var cpus = Map.of("JAVA_TOOL_OPTIONS", "-XX:ActiveProcessorCount=64");
    cluster.agent("gpu001", 2, "8xA100-SXM4-80GB", cpus);
    cluster.agent("gpu002", 3, "8xA100-SXM4-80GB", cpus);
    // 12 asks for four nodes; 16 for V100s.
    cluster.agent("gpu003", 4, "8xV100-SXM2-32GB", cpus);
    cluster.agent("gpu004", 5, "8xV100-SXM2-32GB", cpus);
  }

  @AfterAll
  static void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @AfterEach
  void resetEnvironment() {
    Environment.reset();
  }

  /** ../shared/slurm-scripts, found as the traces are (-Dkairos.slurmScripts overrides). */
  static Path scripts() {
    var tried = new ArrayList<Path>();
    String property = System.getProperty("kairos.slurmScripts");
    if (property != null && !property.isBlank()) {
      tried.add(Path.of(property));
    }
    Path cwd = Path.of(System.getProperty("user.dir"));
    tried.add(cwd.resolve("../../shared/slurm-scripts"));
    tried.add(cwd.resolve("../shared/slurm-scripts"));
    for (Path candidate : tried) {
      if (Files.isDirectory(candidate)) {
        return candidate.normalize();
      }
    }
    throw new IllegalStateException(
        "slurm-scripts not found; tried " + tried + " (set -Dkairos.slurmScripts=DIR)");
  }

  /** A script as its author committed it ({@code tail -n +2}), in a submit directory of its own. */
  static Path committed(String prefix) throws IOException {
    try (var files = Files.list(scripts())) {
      Path source =
          files
              .filter(p -> p.getFileName().toString().startsWith(prefix + "-"))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no script " + prefix + "-*.sh"));
      Path submitDir = Files.createDirectories(dir.resolve("run-" + prefix));
      String text = Files.readString(source);
      Path job = submitDir.resolve("job.sh");
      Files.writeString(job, text.substring(text.indexOf('\n') + 1));
      Files.setPosixFilePermissions(job, PosixFilePermissions.fromString("rw-r--r--"));
      return submitDir;
    }
  }

  record Run(int code, String out, String err) {}

  /** {@code sbatch ARGS} in {@code submitDir}, from a shell whose PATH starts with the probes. */
  static Run sbatch(Path submitDir, String stdin, String... args) {
    return slurm("sbatch", submitDir, stdin, args);
  }

  /** Slurm's command {@code name} (kairos NAME) with {@code args}, as {@link #sbatch} runs it. */
  static Run slurm(String name, Path submitDir, String stdin, String... args) {
    var env = new TreeMap<String, String>();
    env.put("KAIROS_SERVER", cluster.url);
    env.put("KAIROS_TOKEN", cluster.adminToken);
    env.put("PATH", probes + ":/usr/local/bin:/usr/bin:/bin");
    env.put("PROBE_LOG", submitDir.resolve("probe.log").toString());
    env.put("HOME", dir.toString());
    Environment.variables = env::get;
    Environment.allVariables = () -> env;
    Environment.workingDirectory = submitDir;
    if (stdin != null) {
      Environment.stdin = () -> new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8));
    }
    var out = new ByteArrayOutputStream();
    var err = new ByteArrayOutputStream();
    var all = new ArrayList<String>(List.of(name));
    all.addAll(List.of(args));
    int code;
    try (var o = new PrintWriter(out, true, StandardCharsets.UTF_8);
        var e = new PrintWriter(err, true, StandardCharsets.UTF_8)) {
      code = Main.run(o, e, all.toArray(String[]::new));
    }
    return new Run(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  static long submitted(Run run) {
    assertThat(run.code()).as("sbatch: %s", run.err()).isZero();
    Matcher m = Pattern.compile("Submitted batch job (\\d+)").matcher(run.out());
    assertThat(m.find()).as("sbatch printed %s", run.out()).isTrue();
    return Long.parseLong(m.group(1));
  }

  static JobView ended(long id, JobState state) throws InterruptedException {
    cluster.waitState(id, state, Duration.ofSeconds(60));
    return cluster.job(id);
  }

  /**
   * A probe line as compared with Slurm's: the node's name left out; the GPUs as their count; the
   * node list checked against the job's placement by the caller.
   */
  record Probe(
      String cmd,
      String procId,
      String localId,
      String nodeId,
      String rank,
      String localRank,
      String worldSize,
      int gpus,
      String nnodes,
      String args) {}

  record Seen(Probe probe, String node, String nodeList) {}

  static List<Seen> probeLines(Path submitDir) throws IOException {
    Path log = submitDir.resolve("probe.log");
    if (!Files.exists(log)) {
      return List.of();
    }
    var seen = new ArrayList<Seen>();
    for (String line : Files.readAllLines(log)) {
      Matcher m = LINE.matcher(line);
      assertThat(m.matches()).as("probe line %s", line).isTrue();
      int gpus = m.group(9).isEmpty() ? 0 : m.group(9).split(",").length;
      seen.add(
          new Seen(
              new Probe(
                  m.group(1),
                  m.group(3),
                  m.group(4),
                  m.group(5),
                  m.group(6),
                  m.group(7),
                  m.group(8),
                  gpus,
                  m.group(11),
                  m.group(12)),
              m.group(2),
              m.group(10)));
    }
    seen.sort(Comparator.comparing((Seen s) -> s.probe().args()));
    return seen;
  }

  /** What a batch step's process sees under Slurm: rank 0 of one task, no torch variables. */
  static Probe batchStep(String cmd, int gpus, int nodes, String args) {
    return new Probe(cmd, "0", "0", "0", "", "", "", gpus, Integer.toString(nodes), args);
  }

  /** The job's nodes in Slurm's compressed form, and the first of them (the batch host). */
  static void ranOnTheFirstNode(List<Seen> seen, JobView job) {
    List<String> nodes = job.placement().stream().map(p -> p.node()).toList();
    for (Seen s : seen) {
      assertThat(s.node())
          .as("the batch step runs on the job's first node")
          .isEqualTo(nodes.get(0));
      assertThat(s.nodeList()).isEqualTo(HostList.compress(nodes));
    }
  }

  @Test
  void script01RunsOnceWithItsFixedOutputFilesAndOneGpu() throws Exception {
    Path run = committed("01");
    JobView job = ended(submitted(sbatch(run, null, "job.sh")), JobState.SUCCEEDED);

    var seen = probeLines(run);
    // Slurm 22.05: cmd=module ... args=load anaconda / cmd=python ... args=train.py
    assertThat(seen.stream().map(Seen::probe))
        .containsExactly(
            batchStep("module", 1, 1, "load anaconda"), batchStep("python", 1, 1, "train.py"));
    ranOnTheFirstNode(seen, job);
    assertThat(job.name()).isEqualTo("TestJob");
    assertThat(run.resolve("test.out")).exists();
    assertThat(run.resolve("testError.err")).exists();
  }

  @Test
  void script04IsFifteenArrayJobsEachRunningItsScriptOnceWithItsIndex() throws Exception {
    Path run = committed("04");
    long first = submitted(sbatch(run, null, "job.sh"));
    for (long id = first; id < first + 15; id++) {
      ended(id, JobState.SUCCEEDED);
    }

    var seen = probeLines(run);
    var expected = new ArrayList<Probe>();
    for (int i = 0; i < 15; i++) {
      expected.add(batchStep("python", 1, 1, "./job.py within " + i + " " + first));
    }
    expected.sort(Comparator.comparing(Probe::args));
    // Slurm 22.05: 15 lines, cmd=python ... args=./job.py within I ARRAY_JOB_ID
    assertThat(seen.stream().map(Seen::probe)).containsExactlyElementsOf(expected);
    // The #SBATCH --output after the first command is ignored, as sbatch ignores it.
    assertThat(run.resolve("slurm-" + first + "_0.out")).exists();
    assertThat(run.resolve("slurm_output")).isDirectory();
  }

  @Test
  void script06RunsTorchrunOnceWithBothGpusAndItsOwnOutputName() throws Exception {
    Path run = committed("06");
    Run submit = sbatch(run, null, "job.sh");
    JobView job = ended(submitted(submit), JobState.SUCCEEDED);

    var seen = probeLines(run);
    // Slurm 22.05 (with -w gpu002: it has no ttnusa1): one torchrun, GPUS=0,1
    assertThat(seen.stream().map(Seen::probe))
        .containsExactly(
            batchStep("torchrun", 2, 1, "--standalone --nnodes=1 --nproc_per_node=2 train.py"));
    ranOnTheFirstNode(seen, job);
    assertThat(run.resolve("transCov_pos_adam_lr0.3_w0.95_hn0.92_n0.001_s8_th0.05_L_eluin.out"))
        .exists();
    assertThat(submit.err()).contains("-w ttnusa1");
  }

  @Test
  void script09FailsAsUnderSlurmItsLauncherIsNotOnThisMachine() throws Exception {
    Path run = committed("09");
    long id = submitted(sbatch(run, null, "job.sh"));
    JobView job = ended(id, JobState.FAILED);

    // Slurm 22.05 (with -p gpu: it has no defq): exit 127, "accelerate: No such file or directory"
    assertThat(job.exitCode()).isEqualTo(127);
    assertThat(job.placement()).hasSize(1);
    assertThat(job.placement().get(0).gpus()).hasSize(8);
    assertThat(Files.readString(run.resolve("slurm-" + id + ".out")))
        .contains("/lustre/fs0/scratch/shujun/miniconda3/envs/torch/bin/accelerate")
        .contains("No such file or directory");
    assertThat(probeLines(run)).isEmpty();
  }

  @Test
  void script19SpreadsOverTwoNodesWithoutGpusAndRunsDeepspeedOnceOnTheFirst() throws Exception {
    Path run = committed("19");
    JobView job =
        ended(
            submitted(sbatch(run, null, "-o", "out-%j.txt", "-e", "err-%j.txt", "job.sh")),
            JobState.SUCCEEDED);

    var seen = probeLines(run);
    // Slurm 22.05: one deepspeed, NODELIST=gpu[003-004] NNODES=2, no GPUs
    assertThat(seen.stream().map(Seen::probe))
        .containsExactly(
            batchStep(
                "deepspeed",
                0,
                2,
                "--num_nodes=2 --hostfile /dli/code/moe/hostfile --num_gpus=2"
                    + " cifar10_deepspeed.py --log-interval 100 --deepspeed --deepspeed_config"
                    + " ./ds_config.json"));
    assertThat(job.placement()).hasSize(2);
    ranOnTheFirstNode(seen, job);
    assertThat(job.exitCode()).isZero();
  }

  /**
   * What a step's task sees under Slurm, with the rank variables Kairos adds for torch (RANK,
   * LOCAL_RANK, WORLD_SIZE; Slurm leaves them unset): {@code rank} on node {@code node}, {@code
   * local} there, of {@code world}.
   */
  static Probe stepTask(
      String cmd, int rank, int local, int node, int world, int gpus, int nodes, String args) {
    return new Probe(
        cmd,
        Integer.toString(rank),
        Integer.toString(local),
        Integer.toString(node),
        Integer.toString(rank),
        Integer.toString(local),
        Integer.toString(world),
        gpus,
        Integer.toString(nodes),
        args);
  }

  /** The probe lines of {@code cmd}, by rank. */
  static List<Probe> tasks(List<Seen> seen, String cmd) {
    return seen.stream()
        .map(Seen::probe)
        .filter(p -> p.cmd().equals(cmd))
        .sorted(Comparator.comparingInt((Probe p) -> Integer.parseInt(p.procId())))
        .toList();
  }

  @Test
  void script10SrunStartsEightTasksOnItsNodeEachSeeingTheEightGpus() throws Exception {
    Path run = committed("10");
    // As on Slurm 22.05, whose nodes have 64 CPUs: 8 tasks x 12 CPUs do not fit, 8 x 8 do.
    JobView job =
        ended(submitted(sbatch(run, null, "--cpus-per-task=8", "job.sh")), JobState.SUCCEEDED);

    var seen = probeLines(run);
    // Slurm 22.05 (-p gpu --cpus-per-task=8): 8 lines cmd=python SLURM_PROCID=0..7
    // SLURM_LOCALID=0..7 SLURM_NODEID=0 GPUS=0,1,2,3,4,5,6,7 NNODES=1 args=train.py
    var expected = new ArrayList<Probe>();
    for (int r = 0; r < 8; r++) {
      expected.add(stepTask("python", r, r, 0, 8, 8, 1, "train.py"));
    }
    assertThat(tasks(seen, "python")).containsExactlyElementsOf(expected);
    assertThat(seen).allSatisfy(s -> assertThat(s.node()).isEqualTo(job.placement().get(0).node()));
  }

  @Test
  void script12ExpandsItsNodesAndRunsTorchrunOncePerNodeWithOneGpuEach() throws Exception {
    Path run = committed("12");
    JobView job = ended(submitted(sbatch(run, null, "job.sh")), JobState.SUCCEEDED);

    var seen = probeLines(run);
    List<String> nodes = job.placement().stream().map(p -> p.node()).toList();
    assertThat(nodes).hasSize(4);
    // Slurm 22.05: 4 lines cmd=torchrun SLURM_PROCID=N SLURM_LOCALID=0 SLURM_NODEID=N GPUS=0
    // NNODES=4, the rendezvous endpoint the head node's address (srun -w head hostname).
    var torchrun = tasks(seen, "torchrun");
    assertThat(torchrun).hasSize(4);
    for (int r = 0; r < 4; r++) {
      Probe p = torchrun.get(r);
      assertThat(p)
          .usingRecursiveComparison()
          .ignoringFields("args")
          .isEqualTo(stepTask("torchrun", r, 0, r, 4, 1, 4, ""));
      assertThat(p.args())
          .startsWith("--nnodes 4 --nproc_per_node 1 --rdzv_id 2024 --rdzv_backend c10d")
          .matches(".*--rdzv_endpoint [0-9a-f.:]+:29500 .*")
          .endsWith("/shared/examples/multinode_torchrun.py 50 10");
    }
    for (Seen s : seen) {
      assertThat(s.node()).isEqualTo(nodes.get(Integer.parseInt(s.probe().nodeId())));
      assertThat(s.nodeList()).isEqualTo(HostList.compress(nodes));
    }
  }

  @Test
  void script16RunsFourTasksPerNodeOnTwoNodesAfterItsModuleLinesOnce() throws Exception {
    Path run = committed("16");
    // As committed (gpu:v100:4: gpu003 and gpu004 report V100-SXM2). Slurm 22.05's GPUs have no
    // type, so it ran with --gres=gpu:4 in place of gpu:v100:4.
    JobView job = ended(submitted(sbatch(run, null, "job.sh")), JobState.SUCCEEDED);

    var seen = probeLines(run);
    // Slurm 22.05 (-p gpu --gres=gpu:4): module purge, module load pytorch once (batch step);
    // 8 lines cmd=python3 SLURM_PROCID=0..7, SLURM_LOCALID=0..3 on each node, SLURM_NODEID=0,1,
    // GPUS=0,1,2,3 (every task sees its node's four), NNODES=2
    assertThat(tasks(seen, "module"))
        .containsExactlyInAnyOrder(
            batchStep("module", 4, 2, "purge"), batchStep("module", 4, 2, "load pytorch"));
    String args = "mnist_deepspeed.py --epochs=100 --deepspeed --deepspeed_config ds_config.json";
    var expected = new ArrayList<Probe>();
    for (int r = 0; r < 8; r++) {
      expected.add(stepTask("python3", r, r % 4, r / 4, 8, 4, 2, args));
    }
    assertThat(tasks(seen, "python3")).containsExactlyElementsOf(expected);
    List<String> nodes = job.placement().stream().map(p -> p.node()).toList();
    for (Seen s : seen) {
      assertThat(s.node()).isEqualTo(nodes.get(Integer.parseInt(s.probe().nodeId())));
    }
  }

  @Test
  void script03RunsItsOneSrunTaskWithTheFourA100sItsLowerCaseTypeAsks() throws Exception {
    Path run = committed("03");
    // Its author's repository has logs/ beside the script; Slurm fails a job whose output
    // directory is missing, so it is made here.
    Files.createDirectories(run.resolve("logs"));
    // --mem=50G is more than this machine's agents offer.
    JobView job = ended(submitted(sbatch(run, null, "--mem=1G", "job.sh")), JobState.SUCCEEDED);

    var seen = probeLines(run);
    // What Slurm starts (srun's one task of a one-node job; this script was not run on the peer,
    // whose GPUs have no type): one line cmd=python3 SLURM_PROCID=0 SLURM_LOCALID=0
    // SLURM_NODEID=0, the four GPUs, NNODES=1, args=-u train.py; gpu:a100:4 matches gpu001/002
    assertThat(tasks(seen, "python3"))
        .containsExactly(stepTask("python3", 0, 0, 0, 1, 4, 1, "-u train.py"));
    assertThat(job.placement()).hasSize(1);
    assertThat(job.placement().get(0).node()).isIn("gpu001", "gpu002");
    assertThat(run.resolve("logs/train.out")).exists();
    assertThat(run.resolve("logs/train.error")).exists();
  }

  @Test
  void script14RunsItsSetupOnceAndOneTorchrunPerNodeWithItsNodeRank() throws Exception {
    Path run = committed("14");
    // `source activate ENV` (conda) sources a file named activate found on the PATH: a no-op here.
    Path activate = probes.resolve("activate");
    Files.writeString(activate, "# conda's activate, sourced: nothing to do on this cluster\n");
    // `source ~/.bashrc` under `set -e`: the exported HOME is this test's directory.
    Files.writeString(dir.resolve(".bashrc"), "# the user's shell setup\n");
    // Its output directory (/fsx/...) does not exist here, and 96 CPUs a task are more than the
    // 64 of a node (Slurm would refuse or fail the job as committed for both).
    JobView job =
        ended(
            submitted(sbatch(run, null, "-o", "out-%j.txt", "--cpus-per-task=8", "job.sh")),
            JobState.SUCCEEDED);

    var seen = probeLines(run);
    List<String> nodes = job.placement().stream().map(p -> p.node()).toList();
    assertThat(nodes).hasSize(2);
    // What Slurm starts (not run on the peer): module load once in the batch step; then srun's
    // one task per node, 2 lines cmd=torchrun SLURM_PROCID=N SLURM_LOCALID=0 SLURM_NODEID=N with
    // the node's 8 GPUs, NNODES=2, each with --node_rank N --role NODE:
    assertThat(tasks(seen, "module")).containsExactly(batchStep("module", 8, 2, "load cuda/12.1"));
    var torchrun = tasks(seen, "torchrun");
    assertThat(torchrun).hasSize(2);
    for (int r = 0; r < 2; r++) {
      Probe p = torchrun.get(r);
      assertThat(p)
          .usingRecursiveComparison()
          .ignoringFields("args")
          .isEqualTo(stepTask("torchrun", r, 0, r, 2, 8, 2, ""));
      assertThat(p.args())
          .startsWith("--nproc_per_node 8 --nnodes 2 --rdzv_endpoint " + nodes.get(0) + ":6000")
          .endsWith(
              "--node_rank " + r + " --role " + nodes.get(r) + ": run_train.py --config-file");
    }
    for (Seen s : seen) {
      assertThat(s.nodeList()).isEqualTo(HostList.compress(nodes));
    }
  }

  @Test
  void theScriptIsCopiedAtSubmitSoAnEditAfterwardsChangesNothing() throws Exception {
    Path run = Files.createDirectories(dir.resolve("run-copy"));
    Path first = run.resolve("first.sh");
    Files.writeString(first, "#!/bin/sh\nsleep 3\n");
    long blocker = submitted(sbatch(run, null, "--gpus-per-node=8", "-N", "2", "first.sh"));
    Path script = run.resolve("job.sh");
    Files.writeString(script, "#!/bin/sh\n#SBATCH --gres=gpu:1\necho original\n");
    long id = submitted(sbatch(run, null, "-d", "afterany:" + blocker, "job.sh"));
    Files.writeString(script, "#!/bin/sh\necho edited\nexit 3\n");

    ended(id, JobState.SUCCEEDED);
    assertThat(Files.readString(run.resolve("slurm-" + id + ".out"))).isEqualTo("original\n");
  }

  /** Also: a lower-case GPU type (as gres.conf names it) runs on nodes reporting "A100-SXM4". */
  @Test
  void aScriptOnStdinRunsAndItsEnvironmentIsTheSubmittingShells() throws Exception {
    Path run = Files.createDirectories(dir.resolve("run-stdin"));
    String script =
        "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n"
            + "echo \"$PROBE_LOG $SLURM_JOB_NAME $SLURM_SUBMIT_DIR\"\n";
    long id = submitted(sbatch(run, script));

    JobView job = ended(id, JobState.SUCCEEDED);
    assertThat(job.gpuModel()).isEqualTo("a100");
    assertThat(job.placement().get(0).gpus()).hasSize(1);
    assertThat(Files.readString(run.resolve("slurm-" + id + ".out")))
        .isEqualTo(run.resolve("probe.log") + " sbatch " + run + "\n");
  }

  @Test
  void exportNoneLeavesTheSubmittingShellsVariablesBehind() throws Exception {
    Path run = Files.createDirectories(dir.resolve("run-export"));
    Files.writeString(run.resolve("job.sh"), "#!/bin/sh\necho \"[${PROBE_LOG-unset}]\"\n");
    long id = submitted(sbatch(run, null, "--export=NONE", "job.sh"));

    ended(id, JobState.SUCCEEDED);
    assertThat(Files.readString(run.resolve("slurm-" + id + ".out"))).isEqualTo("[unset]\n");
  }

  /**
   * squeue, sinfo, scancel and sacct on a running two-node job; the formats as Slurm 22.05 printed
   * them for such a job on the peer: {@code squeue -o "%i %j %T" -h} is "23 sleeper RUNNING",
   * {@code sinfo -N -h -o "%N %T"} "gpu001 mixed".
   */
  @Test
  void theFrontEndsShowCancelAndAccountForAJobAsSlurmsDo() throws Exception {
    Path run = Files.createDirectories(dir.resolve("run-frontends"));
    Files.writeString(run.resolve("sleeper.sh"), "#!/bin/sh\nsleep 120\n");
    Run submit =
        sbatch(run, null, "-J", "sleeper", "-N", "2", "--gres=gpu:2", "--qos=normal", "sleeper.sh");
    long id = submitted(submit);
    assertThat(submit.err())
        .contains(
            "sbatch: warning: --qos=normal was ignored: this controller has no priority"
                + " classes");
    cluster.waitState(id, JobState.RUNNING, Duration.ofSeconds(60));

    Run squeue = slurm("squeue", run, null, "-j", Long.toString(id), "-o", "%i %j %T", "-h");
    assertThat(squeue.out()).isEqualTo(id + " sleeper RUNNING\n");
    Run mine = slurm("squeue", run, null, "-u", "root", "-h", "-o", "%i %D %t");
    assertThat(mine.out()).contains(id + " 2 R\n");
    Run sinfo = slurm("sinfo", run, null, "-N", "-h", "-o", "%N %T");
    var placed = cluster.job(id).placement().stream().map(p -> p.node()).toList();
    var nodeStates = new StringBuilder();
    for (String n : List.of("gpu001", "gpu002", "gpu003", "gpu004")) {
      nodeStates.append(n).append(placed.contains(n) ? " mixed\n" : " idle\n");
    }
    assertThat(sinfo.out()).isEqualTo(nodeStates.toString());

    Run scancel = slurm("scancel", run, null, Long.toString(id));
    assertThat(scancel.code()).as(scancel.err()).isZero();
    ended(id, JobState.CANCELLED);
    Run sacct =
        slurm(
            "sacct",
            run,
            null,
            "-j",
            Long.toString(id),
            "-X",
            "-n",
            "-P",
            "-o",
            "JobID,JobName,State");
    assertThat(sacct.out()).startsWith(id + "|sleeper|CANCELLED");
  }

  @Test
  void aScriptWithoutAnInterpreterLineIsRefusedAsSbatchRefusesIt() throws Exception {
    Path run = Files.createDirectories(dir.resolve("run-noshebang"));
    Files.writeString(run.resolve("job.sh"), "echo hi\n");

    Run r = sbatch(run, null, "job.sh");

    assertThat(r.code()).isEqualTo(1);
    assertThat(r.err())
        .contains("sbatch: error: This does not look like a batch script")
        .contains("#!");
  }
}
