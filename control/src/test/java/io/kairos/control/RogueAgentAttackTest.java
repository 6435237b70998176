package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.kairos.control.auth.Tokens;
import io.kairos.protocol.GpuDevice;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.NodeState;
import io.kairos.protocol.SubmitResult;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.HeartbeatReply;
import io.kairos.protocol.agent.NodeCredential;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.Registration;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 14's rogue agent: a machine on the cluster's network that holds the join token and nothing
 * else, against a real controller (in-process, plain HTTP on loopback, where nodes prove themselves
 * with secrets of their own). Node "a" is a real node running alice's job; the rogue tries to:
 *
 * <ul>
 *   <li>impersonate it (register its name: that used to fence it and requeue its jobs);
 *   <li>steal its job (heartbeat as it, with the join token or with a credential of its own);
 *   <li>fake a completion of its task ({@code EXITED 0} would have marked the job SUCCEEDED);
 *   <li>capture a credential by registering an address of its choosing, then waiting for the
 *       controller to fetch logs from it (it used to send the join token there).
 * </ul>
 *
 * Then an admin's {@code kairos nodes reset a} lets a new agent with the join token take the name,
 * and the old agent's secret is refused.
 */
class RogueAgentAttackTest {
  @TempDir Path dir;
  Controller controller;
  TestApi admin;
  TestApi join;
  long epochA;
  long jobOnA;
  TaskAssignment taskOnA;

  @BeforeEach
  void start() throws Exception {
    controller =
        Controller.start(
            ControllerConfig.single(dir, "127.0.0.1", 0)
                .withRunAs(TestApi.SINGLE_USER)
                .withDetection(AgentProtocolTest.PATIENT)
                .withLease(io.kairos.control.agent.LeaseSettings.PATIENT));
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    admin = new TestApi(controller.url(), controller.adminToken());
    join = admin.as(controller.joinToken());
    var registered = join.post("/api/v1/agents/register", ControllerApiTest.node("a", 2));
    assertThat(registered.status()).as(registered.body()).isEqualTo(200);
    epochA = registered.as(Registered.class).epoch();
    jobOnA = submit(2);
    await().atMost(Duration.ofSeconds(15)).until(() -> job(jobOnA).state() == JobState.RUNNING);
    HeartbeatReply reply = beatAsA();
    assertThat(reply.launch()).singleElement();
    taskOnA = reply.launch().getFirst();
    beatAsA(report(taskOnA, TaskStatus.RUNNING, null));
  }

  @AfterEach
  void stop() throws IOException {
    controller.close();
  }

  @Test
  void theJoinTokenCannotRegisterAnExistingNodesName() {
    Registration impostor = rogue("a", 8, "http://127.0.0.1:1");
    var reply = join.post("/api/v1/agents/register", impostor);

    assertThat(reply.status()).as(reply.body()).isEqualTo(403);
    assertThat(reply.body()).contains("kairos nodes reset a");
    // The real node is neither fenced nor robbed: same epoch, same job, still running there.
    assertThat(beatAsA().fenced()).isFalse();
    assertThat(job(jobOnA).state()).isEqualTo(JobState.RUNNING);
    assertThat(job(jobOnA).placement().getFirst().node()).isEqualTo("a");
    assertThat(node("a").get("state").asText()).isEqualTo(NodeState.UP.name());
  }

  @Test
  void aRogueCannotHeartbeatAsAnotherNodeToTakeItsWork() {
    Heartbeat asA = new Heartbeat("a", epochA, List.of(), 0);
    var withJoin = join.post("/api/v1/agents/heartbeat", asA);
    assertThat(withJoin.status()).as("the join token heartbeats for no node").isEqualTo(403);

    registerRogue("rogue", 1, "http://127.0.0.1:1");
    var withOwn = join.asNode("rogue").post("/api/v1/agents/heartbeat", asA);
    assertThat(withOwn.status()).as(withOwn.body()).isEqualTo(403);
    assertThat(withOwn.body()).contains("for itself only");

    var made =
        join.as(TestApi.nodeSecret("never-registered")).post("/api/v1/agents/heartbeat", asA);
    assertThat(made.status()).as("a secret bound to no node").isEqualTo(401);
    assertThat(job(jobOnA).state()).isEqualTo(JobState.RUNNING);
  }

