package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kairos.protocol.CheckpointList;
import io.kairos.protocol.CheckpointView;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.SubmitResult;
import io.kairos.protocol.TokenCreated;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.HeartbeatReply;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.TaskAssignment;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /api/v1/jobs/{id}/checkpoints} against a real controller, with an agent played by hand: a
 * checkpointing job reports its checkpoints with its own credential, Kairos keeps the newest and
 * names those pruned, and the attacks are refused: another user's token, a job's credential for
 * another job, a manifest or shard outside the job's checkpoint directory, no token at all.
 */
class CheckpointApiTest {
  @TempDir Path dir;
  Controller controller;
  TestApi api;
  TestApi join;
  long epoch;

  static final String CKPT_JOB =
      "{\"command\":[\"python3\",\"train.py\"],\"gpus\":1,"
          + "\"checkpoint\":{\"signal\":\"SIGUSR2\",\"timeout\":\"45s\",\"every\":\"10m\",\"keep\":2}}";

  @BeforeEach
  void start() throws Exception {
    controller =
        Controller.start(
            ControllerConfig.single(dir, "127.0.0.1", 0)
                .withRunAs(TestApi.SINGLE_USER)
                .withDetection(AgentProtocolTest.PATIENT)
                .withLease(io.kairos.control.agent.LeaseSettings.PATIENT));
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    api = new TestApi(controller.url(), controller.adminToken());
    join = api.as(controller.joinToken());
    var reply = join.post("/api/v1/agents/register", ControllerApiTest.node("n1", 4));
    assertThat(reply.status()).as(reply.body()).isEqualTo(200);
    epoch = reply.as(Registered.class).epoch();
  }

  @AfterEach
  void stop() throws IOException {
    if (controller != null) {
      controller.close();
    }
  }

  HeartbeatReply beat() {
    var reply =
        join.asNode("n1")
            .post("/api/v1/agents/heartbeat", new Heartbeat("n1", epoch, List.of(), 0, null));
    assertThat(reply.status()).as(reply.body()).isEqualTo(200);
    return reply.as(HeartbeatReply.class);
  }

  long submit(TestApi as, String body) {
    var reply = as.post("/api/v1/jobs", body);
    assertThat(reply.status()).as(reply.body()).isEqualTo(201);
    return reply.as(SubmitResult.class).id();
  }

