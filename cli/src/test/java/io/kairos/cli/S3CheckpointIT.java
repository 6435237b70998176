package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.kairos.cli.ckpt.CheckpointStore;
import io.kairos.cli.ckpt.CheckpointWriter;
import io.kairos.cli.ckpt.Manifests;
import io.kairos.cli.ckpt.Manifests.Status;
import io.kairos.protocol.CheckpointSpec;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobSubmission;
import java.io.ByteArrayOutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checkpoints in object storage, against a real S3-compatible server ({@link S3TestServer}:
 * S3Proxy, started by the test): the Python helper's protocol tests on S3, the Java reader agreeing
 * with what Python wrote (complete, incomplete, refused), {@code kairos bench checkpoint} to S3 and
 * to a directory, and a checkpointing job preempted through Kairos that resumes from its checkpoint
 * in S3, with real controller and agent processes.
 */
class S3CheckpointIT {
  static final Path PYTHON = Path.of("/usr/bin/python3");
  static final Path HELPER = Path.of("..", "python").toAbsolutePath().normalize();
  static final String BUCKET = "kairos-ckpt";

  @TempDir static Path dir;
  static S3TestServer s3;

  @BeforeAll
  static void startServer() throws Exception {
    if (!S3TestServer.available()) {
      assertThat(System.getenv("CI"))
          .as("CI runs the S3 tests: the build fetches S3Proxy")
          .isNull();
      assumeThat(false).as("S3Proxy's jar (target/s3proxy) is not here").isTrue();
    }
    s3 = S3TestServer.start(dir);
    s3.createBucket(BUCKET);
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (s3 != null) {
      s3.close();
    }
  }

  static boolean boto3() throws Exception {
    Process p = new ProcessBuilder(PYTHON.toString(), "-c", "import boto3").start();
    return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
  }