  /**
   * A node's newer heartbeat answers its held long poll early (the agent sent news on another
   * connection); nobody else's can: no token, a user's token and another node's credential are
   * refused before they count, so the node's long poll stays held.
   */
  @Test
  void onlyTheNodeItselfCanCutItsHeldLongPollShort() throws Exception {
    long rogueEpoch = registerRogue("rogue", 1, "http://127.0.0.1:1");
    var held = holdAsA();

    Heartbeat asA = new Heartbeat("a", epochA, List.of(), 0);
    assertThat(new TestApi(controller.url(), null).post("/api/v1/agents/heartbeat", asA).status())
        .as("no token")
        .isEqualTo(401);
    var user = admin.post("/api/v1/tokens", Map.of("user", "alice", "admin", false));
    assertThat(user.status()).as(user.body()).isEqualTo(201);
    String alice = user.as(io.kairos.protocol.TokenCreated.class).token();
    assertThat(join.as(alice).post("/api/v1/agents/heartbeat", asA).status())
        .as("a user's token")
        .isEqualTo(403);
    assertThat(join.asNode("rogue").post("/api/v1/agents/heartbeat", asA).status())
        .as("another node's credential")
        .isEqualTo(403);
    var own = new Heartbeat("rogue", rogueEpoch, List.of(), 0);
    assertThat(join.asNode("rogue").post("/api/v1/agents/heartbeat", own).status())
        .as("the rogue's heartbeat for itself counts for itself only")
        .isEqualTo(200);
    submit(1); // a state change wakes every held heartbeat
    await()
        .during(Duration.ofMillis(300))
        .atMost(Duration.ofSeconds(2))
        .until(() -> metric("kairos_agent_heartbeats_superseded_total") == 0);
    held.get(10, java.util.concurrent.TimeUnit.SECONDS);

    // The node's own newer heartbeat does.
    var next = holdAsA();
    assertThat(beatAsA(report(taskOnA, TaskStatus.RUNNING, null)).fenced()).isFalse();
    submit(1);
    var early = next.get(3, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(early.status()).isEqualTo(200);
    assertThat(early.as(HeartbeatReply.class).launch()).isEmpty();
    assertThat(metric("kairos_agent_heartbeats_superseded_total")).isEqualTo(1);
  }

  /** Node a's long poll (4 s), once the controller has counted it. */
  java.util.concurrent.CompletableFuture<TestApi.Reply> holdAsA() {
    double before = metric("kairos_agent_heartbeats_total");
    var poll =
        new Heartbeat("a", epochA, List.of(report(taskOnA, TaskStatus.RUNNING, null)), 4_000);
    var held =
        java.util.concurrent.CompletableFuture.supplyAsync(
            () -> join.asNode("a").post("/api/v1/agents/heartbeat", poll));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> metric("kairos_agent_heartbeats_total") > before);
    return held;
  }

  double metric(String name) {
    var m =
        java.util.regex.Pattern.compile("(?m)^" + name + "(\\{[^}]*})? ([0-9.eE+]+)$")
            .matcher(admin.get("/metrics").body());
    assertThat(m.find()).as(name + " in /metrics").isTrue();
    return Double.parseDouble(m.group(2));
  }

