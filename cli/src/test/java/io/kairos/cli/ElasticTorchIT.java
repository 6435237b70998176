package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.assertj.core.api.Assumptions.assumeThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.CheckpointSpec;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobSubmission;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An elastic PyTorch job end to end, every part a real process: {@code kairos server}, three {@code
 * kairos agent}s (one emulated GPU each, on 127.0.0.2-4), and on each node of the job a torchrun
 * elastic agent ({@code docs/examples/torchrun_elastic.sh}: c10d rendezvous at {@code
 * KAIROS_RDZV_ENDPOINT}) running {@code docs/examples/train_elastic.py} on gloo with Debian's
 * python3-torch. The job ({@code gpus: 1-3}, one per node) starts at 2 nodes while a third (the
 * lowest) is held by another job, grows to 3 when that job ends (onto a node below its first),
 * shrinks to 1 when a higher-priority fixed 2-node job arrives (after the checkpoint the shrink
 * asks for), and finishes. Its step counter never goes back further than the last complete
 * checkpoint, and its loss curve and final parameters match an unresized run of the same script
 * (the global batch is the same whatever the world size).
 *
 * <p>With {@code -Dkairos.elasticTrials=N} a second test shrinks and grows a 1-2 node job N times
 * and prints the time from each resize decision to the job training at the new size (p50, p95);
 * scripts/elastic-bench.sh runs it. It asserts behaviour only, never times.
 */
class ElasticTorchIT {
  @TempDir static Path dir;
  static TestCluster cluster;

  static final Path PYTHON = Path.of("/usr/bin/python3");
  static final Path EXAMPLES = Path.of("..", "docs", "examples").toAbsolutePath().normalize();
  static final List<String> NODES = List.of("el-n1", "el-n2", "el-n3");

  @BeforeAll
  static void start() throws Exception {
    var probe = new ProcessBuilder(PYTHON.toString(), "-c", "import torch.distributed.run").start();
    assumeThat(probe.waitFor()).as("python3-torch is installed (.ci/run installs it)").isZero();
    cluster = TestCluster.start(dir);
    // Names of their own: agents of one name share a cgroup tree (see CheckpointPreemptionIT).
    for (int i = 0; i < NODES.size(); i++) {
      cluster.agent(NODES.get(i), 2 + i, "1xEMU");
    }
  }

  @AfterAll
  static void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** A fixed job that holds its GPUs while {@code hold} exists. */
  static JobSubmission holder(String name, int nodes, int priority, Path hold, List<String> avoid) {
    return new JobSubmission(
        name,
        List.of("/bin/sh", "-c", "while [ -e '" + hold + "' ]; do sleep 0.2; done"),
        null,
        null,
        nodes,
        1,
        null,
        null,
        "10m",
        null,
        priority,
        null,
        null,
        null,
        "5s",
        null,
        null,
        null,
        avoid);
  }

  /** The elastic trainer: 1 to {@code maxNodes} nodes, one GPU each, checkpoints in {@code out}. */
  static JobSubmission trainer(int maxNodes, Path out, int saveEvery) {
    return new JobSubmission(
            "elastic",
            List.of(
                "/bin/sh",
                EXAMPLES.resolve("torchrun_elastic.sh").toString(),
                EXAMPLES.resolve("train_elastic.py").toString(),
                "--steps",
                "1000000",
                "--stop-file",
                out.resolve("stop").toString(),
                "--step-time",
                "0.05",
                "--save-every",
                Integer.toString(saveEvery),
                "--progress",
                out.resolve("progress.txt").toString(),
                "--result",
                out.resolve("result.json").toString()),
            Map.of("GLOO_SOCKET_IFNAME", "lo"),
            null,
            1,
            1,
            null,
            null,
            "2h", // 20 measured trials take 10-15 minutes on a loaded machine
            null,
            0,
            null,
            null,
            null,
            "5s",
            null,
            out.resolve("ckpt").toString(),
            null,
            null)
        .withGpus(1, maxNodes)
        .withCheckpoint(new CheckpointSpec("USR1", "60s", "0", 3));
  }

