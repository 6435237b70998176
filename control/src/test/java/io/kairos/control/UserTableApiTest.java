package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.core.type.TypeReference;
import io.kairos.control.auth.RunAsPolicy;
import io.kairos.protocol.GpuDevice;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.NodeView;
import io.kairos.protocol.Problem;
import io.kairos.protocol.SubmitResult;
import io.kairos.protocol.TokenCreated;
import io.kairos.protocol.UserView;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.HeartbeatReply;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.Registration;
import io.kairos.protocol.agent.TaskAssignment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The user table and the Unix account each job runs as, against a real controller that refuses root
 * jobs and whose bootstrap admin runs as root (a shared cluster): the table maps users to accounts,
 * each job records its account at submission, root is refused naming the user and the setting, and
 * a node whose agent runs as one account (not root) never gets another's job.
 */
class UserTableApiTest {
  @TempDir static Path dir;
  static Controller controller;
  static TestApi admin;
  static TestApi agent;
  static TestApi alice;
  static TestApi bob;

  @BeforeAll
  static void start() throws Exception {
    controller =
        Controller.start(
            ControllerConfig.single(dir, "127.0.0.1", 0)
                .withRunAs(new RunAsPolicy(RunAsPolicy.ROOT, false)));
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    admin = new TestApi(controller.url(), controller.adminToken());
    agent = admin.as(controller.joinToken());
    alice = admin.as(token("alice"));
    bob = admin.as(token("bob"));
  }

  @AfterAll
  static void stop() throws Exception {
    controller.close();
  }

  static String token(String user) {
    var r = admin.post("/api/v1/tokens", Map.of("user", user));
    assertThat(r.status()).as(r.body()).isEqualTo(201);
    return r.as(TokenCreated.class).token();
  }

  /** A job that no node can start (its GPU model is nowhere), so it stays as submitted. */
  static long park(TestApi who) {
    var r = who.post("/api/v1/jobs", "{\"command\":[\"true\"],\"gpus\":1,\"gpuModel\":\"NOPE\"}");
    assertThat(r.status()).as(r.body()).isEqualTo(201);
    return r.as(SubmitResult.class).id();
  }

  static JobView job(long id) {
    var r = admin.get("/api/v1/jobs/" + id);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.as(JobView.class);
  }

  static List<UserView> users() {
    var r = admin.get("/api/v1/users");
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.as(new TypeReference<List<UserView>>() {});
  }

  @Test
  void aJobRecordsItsUsersAccountAndKeepsItWhenTheTableChanges() {
    long before = park(bob);
    assertThat(job(before).runAs()).as("by default the user's own name").isEqualTo("bob");

    var set = admin.put("/api/v1/users/bob", "{\"unixUser\":\"bsmith\"}");
    assertThat(set.status()).as(set.body()).isEqualTo(200);
    assertThat(set.as(UserView.class)).isEqualTo(new UserView("bob", "bsmith", true));

    long after = park(bob);
    assertThat(job(after).runAs()).isEqualTo("bsmith");
    assertThat(job(before).runAs()).as("recorded at submission").isEqualTo("bob");
    assertThat(users())
        .contains(new UserView("bob", "bsmith", true), new UserView("alice", "alice", false));
  }

  @Test
  void aRootJobIsRefusedNamingTheUserAndTheSettingUntilTheAdminIsMapped() {
    assertThat(users())
        .contains(new UserView(RunAsPolicy.BOOTSTRAP_ADMIN, RunAsPolicy.ROOT, false));
    var refused = admin.post("/api/v1/jobs", "{\"command\":[\"id\"],\"cpus\":1}");
    assertThat(refused.status()).as(refused.body()).isEqualTo(400);
    Problem p = refused.as(Problem.class);
    assertThat(p.field()).isEqualTo("user");
    assertThat(p.detail()).contains("'admin'", "root", "--allow-root-jobs");

    var batch = admin.post("/api/v1/jobs", "[{\"command\":[\"id\"]},{\"command\":[\"id\"]}]");
    assertThat(batch.status()).as(batch.body()).isEqualTo(400);
    assertThat(batch.as(Problem.class).field()).isEqualTo("[0].user");

    // An admin submitting for a user whose account is root is refused the same way.
    var mapRoot = admin.put("/api/v1/users/carol", "{\"unixUser\":\"root\"}");
    assertThat(mapRoot.status()).as(mapRoot.body()).isEqualTo(400);
    assertThat(mapRoot.as(Problem.class).field()).isEqualTo("unixUser");

    var set = admin.put("/api/v1/users/admin", "{\"unixUser\":\"kairos-ops\"}");
    assertThat(set.status()).as(set.body()).isEqualTo(200);
    long id = park(admin);
    assertThat(job(id).runAs()).isEqualTo("kairos-ops");
  }