  @Test
  void aRogueCannotReportAnotherNodesTaskDone() {
    long epoch = registerRogue("rogue", 1, "http://127.0.0.1:1");
    TaskReport fakeSuccess = report(taskOnA, TaskStatus.EXITED, 0);

    var reply =
        join.asNode("rogue")
            .post(
                "/api/v1/agents/heartbeat", new Heartbeat("rogue", epoch, List.of(fakeSuccess), 0));

    assertThat(reply.status()).as(reply.body()).isEqualTo(200);
    assertThat(reply.as(HeartbeatReply.class).forget())
        .as("an exit of a task not placed on the rogue is acknowledged, not recorded")
        .extracting(k -> k.jobId())
        .containsExactly(jobOnA);
    assertThat(job(jobOnA).state()).as("not SUCCEEDED").isEqualTo(JobState.RUNNING);
    // a's own report of the same is what ends it.
    beatAsA(report(taskOnA, TaskStatus.EXITED, 0));
    assertThat(job(jobOnA).state()).isEqualTo(JobState.SUCCEEDED);
  }

  @Test
  void aRegisteredAddressMustBeWhereTheNodeIsAndALogSecretNoTokenOfTheCluster() {
    var elsewhere = join.post("/api/v1/agents/register", rogue("rogue", 1, "http://192.0.2.7:80"));
    assertThat(elsewhere.status()).as(elsewhere.body()).isEqualTo(400);
    assertThat(field(elsewhere)).isEqualTo("address");

    var withJoinToken =
        join.post(
            "/api/v1/agents/register",
            rogue("rogue", 1, "http://127.0.0.1:1").withLogToken(controller.joinToken()));
    assertThat(withJoinToken.status()).as(withJoinToken.body()).isEqualTo(400);
    assertThat(field(withJoinToken)).isEqualTo("logToken");

    var userInfo = join.post("/api/v1/agents/register", rogue("rogue", 1, "http://x@127.0.0.1:1"));
    assertThat(userInfo.status()).as(userInfo.body()).isEqualTo(400);
    assertThat(field(userInfo)).isEqualTo("address");
  }