  @Test
  void growsShrinksAndFinishesWithTheLossCurveOfAnUnresizedRun() throws Exception {
    Path out = Files.createDirectories(dir.resolve("scenario"));
    Path progress = out.resolve("progress.txt");
    Path hold = Files.writeString(out.resolve("hold"), "");
    Path holdFixed = Files.writeString(out.resolve("hold-fixed"), "");

    // A job holds el-n1, so the elastic job starts at 2 nodes of its 3 (el-n2 first, its
    // rendezvous) and grows below its first node.
    long blocker =
        cluster.submit(holder("blocker", 1, 0, hold, List.of(NODES.get(1), NODES.get(2))));
    cluster.waitState(blocker, JobState.RUNNING, Duration.ofSeconds(60));
    long job = cluster.submit(trainer(3, out, 25));
    cluster.waitState(job, JobState.RUNNING, Duration.ofSeconds(60));
    assertThat(cluster.job(job).elastic().nodes()).isEqualTo(2);
    assertThat(cluster.job(job).placement().getFirst().node()).isEqualTo(NODES.get(1));
    awaitTraining(progress, 2, 20, job);

    // The blocker ends: the job grows into el-n1, below its first node.
    Files.delete(hold);
    cluster.waitState(blocker, JobState.SUCCEEDED, Duration.ofSeconds(60));
    awaitNodes(job, 3);
    assertThat(cluster.job(job).placement().getLast().node()).isEqualTo(NODES.get(0));
    awaitTraining(progress, 3, 20, job);

    // A higher-priority gang of 2 nodes waits: the job checkpoints and shrinks to its first node.
    long fixed = cluster.submit(holder("fixed", 2, 10, holdFixed, null));
    cluster.waitState(fixed, JobState.RUNNING, Duration.ofSeconds(120));
    awaitNodes(job, 1);
    awaitTraining(progress, 1, 20, job);
    assertThat(cluster.job(fixed).placement())
        .as("the gang runs where the job shrank from: never the job's first node")
        .noneMatch(t -> t.node().equals(NODES.get(1)));

    Files.writeString(out.resolve("stop"), "");
    cluster.waitState(job, JobState.SUCCEEDED, Duration.ofSeconds(120));
    Files.delete(holdFixed);
    cluster.waitState(fixed, JobState.SUCCEEDED, Duration.ofSeconds(60));

    var view = cluster.job(job);
    assertThat(view.attempt()).as("resized in place, never requeued").isEqualTo(1);
    assertThat(String.join("\n", view.elastic().resizes()))
        .contains("2 -> 3 nodes (grew into idle nodes)")
        .contains("3 -> 2 nodes (shrank)")
        .contains("2 -> 1 nodes (shrank)");

    var lines = Files.readAllLines(progress);
    assertStepsNeverGoBackPastTheLastCheckpoint(lines);
    assertThat(worldsInOrder(lines)).as("the sizes it trained at").containsSubsequence(2, 3, 1);
    JsonNode result = TestCluster.JSON.readTree(out.resolve("result.json").toFile());
    int finalStep = result.get("step").asInt();
    var reference = reference(finalStep);
    for (String line : lines) {
      String[] f = line.split(" ");
      if (f[0].equals("step")) {
        int step = Integer.parseInt(f[1]);
        assertThat(Double.parseDouble(f[3]))
            .as("loss at step %d (%s)", step, line)
            .isCloseTo(reference.losses.get(step), within(1e-9 * reference.losses.get(step)));
      }
    }
    for (String p : List.of("w", "b")) {
      for (int i = 0; i < result.get(p).size(); i++) {
        assertThat(result.get(p).get(i).asDouble())
            .as("final %s[%d]", p, i)
            .isCloseTo(reference.result.get(p).get(i).asDouble(), within(1e-9));
      }
    }
  }