  /** Submits, waits until it runs, and returns its launch on n1 (with its credential). */
  TaskAssignment running(TestApi as, String body) {
    long id = submit(as, body);
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> api.get("/api/v1/jobs/" + id).as(JobView.class).state() == JobState.RUNNING);
    return await()
        .atMost(Duration.ofSeconds(15))
        .until(
            () -> beat().launch().stream().filter(a -> a.jobId() == id).findFirst().orElse(null),
            a -> a != null && a.jobToken() != null);
  }

  static String report(long step, String manifest, String... files) {
    var f = new StringBuilder();
    for (String file : files) {
      f.append(f.isEmpty() ? "" : ",").append('"').append(file).append('"');
    }
    return "{\"step\":"
        + step
        + ",\"sizeBytes\":"
        + (100 * step)
        + ",\"manifest\":\""
        + manifest
        + "\",\"files\":["
        + f
        + "]}";
  }

  static String ok(long step) {
    return report(
        step, "step-" + step + "/MANIFEST.json", "step-" + step + "/shard-00000-of-00001.pt");
  }

  @Test
  void aJobRecordsItsCheckpointsWithItsOwnCredentialAndKairosKeepsTheNewest() {
    TaskAssignment task = running(api, CKPT_JOB);
    assertThat(task.checkpoint()).isNotNull();
    assertThat(task.checkpoint().signal()).isEqualTo("USR2");
    assertThat(task.checkpoint().timeoutSec()).isEqualTo(45);
    assertThat(task.checkpoint().everySec()).isEqualTo(600);
    assertThat(task.checkpoint().restoreStep()).isNull();
    var job = api.as(task.jobToken());
    String path = "/api/v1/jobs/" + task.jobId() + "/checkpoints";

    for (long step : new long[] {10, 20}) {
      var r = job.post(path, ok(step));
      assertThat(r.status()).as(r.body()).isEqualTo(200);
      assertThat(r.as(CheckpointList.class).pruned()).isEmpty();
    }
    var third = job.post(path, ok(30)).as(CheckpointList.class);
    assertThat(third.pruned()).extracting(CheckpointView::step).containsExactly(10L);
    assertThat(third.checkpoints()).extracting(CheckpointView::step).containsExactly(20L, 30L);

    var listed = api.get(path).as(CheckpointList.class);
    assertThat(listed.keep()).isEqualTo(2);
    assertThat(listed.signal()).isEqualTo("USR2");
    assertThat(listed.checkpoints())
        .last()
        .satisfies(
            c -> {
              assertThat(c.step()).isEqualTo(30);
              assertThat(c.attempt()).isEqualTo(1);
              assertThat(c.sizeBytes()).isEqualTo(3000);
              assertThat(c.manifest()).isEqualTo("step-30/MANIFEST.json");
              assertThat(c.files()).isEqualTo(1);
            });
    assertThat(job.get(path).status()).as("the job lists its own").isEqualTo(200);
    JobView view = api.get("/api/v1/jobs/" + task.jobId()).as(JobView.class);
    assertThat(view.lastCheckpoint().step()).isEqualTo(30);
  }

  @Test
  void anotherUsersTokenCannotListOrRecordAndAJobsCredentialOnlyItsOwn() {
    TaskAssignment a = running(api, CKPT_JOB);
    TaskAssignment b = running(api, CKPT_JOB);
    String pathA = "/api/v1/jobs/" + a.jobId() + "/checkpoints";
    String pathB = "/api/v1/jobs/" + b.jobId() + "/checkpoints";
    String eve = api.post("/api/v1/tokens", "{\"user\":\"eve\"}").as(TokenCreated.class).token();

    assertThat(api.as(eve).post(pathA, ok(1)).status()).as("eve records").isEqualTo(403);
    assertThat(api.as(eve).get(pathA).status()).as("eve lists").isEqualTo(403);
    assertThat(api.as(a.jobToken()).post(pathB, ok(1)).status())
        .as("job A's credential records for job B")
        .isEqualTo(403);
    assertThat(api.as(a.jobToken()).get(pathB).status())
        .as("job A's credential lists job B's")
        .isEqualTo(403);
    assertThat(api.as(null).post(pathA, ok(1)).status()).as("no token").isEqualTo(401);
    assertThat(api.as(null).get(pathA).status()).isEqualTo(401);
    assertThat(api.as("kstep-forged").post(pathA, ok(1)).status()).isEqualTo(401);
    assertThat(api.as(a.jobToken()).post(pathA, ok(1).replace("{", "{\"attempt\":7,")).status())
        .as("another attempt than its credential's")
        .isEqualTo(400);
    assertThat(api.get(pathA).as(CheckpointList.class).checkpoints())
        .as("nothing was recorded")
        .isEmpty();
    assertThat(api.get(pathB).as(CheckpointList.class).checkpoints()).isEmpty();

    // eve's own job's credential cannot reach alice's job either
    String eveJob = "{\"command\":[\"sleep\",\"60\"],\"cpus\":1}";
    long eves = submit(api.as(eve), eveJob);
    assertThat(api.as(eve).get("/api/v1/jobs/" + eves + "/checkpoints").status())
        .as("her own job lists (it declares none)")
        .isEqualTo(200);
  }

  @Test
  void aManifestOrShardOutsideTheCheckpointDirectoryIsRefused() {
    TaskAssignment task = running(api, CKPT_JOB);
    var job = api.as(task.jobToken());
    String path = "/api/v1/jobs/" + task.jobId() + "/checkpoints";
    var cases =
        List.of(
            List.of(report(1, "/etc/passwd", "step-1/a.pt"), "manifest"),
            List.of(report(1, "../other-job/MANIFEST.json", "step-1/a.pt"), "manifest"),
            List.of(report(1, "step-1/../../x/MANIFEST.json", "step-1/a.pt"), "manifest"),
            List.of(report(1, "step-1/MANIFEST.json", "/home/bob/model.pt"), "files[0]"),
            List.of(report(1, "step-1/MANIFEST.json", "step-1/a.pt", ".."), "files[1]"),
            List.of(report(1, "step-1/MANIFEST.json", "step-1//a.pt"), "files[0]"),
            List.of(report(1, "step-1\\\\..\\\\MANIFEST.json"), "manifest"),
            List.of(report(1, "step-1/MANIFEST.json\\u0000"), "manifest"),
            List.of("{\"step\":-1,\"manifest\":\"m\"}", "step"),
            List.of("{\"manifest\":\"m\"}", "step"),
            List.of("{\"step\":1,\"sizeBytes\":-5,\"manifest\":\"m\"}", "sizeBytes"),
            List.of("{\"step\":1}", "manifest"),
            List.of("{\"step\":\"one\",\"manifest\":\"m\"}", "step"),
            List.of("[1]", ""));
    for (var c : cases) {
      var r = job.post(path, c.get(0));
      assertThat(r.status()).as("%s -> %s", c.get(0), r.body()).isEqualTo(400);
      if (!c.get(1).isEmpty()) {
        assertThat(r.body()).as(c.get(0)).contains("\"field\":\"" + c.get(1) + "\"");
      }
    }
    assertThat(api.get(path).as(CheckpointList.class).checkpoints()).isEmpty();
  }

  @Test
  void aJobThatDeclaresNoCheckpointsCannotRecordOne() {
    TaskAssignment task = running(api, "{\"command\":[\"sleep\",\"60\"],\"gpus\":1}");
    assertThat(task.checkpoint()).isNull();
    var r = api.as(task.jobToken()).post("/api/v1/jobs/" + task.jobId() + "/checkpoints", ok(1));
    assertThat(r.status()).isEqualTo(409);
    assertThat(r.body()).contains("does not declare checkpoints");
  }
}