  static String python(Map<String, String> env, String... args) throws Exception {
    var cmd = new java.util.ArrayList<>(List.of(PYTHON.toString(), "-W", "ignore"));
    cmd.addAll(List.of(args));
    var pb = new ProcessBuilder(cmd).directory(HELPER.toFile()).redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p = pb.start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(300, TimeUnit.SECONDS)).as(out).isTrue();
    assertThat(p.exitValue()).as(out + "\n" + s3.log()).isZero();
    return out;
  }

  @Test
  void thePythonHelpersProtocolHoldsInS3() throws Exception {
    assumeThat(Files.isExecutable(PYTHON)).as("Debian's python3").isTrue();
    assertThat(boto3()).as("Debian's python3-boto3 (.ci/run installs it)").isTrue();
    var env = new HashMap<>(s3.clientEnv());
    env.put("KAIROS_TEST_S3_ENDPOINT", s3.endpoint);
    env.put("KAIROS_TEST_S3_BUCKET", BUCKET);
    String out = python(env, "-m", "unittest", "-v", "test_kairos_ckpt.S3ProtocolTest");
    assertThat(out).contains("Ran 6 tests").doesNotContain("skipped");
    assertThat(out)
        .containsPattern("test_kill_9_while_writing_the_manifest .*\\.\\.\\. ok")
        .containsPattern(
            "(?s)test_a_manifest_naming_a_key_outside_the_prefix_is_refused .*?\\.\\.\\. .*?ok");
  }

  @Test
  void javaReadsWhatPythonWroteByTheSameRule() throws Exception {
    assumeThat(Files.isExecutable(PYTHON)).as("Debian's python3").isTrue();
    assertThat(boto3()).as("Debian's python3-boto3").isTrue();
    String url = "s3://" + BUCKET + "/written-by-python";
    String code =
        """
        import sys, json, threading
        import kairos_ckpt
        url = sys.argv[1]
        ranks = [kairos_ckpt.Checkpointer(url=url, rank=r, world_size=2, keep=10, report=False)
                 for r in range(2)]
        for step in (1, 2):
            t = threading.Thread(target=ranks[1].save, args=(step, {"rank": 1}))
            t.start()
            ranks[0].save(step, {"rank": 0})
            t.join()
        store = ranks[0].store
        store.put("step-0000000003/shard-00000-of-00002.pkl", b"a shard, no manifest")
        store.put("step-0000000004/MANIFEST.json", json.dumps({"version": 1, "step": 4,
            "shards": [{"path": "../other-job/step-0000000001/x", "bytes": 9}]}).encode())
        print("newest", kairos_ckpt.Checkpointer(url=url, report=False).newest()[0])
        """;
    String out = python(s3.clientEnv(), "-c", code, url);
    assertThat(out).contains("newest 2");
    try (CheckpointStore store = s3.store(url)) {
      List<Manifests.Found> found = Manifests.scan(store);
      assertThat(found).extracting(Manifests.Found::step).containsExactly(1L, 2L, 3L, 4L);
      assertThat(found)
          .extracting(Manifests.Found::status)
          .containsExactly(Status.COMPLETE, Status.COMPLETE, Status.INCOMPLETE, Status.REFUSED);
      assertThat(found.get(1).shards()).isEqualTo(2);
      assertThat(found.get(2).reason()).contains("no manifest");
      assertThat(found.get(3).reason()).contains("leaves the checkpoint location");
      assertThat(Manifests.newest(store).orElseThrow().step()).isEqualTo(2);
      // and the other way: a checkpoint the Java writer made is complete by the same rule
      CheckpointWriter.write(store, 9, List.of(new byte[1000], new byte[2000]));
      assertThat(Manifests.newest(store).orElseThrow())
          .extracting(Manifests.Found::step, Manifests.Found::status)
          .containsExactly(9L, Status.COMPLETE);
    }
  }

  @Test
  void benchCheckpointWritesAndReadsBackToS3AndToADirectory() {
    for (String location : List.of("s3://" + BUCKET + "/bench", dir.resolve("bench").toString())) {
      var out = new ByteArrayOutputStream();
      var err = new ByteArrayOutputStream();
      int code;
      try (var o = new PrintWriter(out, true, StandardCharsets.UTF_8);
          var e = new PrintWriter(err, true, StandardCharsets.UTF_8)) {
        code =
            Main.run(
                o,
                e,
                "bench",
                "checkpoint",
                "--location",
                location,
                "--s3-endpoint",
                s3.endpoint,
                "--mib",
                "2",
                "--ranks",
                "2",
                "--runs",
                "2");
      }
      String printed = out.toString(StandardCharsets.UTF_8);
      assertThat(code).as(printed + err).isZero();
      assertThat(printed).containsPattern("(?m)^\\s+2\\s+2\\s+[0-9.]+ \\([0-9.]+-[0-9.]+\\)");
    }
  }

  @Test
  void aPreemptedJobResumesFromItsCheckpointInS3() throws Exception {
    assumeThat(Files.isExecutable(PYTHON)).as("Debian's python3").isTrue();
    assertThat(boto3()).as("Debian's python3-boto3").isTrue();
    Path tenancy = dir.resolve("tenancy.yaml");
    Files.writeString(tenancy, CheckpointPreemptionIT.TENANCY);
    String location = "s3://" + BUCKET + "/trainer";
    Path progress = dir.resolve("progress.txt");
    var creds = new HashMap<>(s3.clientEnv());
    creds.remove("KAIROS_S3_ENDPOINT"); // the agent tells the job its endpoint
    JobSubmission trainer =
        CheckpointPreemptionIT.job(
                "trainer",
                List.of(
                    PYTHON.toString(),
                    CheckpointPreemptionIT.SCRIPT.toString(),
                    "--steps",
                    "1000000",
                    "--step-time",
                    "0.02",
                    "--progress",
                    progress.toString()),
                0)
            .withCheckpoint(new CheckpointSpec("USR1", "60s", "0", 2))
            .withCheckpointLocation(location, creds);
    Path clusterDir = Files.createDirectories(dir.resolve("cluster"));
    try (var cluster = TestCluster.start(clusterDir, "--tenancy", tenancy.toString())) {
      cluster.agent("s3-n1", 2, "1xH100", "--checkpoint-s3-endpoint", s3.endpoint);
      long victim = cluster.submit(trainer);
      TestCluster.waitFor(
          "the trainer has made 10 steps",
          Duration.ofSeconds(120),
          () -> CheckpointPreemptionIT.lastStep(TestCluster.readQuietly(progress), "1") >= 10,
          () -> TestCluster.readQuietly(progress) + "\n" + cluster.agentLog("s3-n1"));
      long preemptor =
          cluster.submit(CheckpointPreemptionIT.job("urgent", List.of("sleep", "0.2"), 10));
      TestCluster.waitFor(
          "the trainer is preempted after its checkpoint",
          Duration.ofSeconds(120),
          () -> cluster.job(victim).state() == JobState.PENDING,
          () -> cluster.job(victim) + "\n" + TestCluster.readQuietly(progress));
      Matcher m = CheckpointPreemptionIT.AFTER.matcher(cluster.job(victim).message());
      assertThat(m.find()).as(cluster.job(victim).message()).isTrue();
      long saved = Long.parseLong(m.group(1));
      try (CheckpointStore store = s3.store(location)) {
        assertThat(Manifests.newest(store).orElseThrow().step())
            .as("the checkpoint written at preemption is in S3, complete")
            .isEqualTo(saved);
      }
      cluster.waitState(preemptor, JobState.SUCCEEDED, Duration.ofSeconds(60));
      TestCluster.waitFor(
          "the second attempt makes steps",
          Duration.ofSeconds(120),
          () ->
              CheckpointPreemptionIT.lastStep(TestCluster.readQuietly(progress), "2") >= saved + 5,
          () -> TestCluster.readQuietly(progress) + "\n" + cluster.serverLog());
      String all = TestCluster.readQuietly(progress);
      assertThat(all).contains("attempt 2 restored " + saved + " ");
      assertThat(CheckpointPreemptionIT.steps(all, "2").getFirst()).isEqualTo(saved + 1);

      System.setProperty("aws.accessKeyId", S3TestServer.ACCESS_KEY);
      System.setProperty("aws.secretAccessKey", S3TestServer.SECRET_KEY);
      String listed =
          TenancyIT.cli(
              cluster,
              "checkpoints",
              Long.toString(victim),
              "--storage",
              "--s3-endpoint",
              s3.endpoint);
      assertThat(listed).contains(location);
      assertThat(listed).containsPattern("(?m)^" + saved + "\\s+complete\\s+1\\s.*\\syes\\s*$");
      cluster.post("/api/v1/jobs/" + victim + "/cancel", "{}");
      cluster.waitState(victim, JobState.CANCELLED, Duration.ofSeconds(60));
    }
  }
}
