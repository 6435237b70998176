package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kairos.protocol.GpuDevice;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.SubmitResult;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.HeartbeatReply;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.Registration;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The API against a real single-replica controller (Ratis on a temp dir, HTTP on a free port). */
class ControllerApiTest {
  @TempDir static Path dir;
  static Controller controller;
  static TestApi api;
  static TestApi agent;

  @BeforeAll
  static void start() throws Exception {
    controller =
        Controller.start(
            ControllerConfig.single(dir, "127.0.0.1", 0).withRunAs(TestApi.SINGLE_USER));
    Leaders.awaitLeader(controller, Duration.ofSeconds(30)); // agent endpoints answer on the leader
    api = new TestApi(controller.url(), controller.adminToken());
    agent = api.as(controller.joinToken());
  }

  @AfterAll
  static void stop() throws Exception {
    controller.close();
  }

  static Registration node(String name, int gpus) {
    var list = new ArrayList<GpuDevice>();
    for (int i = 0; i < gpus; i++) {
      list.add(new GpuDevice(i, "GPU-" + name + "-" + i, "H100", 80L << 30));
    }
    return TestApi.identified(
        new Registration(
            name, "http://127.0.0.1:1", list, 64, 512L << 30, Map.of(), "z", "b", "r", gpus));
  }

  @Test
  void anArrayRepliesWithItsFirstIdAndCountAndADependencyWaitsThenIsCancelledWhenItCannotHold() {
    // 64 GPUs on one node: no test node can hold it, so nothing here ever starts.
    var submitted =
        api.post(
            "/api/v1/jobs",
            "{\"command\": [\"sleep\", \"60\"], \"gpus\": 64, \"array\": \"0-6:2%2\"}");
    assertThat(submitted.status()).as(submitted.body()).isEqualTo(201);
    var result = submitted.as(SubmitResult.class);
    assertThat(result.count()).isEqualTo(4);
    long first = result.id();
    var third = api.get("/api/v1/jobs/" + (first + 2)).as(JobView.class);
    assertThat(third.arrayJobId()).isEqualTo(first);
    assertThat(third.arrayTaskId()).isEqualTo(4);
    assertThat(third.pendingReason()).isEqualTo("ARRAY_LIMIT");
    assertThat(api.get("/api/v1/jobs/" + first).as(JobView.class).pendingReason())
        .isEqualTo("NO_NODE_CAN_HOLD");

    var single = api.post("/api/v1/jobs", "{\"command\": [\"true\"], \"gpus\": 64}");
    assertThat(single.body()).doesNotContain("count");
    var dependent =
        api.post(
                "/api/v1/jobs",
                "{\"command\": [\"true\"], \"dependency\": \"afterok:" + first + "\"}")
            .as(SubmitResult.class)
            .id();
    var waiting = api.get("/api/v1/jobs/" + dependent).as(JobView.class);
    assertThat(waiting.pendingReason()).isEqualTo("DEPENDENCY");
    assertThat(waiting.pendingDetail()).contains("afterok:" + first);
    assertThat(waiting.dependency()).isEqualTo("afterok:" + first);

    api.post("/api/v1/jobs/" + (first + 1) + "/cancel", "");
    assertThat(api.get("/api/v1/jobs/" + (first + 2)).as(JobView.class).pendingReason())
        .isEqualTo("NO_NODE_CAN_HOLD");
    var cancelled = api.get("/api/v1/jobs/" + dependent).as(JobView.class);
    assertThat(cancelled.state()).isEqualTo(JobState.CANCELLED);
    assertThat(cancelled.message()).startsWith("dependency never satisfied: afterok:" + first);
  }

  @Test
  void aSubmittedJobRunsOnARegisteredNodeAndSucceedsWhenItsTaskExitsZero() {
    var submitted = api.post("/api/v1/jobs", "{\"command\": [\"sleep\", \"60\"], \"gpus\": 2}");
    assertThat(submitted.status()).as(submitted.body()).isEqualTo(201);
    long id = submitted.as(SubmitResult.class).id();

    var pending = api.get("/api/v1/jobs/" + id).as(JobView.class);
    assertThat(pending.state()).isEqualTo(JobState.PENDING);

    var reg = agent.post("/api/v1/agents/register", node("n1", 4));
    assertThat(reg.status()).as(reg.body()).isEqualTo(200);
    long epoch = reg.as(Registered.class).epoch();

    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> api.get("/api/v1/jobs/" + id).as(JobView.class).state() == JobState.RUNNING);
    var hb =
        agent
            .asNode("n1")
            .post("/api/v1/agents/heartbeat", new Heartbeat("n1", epoch, List.of(), 0))
            .as(HeartbeatReply.class);
    assertThat(hb.fenced()).isFalse();
    assertThat(hb.launch()).hasSize(1);
    var a = hb.launch().get(0);
    assertThat(a.jobId()).isEqualTo(id);
    assertThat(a.gpus()).hasSize(2);

    var exited = new TaskReport(id, a.attempt(), 0, TaskStatus.EXITED, 0, null, null, 1L, 2L);
    var hb2 =
        agent
            .asNode("n1")
            .post("/api/v1/agents/heartbeat", new Heartbeat("n1", epoch, List.of(exited), 0))
            .as(HeartbeatReply.class);
    assertThat(hb2.forget()).hasSize(1);
    var done = api.get("/api/v1/jobs/" + id).as(JobView.class);
    assertThat(done.state()).isEqualTo(JobState.SUCCEEDED);
    assertThat(done.exitCode()).isZero();
  }

  @Test
  void aCpuOnlyJobAndATwoNodeGangStartWithTheRightShape() {
    var reg1 = agent.post("/api/v1/agents/register", node("g1", 8)).as(Registered.class);
    var reg2 = agent.post("/api/v1/agents/register", node("g2", 8)).as(Registered.class);
    long cpu = api.post("/api/v1/jobs", "{\"command\": [\"true\"]}").as(SubmitResult.class).id();
    long gang =
        api.post("/api/v1/jobs", "{\"command\": [\"true\"], \"gpus\": 16, \"gpusPerNode\": 8}")
            .as(SubmitResult.class)
            .id();

    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                api.get("/api/v1/jobs/" + cpu).as(JobView.class).state() == JobState.RUNNING
                    && api.get("/api/v1/jobs/" + gang).as(JobView.class).state()
                        == JobState.RUNNING);
    var g = api.get("/api/v1/jobs/" + gang).as(JobView.class);
    assertThat(g.tasks()).isEqualTo(2);
    assertThat(g.placement()).extracting(p -> p.node()).containsExactlyInAnyOrder("g1", "g2");
    assertThat(g.placement()).allSatisfy(p -> assertThat(p.gpus()).hasSize(8));
    assertThat(api.get("/api/v1/jobs/" + cpu).as(JobView.class).placement().get(0).gpus())
        .isEmpty();
    assertThat(reg1.epoch()).isNotEqualTo(reg2.epoch());
  }
}