  /**
   * The measurement (scripts/elastic-bench.sh): a 1-2 node trainer on two of the three nodes is
   * shrunk to 1 node by a waiting higher-priority 2-node gang (the third node and the one the
   * shrink frees), then grown back to 2 when that gang ends, {@code kairos.elasticTrials} times.
   * Each resize is timed from its decision (a shrink: the job's message says it is shrinking, seen
   * by a 50 ms poll; a grow: the time in its resize history) to the first step rank 0 logs at the
   * new world size.
   */
  @Test
  void resizeTimes() throws Exception {
    int trials = Integer.getInteger("kairos.elasticTrials", 0);
    assumeThat(trials).as("-Dkairos.elasticTrials=N measures resizes").isPositive();
    Path out = Files.createDirectories(dir.resolve("bench"));
    Path progress = out.resolve("progress.txt");
    long job = cluster.submit(trainer(2, out, 25));
    cluster.waitState(job, JobState.RUNNING, Duration.ofSeconds(60));
    awaitNodes(job, 2);
    awaitTraining(progress, 2, 10, job);
    var shrinkMs = new ArrayList<Long>();
    var growMs = new ArrayList<Long>();
    for (int trial = 0; trial < trials; trial++) {
      Path hold = Files.writeString(out.resolve("hold-" + trial), "");
      int before = restoredLines(progress);
      long urgent = cluster.submit(holder("urgent", 2, 10, hold, null));
      TestCluster.waitFor(
          "job " + job + " is shrinking",
          Duration.ofSeconds(60),
          () -> String.valueOf(cluster.job(job).message()).startsWith("shrinking"),
          () -> cluster.job(job) + "\n" + TestCluster.tail(cluster.serverLog()));
      long decidedMs = System.currentTimeMillis();
      awaitTraining(progress, 1, 1, job);
      shrinkMs.add(firstStepAtMs(progress, 1, before) - decidedMs);
      cluster.waitState(urgent, JobState.RUNNING, Duration.ofSeconds(60));

      before = restoredLines(progress);
      // The history keeps the latest resizes only: wait for a new last entry, not a longer list.
      String lastBefore = cluster.job(job).elastic().resizes().getLast();
      Files.delete(hold);
      awaitNodes(job, 2);
      TestCluster.waitFor(
          "the grow is in the history",
          Duration.ofSeconds(30),
          () -> !cluster.job(job).elastic().resizes().getLast().equals(lastBefore),
          () -> cluster.job(job).toString());
      String grew = cluster.job(job).elastic().resizes().getLast();
      assertThat(grew).contains("1 -> 2 nodes (grew into idle nodes)");
      long grewMs = java.time.Instant.parse(grew.substring(0, grew.indexOf(": "))).toEpochMilli();
      awaitTraining(progress, 2, 1, job);
      growMs.add(firstStepAtMs(progress, 2, before) - grewMs);
      System.out.printf(
          "elastic resize trial %d: shrink %d ms, grow %d ms%n",
          trial, shrinkMs.getLast(), growMs.getLast());
      cluster.waitState(urgent, JobState.SUCCEEDED, Duration.ofSeconds(60));
    }
    Files.writeString(out.resolve("stop"), "");
    cluster.waitState(job, JobState.SUCCEEDED, Duration.ofSeconds(120));
    assertStepsNeverGoBackPastTheLastCheckpoint(Files.readAllLines(progress));
    var shrink = Percentiles.of(shrinkMs.stream().mapToLong(Long::longValue).toArray());
    var grow = Percentiles.of(growMs.stream().mapToLong(Long::longValue).toArray());
    System.out.printf(
        "elastic resize over %d trials, decision to training at the new size: shrink 2->1 p50 %d"
            + " ms p95 %d ms (min %d, max %d); grow 1->2 p50 %d ms p95 %d ms (min %d, max %d)%n",
        trials,
        shrink.value(50),
        shrink.value(95),
        shrink.min(),
        shrink.max(),
        grow.value(50),
        grow.value(95),
        grow.min(),
        grow.max());
  }

  static int restoredLines(Path progress) {
    return (int)
        TestCluster.readQuietly(progress).lines().filter(l -> l.startsWith("restored ")).count();
  }

  /**
   * The time (ms since the epoch, as rank 0 logged it) of the first step at {@code world} after the
   * first {@code restoredBefore} "restored" lines.
   */
  static long firstStepAtMs(Path progress, int world, int restoredBefore) {
    int restored = 0;
    int current = -1;
    for (String line : TestCluster.readQuietly(progress).lines().toList()) {
      String[] f = line.split(" ");
      if (f[0].equals("restored")) {
        restored++;
        current = Integer.parseInt(f[3]);
      } else if (f[0].equals("step") && restored > restoredBefore && current == world) {
        return Math.round(Double.parseDouble(f[7]) * 1000);
      }
    }
    throw new AssertionError("no step at world size " + world + " in " + progress);
  }