  /**
   * The rogue registers a node whose address is a listener of its own, takes a job there, and waits
   * for the owner to read its logs: the controller sends the rogue's own log secret, never a token
   * of the cluster.
   */
  @Test
  void fetchingLogsFromARogueAddressSendsItNoCredentialOfTheCluster() throws Exception {
    var seen = new ConcurrentLinkedQueue<String>();
    HttpServer listener = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    listener.createContext(
        "/",
        exchange -> {
          seen.add(String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")));
          byte[] body = "attacker's text\n".getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(200, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    listener.start();
    try {
      String address = "http://127.0.0.1:" + listener.getAddress().getPort();
      long epoch = registerRogue("rogue", 4, address);
      long id = submit(4);
      await().atMost(Duration.ofSeconds(15)).until(() -> job(id).state() == JobState.RUNNING);
      var launched =
          join.asNode("rogue")
              .post("/api/v1/agents/heartbeat", new Heartbeat("rogue", epoch, List.of(), 0))
              .as(HeartbeatReply.class);
      assertThat(launched.launch()).singleElement();

      var logs = admin.get("/api/v1/jobs/" + id + "/logs");
      assertThat(logs.status()).as(logs.body()).isEqualTo(200);

      assertThat(seen).singleElement().isEqualTo("Bearer " + logSecret("rogue"));
      assertThat(seen.peek())
          .doesNotContain(controller.joinToken())
          .doesNotContain(controller.adminToken());
    } finally {
      listener.stop(0);
    }
  }

  @Test
  void afterAnAdminsResetTheJoinTokenRegistersTheNameAndTheOldSecretIsRefused() {
    var byJoin = join.post("/api/v1/nodes/a/reset", "");
    assertThat(byJoin.status()).as("only an admin resets a node").isEqualTo(403);
    assertThat(join.asNode("a").post("/api/v1/nodes/a/reset", "").status()).isEqualTo(403);

    var reset = admin.post("/api/v1/nodes/a/reset", "");
    assertThat(reset.status()).as(reset.body()).isEqualTo(200);
    var old =
        join.asNode("a").post("/api/v1/agents/heartbeat", new Heartbeat("a", epochA, List.of(), 0));
    assertThat(old.status()).as("the reset node's secret is forgotten").isEqualTo(401);
    assertThat(old.body()).contains("reset");
    assertThat(job(jobOnA).state()).as("its job is requeued").isNotEqualTo(JobState.SUCCEEDED);

    var fresh = join.post("/api/v1/agents/register", rogue("a", 2, "http://127.0.0.1:1"));
    assertThat(fresh.status()).as(fresh.body()).isEqualTo(200);
    var again = join.post("/api/v1/agents/register", ControllerApiTest.node("a", 2));
    assertThat(again.status())
        .as("now the old agent's secret cannot take the name back")
        .isEqualTo(403);
  }

  @Test
  void aNodesOwnSecretRegistersItsOwnNameOnly() {
    registerRogue("rogue", 1, "http://127.0.0.1:1");
    var asA =
        join.asNode("rogue")
            .post(
                "/api/v1/agents/register",
                ControllerApiTest.node("a", 2)
                    .withCredential(NodeCredential.ofSecret(TestApi.nodeSecret("rogue"))));
    assertThat(asA.status()).as(asA.body()).isEqualTo(403);
    var again =
        join.asNode("rogue")
            .post("/api/v1/agents/register", rogue("rogue", 1, "http://127.0.0.1:1"));
    assertThat(again.status()).as("its own name, its own secret").isEqualTo(200);
  }

  // ---- helpers ----

  /** A registration of {@code name} with a secret and log secret of the rogue's own. */
  static Registration rogue(String name, int gpus, String address) {
    var list = new ArrayList<GpuDevice>();
    for (int i = 0; i < gpus; i++) {
      list.add(new GpuDevice(i, "GPU-rogue-" + name + "-" + i, "H100", 80L << 30));
    }
    return new Registration(
            name,
            address,
            list,
            64,
            512L << 30,
            Map.of(),
            "z",
            "b",
            "r",
            gpus,
            logSecret(name),
            null)
        .withCredential(NodeCredential.ofSecret(TestApi.nodeSecret("rogue")));
  }

  static String logSecret(String name) {
    return "klog_" + Tokens.hash("rogue log " + name);
  }

  long registerRogue(String name, int gpus, String address) {
    var reply = join.post("/api/v1/agents/register", rogue(name, gpus, address));
    assertThat(reply.status()).as(reply.body()).isEqualTo(200);
    return reply.as(Registered.class).epoch();
  }

  HeartbeatReply beatAsA(TaskReport... tasks) {
    var reply =
        join.asNode("a")
            .post("/api/v1/agents/heartbeat", new Heartbeat("a", epochA, List.of(tasks), 0));
    assertThat(reply.status()).as(reply.body()).isEqualTo(200);
    return reply.as(HeartbeatReply.class);
  }

  static TaskReport report(TaskAssignment t, TaskStatus status, Integer exitCode) {
    long now = System.currentTimeMillis();
    return new TaskReport(
        t.jobId(),
        t.attempt(),
        t.task(),
        status,
        exitCode,
        null,
        null,
        now - 1_000,
        status == TaskStatus.EXITED ? now : null);
  }

  long submit(int gpus) {
    var reply =
        admin.post("/api/v1/jobs", "{\"command\":[\"train\"],\"gpus\":" + gpus + ",\"env\":{}}");
    assertThat(reply.status()).as(reply.body()).isEqualTo(201);
    return reply.as(SubmitResult.class).id();
  }

  JobView job(long id) {
    var reply = admin.get("/api/v1/jobs/" + id);
    assertThat(reply.status()).as(reply.body()).isEqualTo(200);
    return reply.as(JobView.class);
  }

  JsonNode node(String name) {
    var reply = admin.get("/api/v1/nodes");
    for (JsonNode n : reply.as(JsonNode.class)) {
      if (n.get("name").asText().equals(name)) {
        return n;
      }
    }
    throw new AssertionError("no node " + name + " in " + reply.body());
  }

  static String field(TestApi.Reply reply) {
    return reply.as(JsonNode.class).path("field").asText();
  }
}