  @ParameterizedTest(name = "{0} {1} -> {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "/api/v1/users/bad%20name | {\"unixUser\":\"x\"}          | name",
        "/api/v1/users/dave       | {}                           | unixUser",
        "/api/v1/users/dave       | {\"unixUser\":\"\"}          | unixUser",
        "/api/v1/users/dave       | {\"unixUser\":\"-rf\"}       | unixUser",
        "/api/v1/users/dave       | {\"unixUser\":\"12345\"}     | unixUser",
        "/api/v1/users/dave       | {\"unixUser\":\"a b\"}       | unixUser",
        "/api/v1/users/dave       | {\"unixUser\":\"a:b\"}       | unixUser",
        "/api/v1/users/dave       | {\"unixUser\":\"root\"}      | unixUser",
        "/api/v1/users/dave       | {\"unixUser\":7}             | unixUser",
        "/api/v1/users/dave       | {\"unixUser\":\"x\",\"y\":1} | y",
      })
  void badInputIs400NamingTheFieldAndChangesNothing(String path, String body, String field) {
    var before = users();
    var r = admin.put(path, body);
    assertThat(r.status()).as(r.body()).isEqualTo(400);
    assertThat(r.contentType()).startsWith("application/problem+json");
    assertThat(r.as(Problem.class).field()).isEqualTo(field);
    assertThat(users()).isEqualTo(before);
  }

  @Test
  void onlyAdminsReadOrChangeTheTable() {
    for (TestApi who : List.of(alice, bob, agent)) {
      assertThat(who.get("/api/v1/users").status()).isEqualTo(403);
      assertThat(who.put("/api/v1/users/alice", "{\"unixUser\":\"root2\"}").status())
          .isEqualTo(403);
    }
    assertThat(users()).noneMatch(u -> u.unixUser().equals("root2"));
  }

  @Test
  void aNodeThatRunsOnlyAlicesJobsNeverGetsBobsAndSaysWhy() throws Exception {
    var set = admin.put("/api/v1/users/bob", "{\"unixUser\":\"bob\"}");
    assertThat(set.status()).as(set.body()).isEqualTo(200);
    long aliceNode = register(node("na", 1, "alice"));
    assertThat(nodeView("na").runsOnlyAs()).isEqualTo("alice");

    long bobs = submit(bob, "{\"command\":[\"id\"],\"gpus\":1,\"gpuModel\":\"A10\"}");
    JobView pending =
        await()
            .atMost(Duration.ofSeconds(10))
            .until(() -> job(bobs), j -> "NO_NODE_RUNS_AS".equals(j.pendingReason()));
    assertThat(pending.state()).isEqualTo(JobState.PENDING);
    assertThat(pending.pendingDetail())
        .isEqualTo(
            "no node can run jobs as bob: na runs as alice (not root) and runs only alice's jobs");

    long alices = submit(alice, "{\"command\":[\"id\"],\"gpus\":1,\"gpuModel\":\"A10\"}");
    await().atMost(Duration.ofSeconds(10)).until(() -> job(alices).state() == JobState.RUNNING);
    TaskAssignment launched = launches("na", aliceNode).getFirst();
    assertThat(launched.jobId()).isEqualTo(alices);
    assertThat(launched.runAs()).isEqualTo("alice");
    assertThat(job(bobs).state()).isEqualTo(JobState.PENDING);

    // A root agent joins: bob's job runs there, as bob.
    long rootNode = register(node("nr", 1, null));
    await().atMost(Duration.ofSeconds(10)).until(() -> job(bobs).state() == JobState.RUNNING);
    assertThat(job(bobs).placement()).extracting(t -> t.node()).containsExactly("nr");
    assertThat(launches("nr", rootNode))
        .singleElement()
        .satisfies(
            t -> {
              assertThat(t.jobId()).isEqualTo(bobs);
              assertThat(t.runAs()).isEqualTo("bob");
            });
  }

  @Test
  void aRegistrationWithABadAccountIs400() {
    var r = agent.post("/api/v1/agents/register", node("nx", 1, "a b"));
    assertThat(r.status()).as(r.body()).isEqualTo(400);
    assertThat(r.as(Problem.class).field()).isEqualTo("runsOnlyAs");
  }

  static long submit(TestApi who, String body) {
    var r = who.post("/api/v1/jobs", body);
    assertThat(r.status()).as(r.body()).isEqualTo(201);
    return r.as(SubmitResult.class).id();
  }

  static Registration node(String name, int gpus, String runsOnlyAs) {
    var list = new ArrayList<GpuDevice>();
    for (int i = 0; i < gpus; i++) {
      list.add(new GpuDevice(i, "GPU-" + name + "-" + i, "A10", 24L << 30));
    }
    return TestApi.identified(
        new Registration(
            name,
            "http://127.0.0.1:1",
            list,
            8,
            64L << 30,
            Map.of(),
            "z",
            "b",
            "r",
            gpus,
            null,
            runsOnlyAs));
  }

  static long register(Registration r) {
    var reply = agent.post("/api/v1/agents/register", r);
    assertThat(reply.status()).as(reply.body()).isEqualTo(200);
    return reply.as(Registered.class).epoch();
  }

  static NodeView nodeView(String name) {
    return admin.get("/api/v1/nodes").as(new TypeReference<List<NodeView>>() {}).stream()
        .filter(n -> n.name().equals(name))
        .findFirst()
        .orElseThrow();
  }

  static List<TaskAssignment> launches(String node, long epoch) {
    var r =
        agent
            .asNode(node)
            .post("/api/v1/agents/heartbeat", new Heartbeat(node, epoch, List.of(), 0));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.as(HeartbeatReply.class).launch();
  }
}