  /**
   * Every attempt's workers start from the newest complete checkpoint: a "restored R" line comes
   * after a "saved R" line (or R is 0 before any), and no later checkpoint was saved before it.
   */
  static void assertStepsNeverGoBackPastTheLastCheckpoint(List<String> lines) {
    int lastSaved = 0;
    int lastStep = 0;
    int restarts = 0;
    for (String line : lines) {
      String[] f = line.split(" ");
      int n = Integer.parseInt(f[1]);
      switch (f[0]) {
        case "saved" -> lastSaved = Math.max(lastSaved, n);
        case "restored" -> {
          assertThat(n)
              .as("restored the newest checkpoint (%s)", line)
              .isGreaterThanOrEqualTo(lastSaved)
              .isLessThanOrEqualTo(Math.max(lastStep, 0));
          restarts++;
          lastStep = n;
        }
        case "step" -> {
          assertThat(n).as("steps go on one by one (%s)", line).isEqualTo(lastStep + 1);
          lastStep = n;
        }
        default -> {}
      }
    }
    assertThat(restarts).as("the workers restarted at each resize").isGreaterThanOrEqualTo(3);
  }

  /** The world sizes of the "restored" lines, in order, repeats dropped. */
  static List<Integer> worldsInOrder(List<String> lines) {
    var out = new ArrayList<Integer>();
    for (String line : lines) {
      String[] f = line.split(" ");
      if (f[0].equals("restored")) {
        int world = Integer.parseInt(f[3]);
        if (out.isEmpty() || out.getLast() != world) {
          out.add(world);
        }
      }
    }
    return out;
  }

  record Reference(Map<Integer, Double> losses, JsonNode result) {}

  /** The unresized run: the same script in one process, {@code steps} steps. */
  static Reference reference(int steps) throws Exception {
    Path ref = Files.createDirectories(dir.resolve("reference"));
    var p =
        new ProcessBuilder(
                PYTHON.toString(),
                EXAMPLES.resolve("train_elastic.py").toString(),
                "--reference",
                "--steps",
                Integer.toString(steps),
                "--progress",
                ref.resolve("progress.txt").toString(),
                "--result",
                ref.resolve("result.json").toString())
            .redirectErrorStream(true)
            .redirectOutput(ref.resolve("out.log").toFile())
            .start();
    assertThat(p.waitFor()).as(TestCluster.readQuietly(ref.resolve("out.log"))).isZero();
    var losses = new HashMap<Integer, Double>();
    for (String line : Files.readAllLines(ref.resolve("progress.txt"))) {
      String[] f = line.split(" ");
      losses.put(Integer.parseInt(f[1]), Double.parseDouble(f[3]));
    }
    return new Reference(losses, TestCluster.JSON.readTree(ref.resolve("result.json").toFile()));
  }

  static void awaitNodes(long job, int nodes) throws InterruptedException {
    TestCluster.waitFor(
        "job " + job + " runs on " + nodes + " nodes",
        Duration.ofSeconds(120),
        () -> cluster.job(job).elastic().nodes() == nodes && cluster.job(job).message() == null,
        () -> cluster.job(job) + "\n" + TestCluster.tail(cluster.serverLog()));
  }

  /** Waits until rank 0 has logged {@code steps} steps at world size {@code world}. */
  static void awaitTraining(Path progress, int world, int steps, long job)
      throws InterruptedException {
    TestCluster.waitFor(
        steps + " steps at world size " + world,
        Duration.ofSeconds(180),
        () -> stepsAt(TestCluster.readQuietly(progress), world) >= steps,
        () ->
            TestCluster.tail(TestCluster.readQuietly(progress))
                + "\n"
                + cluster.job(job)
                + "\n"
                + TestCluster.tail(cluster.serverLog()));
  }

  /** Step lines at {@code world} since the last "restored" line. */
  static int stepsAt(String progress, int world) {
    int count = 0;
    int current = -1;
    for (String line : progress.lines().toList()) {
      String[] f = line.split(" ");
      if (f.length < 4) {
        continue;
      }
      if (f[0].equals("restored")) {
        current = Integer.parseInt(f[3]);
        count = 0;
      } else if (f[0].equals("step") && current == world) {
        count++;
      }
    }
    return count;
  }
}
