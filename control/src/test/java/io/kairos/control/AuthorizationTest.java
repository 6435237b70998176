package io.kairos.control;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.type.TypeReference;
import io.kairos.control.auth.Tokens;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.NodeState;
import io.kairos.protocol.NodeView;
import io.kairos.protocol.SubmitResult;
import io.kairos.protocol.TokenCreated;
import io.kairos.protocol.WhoAmI;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.Registered;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Who may call what, as a table: every endpoint (method, path, body) for every principal (no token,
 * bad tokens, users alice and bob, the admin, the agents' join token), each with the status it must
 * get. Plus: alice may cancel her jobs and not bob's, users see every job, the token files are
 * private, and the replicated log holds token hashes, never tokens.
 */
class AuthorizationTest {
  @TempDir static Path dir;
  static Controller controller;
  static TestApi admin;
  static TestApi agent;
  static TestApi alice;
  static TestApi bob;
  static String aliceToken;
  static String bobToken;
  static long epoch;
  static final AtomicInteger NODES = new AtomicInteger();

  @BeforeAll
  static void start() throws Exception {
    // n1 never heartbeats: an hour's acceptable pause keeps the failure detector from marking it
    // DOWN mid-test (a state change the fingerprints would take for a refused request's effect).
    controller =
        Controller.start(
            ControllerConfig.single(dir, "127.0.0.1", 0)
                .withRunAs(TestApi.SINGLE_USER)
                .withDetection(
                    new io.kairos.control.health.PhiAccrualDetector.Settings(
                        8.0, 1000, 100, 3_600_000, 1_000))
                .withLease(io.kairos.control.agent.LeaseSettings.PATIENT));
    admin = new TestApi(controller.url(), controller.adminToken());
    agent = admin.as(controller.joinToken());
    Leaders.awaitLeader(controller, java.time.Duration.ofSeconds(30));
    aliceToken = createToken("alice", false);
    bobToken = createToken("bob", false);
    alice = admin.as(aliceToken);
    bob = admin.as(bobToken);
    var reg = agent.post("/api/v1/agents/register", ControllerApiTest.node("n1", 4));
    assertThat(reg.status()).as(reg.body()).isEqualTo(200);
    epoch = reg.as(Registered.class).epoch();
  }

  @AfterAll
  static void stop() throws Exception {
    controller.close();
  }

  static String createToken(String user, boolean asAdmin) {
    var r = admin.post("/api/v1/tokens", Map.of("user", user, "admin", asAdmin));
    assertThat(r.status()).as(r.body()).isEqualTo(201);
    var created = r.as(TokenCreated.class);
    assertThat(created.user()).isEqualTo(user);
    return created.token();
  }

  /** A job owned by {@code user} that never starts (no node has its GPU model), so it stays put. */
  static long jobOf(TestApi who) {
    var r =
        who.post(
            "/api/v1/jobs", "{\"command\":[\"sleep\",\"1\"],\"gpus\":1,\"gpuModel\":\"NOPE\"}");
    assertThat(r.status()).as(r.body()).isEqualTo(201);
    return r.as(SubmitResult.class).id();
  }

  // --- the table -------------------------------------------------------------------------------

  enum Who {
    NONE,
    BAD,
    ALICE,
    BOB,
    ADMIN,
    AGENT,
    NODE;

    TestApi api() {
      return switch (this) {
        case NONE -> admin.as(null);
        case BAD -> admin.as("kusr_" + "0".repeat(64));
        case ALICE -> alice;
        case BOB -> bob;
        case ADMIN -> admin;
        case AGENT -> agent;
        case NODE -> admin.asNode("n1");
      };
    }
  }

  /** A request; {@code path} is made per row, so each row acts on its own job or node. */
  record Endpoint(String name, String method, Supplier<String> path, Supplier<String> body) {}

  record Row(Endpoint endpoint, Who who, int status) {
    @Override
    public String toString() {
      return endpoint.name() + " as " + who + " -> " + status;
    }
  }

  static final String JOB = "{\"command\":[\"sleep\",\"1\"],\"gpus\":1,\"gpuModel\":\"NOPE\"}";

  static Endpoint get(String name, Supplier<String> path) {
    return new Endpoint(name, "GET", path, null);
  }

  static Endpoint post(String name, Supplier<String> path, Supplier<String> body) {
    return new Endpoint(name, "POST", path, body);
  }

  static Endpoint put(String name, Supplier<String> path, Supplier<String> body) {
    return new Endpoint(name, "PUT", path, body);
  }

  static Stream<Row> rows() {
    var rows = new ArrayList<Row>();
    // The user API: users and the admin; agents 403.
    user(rows, get("list jobs", () -> "/api/v1/jobs"), 200);
    user(rows, post("submit a job", () -> "/api/v1/jobs", () -> JOB), 201);
    user(
        rows, post("submit a batch", () -> "/api/v1/jobs", () -> "[" + JOB + "," + JOB + "]"), 201);
    user(rows, get("show alice's job", () -> "/api/v1/jobs/" + jobOf(alice)), 200);
    // Logs are private: bob's own (not started yet: 409) and the admin's; alice gets 403.
    table(
        rows,
        get("logs of bob's job that has not started", () -> "/api/v1/jobs/" + jobOf(bob) + "/logs"),
        403,
        409,
        409,
        403);
    user(rows, get("read the limits", () -> "/api/v1/limits"), 200);
    user(rows, get("list nodes", () -> "/api/v1/nodes"), 200);
    user(rows, get("list queues", () -> "/api/v1/queues"), 200);
    user(rows, get("list accounts", () -> "/api/v1/accounts"), 200);
    user(rows, get("cluster", () -> "/api/v1/cluster"), 200);
    // Cancel: the owner and the admin.
    var cancelAlices =
        post("cancel alice's job", () -> "/api/v1/jobs/" + jobOf(alice) + "/cancel", () -> "");
    table(rows, cancelAlices, 200, 403, 200, 403);
    var cancelBobs =
        post("cancel bob's job", () -> "/api/v1/jobs/" + jobOf(bob) + "/cancel", () -> "");
    table(rows, cancelBobs, 403, 200, 200, 403);
    // Admin only.
    table(
        rows,
        post(
            "drain a node",
            () -> "/api/v1/nodes/" + newNode() + "/drain",
            () -> "{\"reason\":\"test\"}"),
        403,
        403,
        200,
        403);
    table(
        rows,
        post("resume a node", () -> "/api/v1/nodes/" + newNode() + "/resume", () -> ""),
        403,
        403,
        200,
        403);
    // An admin's return of a GPU that is in service is a 409 naming it; users get 403.
    table(
        rows,
        post(
            "return a GPU to service",
            () -> "/api/v1/nodes/" + newNode() + "/gpus/1/resume",
            () -> ""),
        403,
        403,
        409,
        403);
    table(
        rows,
        post("create a token", () -> "/api/v1/tokens", () -> "{\"user\":\"carol\"}"),
        403,
        403,
        201,
        403);
    table(
        rows,
        post(
            "create an admin token",
            () -> "/api/v1/tokens",
            () -> "{\"user\":\"dave\",\"admin\":true}"),
        403,
        403,
        201,
        403);
    table(rows, get("list users", () -> "/api/v1/users"), 403, 403, 200, 403);
    table(rows, get("list tokens", () -> "/api/v1/tokens"), 403, 403, 200, 403);
    table(
        rows,
        post("reset a node", () -> "/api/v1/nodes/" + newNode() + "/reset", () -> ""),
        403,
        403,
        200,
        403);
    table(
        rows,
        put("map a user", () -> "/api/v1/users/erin", () -> "{\"unixUser\":\"erin\"}"),
        403,
        403,
        200,
        403);
    table(
        rows,
        put("set the limits", () -> "/api/v1/limits", () -> "{\"submitBurst\":10000}"),
        403,
        403,
        200,
        403);
    // Any principal.
    table(rows, get("whoami", () -> "/api/v1/whoami"), 200, 200, 200, 200, 200);
    // Agents only.
    table(
        rows,
        post(
            "register an agent",
            () -> "/api/v1/agents/register",
            () -> json(ControllerApiTest.node("auth-" + NODES.incrementAndGet(), 2))),
        403,
        403,
        403,
        200,
        403);
    table(
        rows,
        post(
            "heartbeat",
            () -> "/api/v1/agents/heartbeat",
            () -> json(new Heartbeat("n1", epoch, List.of(), 0))),
        403,
        403,
        403,
        403,
        200);
    // No token needed at all, whatever is presented.
    for (Who who : Who.values()) {
      rows.add(new Row(get("healthz", () -> "/healthz"), who, 200));
      rows.add(new Row(get("readyz", () -> "/readyz"), who, 200));
      rows.add(new Row(get("metrics", () -> "/metrics"), who, 200));
      rows.add(new Row(get("openapi", () -> "/api/v1/openapi.json"), who, -1));
    }
    return rows.stream();
  }

  /** Users and the admin get {@code ok}; the agent token 403; no or a bad token 401. */
  static void user(List<Row> rows, Endpoint e, int ok) {
    table(rows, e, ok, ok, ok, 403);
  }

  /** A node's own credential gets what the join token gets, except where said otherwise. */
  static void table(List<Row> rows, Endpoint e, int alice, int bob, int admin, int agent) {
    table(rows, e, alice, bob, admin, agent, agent);
  }

  static void table(
      List<Row> rows, Endpoint e, int alice, int bob, int admin, int agent, int node) {
    rows.add(new Row(e, Who.NONE, 401));
    rows.add(new Row(e, Who.BAD, 401));
    rows.add(new Row(e, Who.ALICE, alice));
    rows.add(new Row(e, Who.BOB, bob));
    rows.add(new Row(e, Who.ADMIN, admin));
    rows.add(new Row(e, Who.AGENT, agent));
    rows.add(new Row(e, Who.NODE, node));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void eachPrincipalGetsItsStatus(Row row) {
    var e = row.endpoint();
    String path = e.path().get();
    var before = fingerprint();
    TestApi api = row.who().api();
    var reply =
        switch (e.method()) {
          case "GET" -> api.get(path);
          case "PUT" -> api.put(path, e.body().get());
          default -> api.post(path, e.body().get());
        };

    if (row.status() == -1) {
      // Public: whatever the document's state (200, or 404 until it is packaged), never 401/403.
      assertThat(reply.status()).as(reply.body()).isIn(200, 404);
      return;
    }
    assertThat(reply.status())
        .as("%s %s as %s: %s", e.method(), path, row.who(), reply.body())
        .isEqualTo(row.status());
    if (row.status() >= 400) {
      assertThat(reply.contentType()).startsWith("application/problem+json");
      assertThat(fingerprint()).as("a refused request changes nothing").isEqualTo(before);
    }
    if (row.status() == 401) {
      assertThat(reply.raw().headers().firstValue("WWW-Authenticate"))
          .as("WWW-Authenticate")
          .hasValueSatisfying(v -> assertThat(v).startsWith("Bearer"));
    }
  }

  /** More ways to present a token that is not one; all 401. */
  @ParameterizedTest(name = "Authorization: {0}")
  @MethodSource("badHeaders")
  void malformedAuthorizationHeadersAre401(String header) throws Exception {
    var request =
        java.net.http.HttpRequest.newBuilder(java.net.URI.create(controller.url() + "/api/v1/jobs"))
            .header("Authorization", header)
            .GET()
            .build();
    var reply =
        java.net.http.HttpClient.newHttpClient()
            .send(request, java.net.http.HttpResponse.BodyHandlers.ofString());
    assertThat(reply.statusCode()).as(reply.body()).isEqualTo(401);
    assertThat(reply.headers().firstValue("WWW-Authenticate")).isPresent();
  }

  static Stream<String> badHeaders() {
    return Stream.of(
        "Bearer",
        "Bearer ",
        "Basic " + java.util.Base64.getEncoder().encodeToString(("x:" + "y").getBytes(UTF_8)),
        "Basic " + controller.adminToken(),
        controller.adminToken(),
        "Bearer " + controller.adminToken() + "x",
        "Bearer " + controller.adminToken().substring(1),
        "Bearer " + Tokens.hash(controller.adminToken()),
        "Bearer " + "a".repeat(300),
        "Token " + controller.adminToken());
  }

  // --- ownership and visibility ------------------------------------------------------------

  @Test
  void aliceCancelsHerJobButNotBobsAndTheAdminCancelsAnyones() {
    long alices = jobOf(alice);
    long bobs = jobOf(bob);

    assertThat(alice.post("/api/v1/jobs/" + bobs + "/cancel", "").status()).isEqualTo(403);
    assertThat(state(bobs)).isEqualTo(JobState.PENDING);
    assertThat(bob.post("/api/v1/jobs/" + alices + "/cancel", "").status()).isEqualTo(403);
    assertThat(state(alices)).isEqualTo(JobState.PENDING);

    assertThat(alice.post("/api/v1/jobs/" + alices + "/cancel", "").status()).isEqualTo(200);
    assertThat(state(alices)).isEqualTo(JobState.CANCELLED);
    assertThat(admin.post("/api/v1/jobs/" + bobs + "/cancel", "").status()).isEqualTo(200);
    assertThat(state(bobs)).isEqualTo(JobState.CANCELLED);
  }

  @Test
  void usersSeeEveryonesJobsButSubmitOnlyAsThemselves() {
    long bobs = jobOf(bob);
    var listed = alice.get("/api/v1/jobs").as(new TypeReference<List<JobView>>() {});
    assertThat(listed).extracting(JobView::id).contains(bobs);
    assertThat(alice.get("/api/v1/jobs/" + bobs).as(JobView.class).user()).isEqualTo("bob");

    var asBob = alice.post("/api/v1/jobs", "{\"command\":[\"x\"],\"user\":\"bob\"}");
    assertThat(asBob.status()).as(asBob.body()).isEqualTo(403);
    var asAlice = alice.post("/api/v1/jobs", "{\"command\":[\"x\"],\"user\":\"alice\"}");
    assertThat(asAlice.status()).as(asAlice.body()).isEqualTo(201);
    var forBob = admin.post("/api/v1/jobs", "{\"command\":[\"x\"],\"user\":\"bob\"}");
    assertThat(forBob.status()).as(forBob.body()).isEqualTo(201);
    assertThat(
            admin
                .get("/api/v1/jobs/" + forBob.as(SubmitResult.class).id())
                .as(JobView.class)
                .user())
        .isEqualTo("bob");
  }

  @Test
  void whoamiNamesThePrincipal() {
    assertThat(alice.get("/api/v1/whoami").as(WhoAmI.class)).isEqualTo(new WhoAmI("alice", false));
    assertThat(admin.get("/api/v1/whoami").as(WhoAmI.class).admin()).isTrue();
    assertThat(agent.get("/api/v1/whoami").as(WhoAmI.class).admin()).isFalse();
    String carol = createToken("carol-admin", true);
    assertThat(admin.as(carol).get("/api/v1/whoami").as(WhoAmI.class))
        .isEqualTo(new WhoAmI("carol-admin", true));
    assertThat(admin.as(carol).post("/api/v1/nodes/n1/resume", "").status()).isEqualTo(200);
  }

  // --- token storage -------------------------------------------------------------------------

  @Test
  void tokenFilesAreReadableOnlyByTheirOwner() throws IOException {
    for (String name : List.of("admin.token", "join.token")) {
      Path file = dir.resolve(name);
      assertThat(file).exists();
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
          .as(name)
          .isEqualTo("rw-------");
      assertThat(Files.readString(file).trim())
          .isIn(controller.adminToken(), controller.joinToken());
    }
  }

  /**
   * The replicated log (all files under DATA/raft) holds the SHA-256 of each token and never the
   * token itself. Tokens made through the API are committed before the 201, so they are on disk.
   */
  @Test
  void theRaftLogHoldsTokenHashesNeverTokens() throws IOException {
    String erin = createToken("erin", false);
    List<Path> files;
    try (var walk = Files.walk(dir.resolve("raft"))) {
      files = walk.filter(Files::isRegularFile).toList();
    }
    assertThat(files).as("raft files").isNotEmpty();
    var all = new java.io.ByteArrayOutputStream();
    for (Path f : files) {
      all.writeBytes(Files.readAllBytes(f));
    }
    String log = all.toString(java.nio.charset.StandardCharsets.ISO_8859_1);
    for (String token :
        List.of(controller.adminToken(), controller.joinToken(), aliceToken, bobToken, erin)) {
      assertThat(log).as("a token in the raft files").doesNotContain(token);
      // The random part alone must not appear either (e.g. a log that drops the prefix).
      assertThat(log).doesNotContain(token.substring(token.indexOf('_') + 1));
    }
    for (String token : List.of(aliceToken, bobToken, erin)) {
      assertThat(log).as("the hash of a token made through the API").contains(Tokens.hash(token));
    }
  }

  // --- helpers -------------------------------------------------------------------------------

  static JobState state(long id) {
    return admin.get("/api/v1/jobs/" + id).as(JobView.class).state();
  }

  /** A fresh node for a drain or resume row, so rows do not depend on each other. */
  static String newNode() {
    String name = "auth-" + NODES.incrementAndGet();
    var reg = agent.post("/api/v1/agents/register", ControllerApiTest.node(name, 2));
    assertThat(reg.status()).as(reg.body()).isEqualTo(200);
    return name;
  }

  /** What refused requests must not change: jobs and their states, tokens, nodes and states. */
  static String fingerprint() {
    return controller
        .replica()
        .stateMachine()
        .read(
            s -> {
              var sb = new StringBuilder();
              sb.append(s.nextJobId()).append('/').append(BadInputTest.nonJobTokens(s)).append('/');
              sb.append(s.limits()).append('/');
              s.activeJobs().forEach(j -> sb.append(j.id).append(j.state).append(','));
              s.nodes().forEach(n -> sb.append(n.name).append(n.epoch).append(n.state).append(','));
              s.users().forEach(u -> sb.append(u).append(','));
              return sb.toString();
            });
  }

  static String json(Object o) {
    try {
      return TestApi.JSON.writeValueAsString(o);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void drainAndResumeAsAdminChangeTheNodeState() {
    String node = newNode();
    admin.post("/api/v1/nodes/" + node + "/drain", "{\"reason\":\"disk\"}");
    assertThat(nodeState(node)).isEqualTo(NodeState.DRAINED);
    assertThat(alice.post("/api/v1/nodes/" + node + "/resume", "").status()).isEqualTo(403);
    assertThat(nodeState(node)).isEqualTo(NodeState.DRAINED);
    admin.post("/api/v1/nodes/" + node + "/resume", "");
    assertThat(nodeState(node)).isEqualTo(NodeState.UP);
  }

  static NodeState nodeState(String name) {
    return alice.get("/api/v1/nodes").as(new TypeReference<List<NodeView>>() {}).stream()
        .filter(n -> n.name().equals(name))
        .findFirst()
        .orElseThrow()
        .state();
  }
}
