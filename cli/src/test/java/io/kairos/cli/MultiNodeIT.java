package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.kairos.protocol.JobState;
import io.kairos.protocol.JobSubmission;
import io.kairos.protocol.NodeState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Several nodes on one machine, every part a real process: {@code kairos server} and three {@code
 * kairos agent}s, each on its own loopback address (127.0.0.2-4) with two emulated GPUs. Covers a
 * two-node gang's rendezvous (and a real PyTorch all-reduce over gloo), an agent killed with
 * SIGKILL mid-job, and one frozen with SIGSTOP past its lease: the job moves, resumes from its
 * checkpoint, and no rank ever runs twice at once (checked on the ranks' own step logs).
 */
class MultiNodeIT {
  @TempDir static Path dir;
  static TestCluster cluster;
  static final List<String> NODES = List.of("n1", "n2", "n3");

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.start(dir);
    for (int i = 0; i < NODES.size(); i++) {
      cluster.agent(NODES.get(i), 2 + i, "2xEMU");
    }
  }

  @AfterAll
  static void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  static Path resource(String name) {
    try {
      return Path.of(MultiNodeIT.class.getResource("/jobs/" + name).toURI());
    } catch (java.net.URISyntaxException e) {
      throw new AssertionError(e);
    }
  }

  static JobSubmission job(List<String> command, int gpus, Integer perNode, Path checkpoints) {
    return new JobSubmission(
        null,
        command,
        Map.of("GLOO_SOCKET_IFNAME", "lo"),
        null,
        gpus,
        perNode,
        null,
        null,
        "10m",
        null,
        null,
        null,
        null,
        null,
        "5s",
        null,
        checkpoints.toString(),
        null,
        null);
  }

  @Test
  void aTwoNodeGangStartsTogetherWithPyTorchsRendezvousVariables() throws Exception {
    Path out = Files.createDirectories(dir.resolve("gang"));
    String script =
        "env | grep -E '^(RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|NODE_RANK|MASTER_ADDR"
            + "|MASTER_PORT|KAIROS_JOB_ID|KAIROS_NODE|KAIROS_NODES|CUDA_VISIBLE_DEVICES)=' | sort"
            + " > $KAIROS_CHECKPOINT_DIR/env-$RANK; date +%s%N > $KAIROS_CHECKPOINT_DIR/start-$RANK";
    long id = cluster.submit(job(List.of("/bin/sh", "-c", script), 4, 2, out));
    cluster.waitState(id, JobState.SUCCEEDED, Duration.ofSeconds(60));

    var view = cluster.job(id);
    assertThat(view.placement()).hasSize(2);
    String rank0Node = view.placement().get(0).node();
    String masterAddr = "127.0.0." + (2 + NODES.indexOf(rank0Node));
    for (int rank = 0; rank < 2; rank++) {
      var env = env(out.resolve("env-" + rank));
      assertThat(env)
          .containsEntry("RANK", "" + rank)
          .containsEntry("NODE_RANK", "" + rank)
          .containsEntry("WORLD_SIZE", "2")
          .containsEntry("LOCAL_RANK", "0")
          .containsEntry("LOCAL_WORLD_SIZE", "1")
          .containsEntry("KAIROS_JOB_ID", "" + id)
          .containsEntry("MASTER_ADDR", masterAddr)
          .containsEntry("KAIROS_NODE", view.placement().get(rank).node())
          .containsEntry("KAIROS_NODES", rank0Node + "," + view.placement().get(1).node());
      assertThat(env.get("MASTER_PORT")).isNotBlank();
      assertThat(env.get("CUDA_VISIBLE_DEVICES").split(",")).hasSize(2);
    }
    // The barrier: neither rank started before both were ready.
    long start0 = Long.parseLong(Files.readString(out.resolve("start-0")).strip());
    long start1 = Long.parseLong(Files.readString(out.resolve("start-1")).strip());
    assertThat(Math.abs(start0 - start1))
        .as("ranks started %d ms apart", Math.abs(start0 - start1) / 1_000_000)
        .isLessThan(2_000_000_000L);
  }

  @Test
  void aRealPyTorchAllReduceRunsOnTwoNodesUnderKairosRendezvous() throws Exception {
    var probe = new ProcessBuilder("/usr/bin/python3", "-c", "import torch.distributed").start();
    assumeThat(probe.waitFor()).as("python3-torch is installed (.ci/run installs it)").isZero();
    Path out = Files.createDirectories(dir.resolve("torch"));
    long id =
        cluster.submit(
            job(List.of("/usr/bin/python3", resource("allreduce.py").toString()), 2, 1, out));
    cluster.waitState(id, JobState.SUCCEEDED, Duration.ofSeconds(120));
    for (int rank = 0; rank < 2; rank++) {
      assertThat(Files.readString(out.resolve("allreduce-rank" + rank)))
          .contains("rank=" + rank)
          .contains("world=2")
          .contains("sum=3.0");
    }
  }

  @Test
  void anAgentKilledMidJobIsDetectedAndItsJobResumesElsewhereFromItsCheckpoint() throws Exception {
    Path out = Files.createDirectories(dir.resolve("kill9"));
    Files.writeString(out.resolve("hang"), "");
    long id =
        cluster.submit(
            job(List.of("/usr/bin/python3", resource("marker.py").toString(), "20"), 2, null, out));
    cluster.waitState(id, JobState.RUNNING, Duration.ofSeconds(30));
    String lost = cluster.job(id).placement().get(0).node();
    TestCluster.waitFor(
        "the job has made progress",
        Duration.ofSeconds(20),
        () -> lines(out.resolve("rank0.log")).size() >= 5,
        () -> "");

    long killedAt = System.nanoTime();
    cluster.signal(lost, "KILL");
    TestCluster.waitFor(
        "node " + lost + " is DOWN",
        Duration.ofSeconds(20),
        () -> cluster.node(lost).map(n -> n.state() == NodeState.DOWN).orElse(false),
        cluster::serverLog);
    long detectedMs = (System.nanoTime() - killedAt) / 1_000_000;
    assertThat(detectedMs).as("detection took %d ms", detectedMs).isBetween(2_000L, 12_000L);
    assertThat(cluster.node(lost).orElseThrow().reason()).contains("no heartbeat");

    TestCluster.waitFor(
        "the job runs again, elsewhere",
        Duration.ofSeconds(60),
        () -> cluster.job(id).state() == JobState.RUNNING && cluster.job(id).attempt() == 2,
        () -> cluster.job(id) + "\n" + cluster.serverLog());
    assertThat(cluster.job(id).placement().get(0).node()).isNotEqualTo(lost);
    cluster.waitState(id, JobState.SUCCEEDED, Duration.ofSeconds(60));
    assertNeverRanTwice(out.resolve("rank0.log"));

    restart(lost, 2 + NODES.indexOf(lost));
  }

  @Test
  void anAgentFrozenPastItsLeaseIsFencedAndNothingRunsTwice() throws Exception {
    Path out = Files.createDirectories(dir.resolve("sigstop"));
    Files.writeString(out.resolve("hang"), "");
    long id =
        cluster.submit(
            job(List.of("/usr/bin/python3", resource("marker.py").toString(), "20"), 2, null, out));
    cluster.waitState(id, JobState.RUNNING, Duration.ofSeconds(30));
    String frozen = cluster.job(id).placement().get(0).node();
    TestCluster.waitFor(
        "the job has made progress",
        Duration.ofSeconds(20),
        () -> lines(out.resolve("rank0.log")).size() >= 5,
        () -> "");

    cluster.signal(frozen, "STOP");
    try {
      TestCluster.waitFor(
          "the job runs again, elsewhere",
          Duration.ofSeconds(60),
          () -> cluster.job(id).state() == JobState.RUNNING && cluster.job(id).attempt() == 2,
          () -> cluster.job(id) + "\n" + cluster.serverLog());
      // The frozen agent's task was killed by its fence watchdog when the lease ran out, before
      // the controller let the job start elsewhere.
      Thread.sleep(1500);
    } finally {
      cluster.signal(frozen, "CONT");
    }
    TestCluster.waitFor(
        "the thawed agent registers again",
        Duration.ofSeconds(30),
        () -> cluster.node(frozen).map(n -> n.state() == NodeState.UP).orElse(false),
        () -> cluster.agentLog(frozen));
    cluster.waitState(id, JobState.SUCCEEDED, Duration.ofSeconds(60));
    assertNeverRanTwice(out.resolve("rank0.log"));
    assertThat(cluster.agentLog(frozen)).containsAnyOf("fenced", "LEASE EXPIRED");
  }

  /** Restarts a killed agent under its name and data directory; it must come back UP. */
  static void restart(String name, int host) throws Exception {
    cluster.agentProcess(name).waitFor();
    cluster.agent(name, host, "2xEMU");
  }

  /**
   * Per-rank step log: attempt 1's lines all come before attempt 2's first line (the attempts never
   * overlapped), and attempt 2 resumed from attempt 1's checkpoint (its first step is not 0 and
   * follows on).
   */
  static void assertNeverRanTwice(Path log) throws IOException {
    var entries = lines(log);
    long lastOfFirst = Long.MIN_VALUE;
    long firstOfSecond = Long.MAX_VALUE;
    int firstStepOfSecond = -1;
    int lastStepOfFirst = -1;
    var nodes = new TreeMap<Integer, String>();
    for (String line : entries) {
      String[] f = line.split(" ");
      int attempt = Integer.parseInt(f[0]);
      int step = Integer.parseInt(f[2]);
      long ns = Long.parseLong(f[3]);
      nodes.put(attempt, f[1]);
      if (attempt == 1) {
        lastOfFirst = Math.max(lastOfFirst, ns);
        lastStepOfFirst = Math.max(lastStepOfFirst, step);
      } else if (ns < firstOfSecond) {
        firstOfSecond = ns;
        firstStepOfSecond = step;
      }
    }
    assertThat(nodes).containsKeys(1, 2);
    assertThat(nodes.get(1)).isNotEqualTo(nodes.get(2));
    assertThat(lastOfFirst)
        .as("attempt 1 wrote after attempt 2 had started (ran twice)")
        .isLessThan(firstOfSecond);
    assertThat(firstStepOfSecond)
        .as("attempt 2 resumed from the checkpoint")
        .isGreaterThan(0)
        .isLessThanOrEqualTo(lastStepOfFirst + 1);
  }

  static List<String> lines(Path p) {
    try {
      return Files.exists(p) ? Files.readAllLines(p) : new ArrayList<>();
    } catch (IOException e) {
      return new ArrayList<>();
    }
  }

  static Map<String, String> env(Path file) throws IOException {
    var out = new TreeMap<String, String>();
    for (String line : Files.readAllLines(file)) {
      int eq = line.indexOf('=');
      out.put(line.substring(0, eq), line.substring(eq + 1));
    }
    return out;
  }
}
