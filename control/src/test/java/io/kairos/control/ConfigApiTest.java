package io.kairos.control;

import static io.kairos.control.BadInputTest.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.core.type.TypeReference;
import io.kairos.config.TenancyYaml;
import io.kairos.control.health.PhiAccrualDetector;
import io.kairos.protocol.ConfigChange;
import io.kairos.protocol.ConfigView;
import io.kairos.protocol.JobView;
import io.kairos.protocol.SubmitResult;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The replicated configuration ({@code /api/v1/config}) on a real controller (Ratis on a temp dir,
 * HTTP): a document is validated whole, diffed, versioned and put in force without a restart; a
 * stale version, a broken document and a queue live jobs are in are refused and change nothing;
 * only admins read or change it; it survives a restart, and outranks a --tenancy file brought
 * later.
 */
class ConfigApiTest {
  static final String CMD = "\"command\":[\"sleep\",\"60\"]";

  static final String ONE_QUEUE =
      """
      cohorts: [{name: lab}]
      queues:
        - name: a
          cohort: lab
          quotas: {"gpu:H100": {nominal: 1}}
      """;

  static final String TWO_QUEUES =
      """
      cohorts: [{name: lab}]
      queues:
        - name: a
          cohort: lab
          quotas: {"gpu:H100": {nominal: 2}}
        - name: b
          cohort: lab
          quotas: {"gpu:H100": {nominal: 2}}
      """;

  static final String ONLY_B =
      """
      cohorts: [{name: lab}]
      queues:
        - name: b
          cohort: lab
          quotas: {"gpu:H100": {nominal: 2}}
      """;

  @TempDir Path dir;
  Controller controller;
  TestApi admin;

  void start(ControllerConfig config) throws Exception {
    controller = Controller.start(config);
    admin = new TestApi(controller.url(), controller.adminToken());
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
  }

  /** A fixed port: a restarted single replica must come back at the address its log names. */
  final int port = freePort();

  static int freePort() {
    try (var socket = new java.net.ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  ControllerConfig config() {
    return ControllerConfig.single(dir.resolve("ctl"), "127.0.0.1", port)
        .withRunAs(TestApi.SINGLE_USER)
        .withDetection(new PhiAccrualDetector.Settings(8.0, 1000, 100, 3_600_000, 1_000))
        .withLease(io.kairos.control.agent.LeaseSettings.PATIENT);
  }

  @AfterEach
  void stop() throws Exception {
    if (controller != null) {
      controller.close();
    }
  }

  ConfigChange apply(String yaml, Object... more) {
    var body = new java.util.LinkedHashMap<String, Object>();
    body.put("yaml", yaml);
    for (int i = 0; i < more.length; i += 2) {
      body.put((String) more[i], more[i + 1]);
    }
    var reply = admin.post("/api/v1/config", body);
    assertThat(reply.status()).as(reply.body()).isEqualTo(200);
    return reply.as(ConfigChange.class);
  }

  ConfigView current() {
    var reply = admin.get("/api/v1/config");
    assertThat(reply.status()).as(reply.body()).isEqualTo(200);
    return reply.as(ConfigView.class);
  }

  int submit(String fields) {
    return admin.post("/api/v1/jobs", "{" + CMD + fields + "}").status();
  }

  @Test
  void aDocumentIsDiffedAppliedAndInForceWithoutARestart() throws Exception {
    start(config());
    assertThat(current().source()).isEqualTo("none");
    assertThat(current().version()).isZero();
    assertThat(submit(",\"queue\":\"a\"")).as("no tenancy: queues are names").isEqualTo(201);
    admin.post("/api/v1/jobs/1/cancel", "{}");

    ConfigChange first = apply(ONE_QUEUE);
    assertThat(first.applied()).isTrue();
    assertThat(first.fromVersion()).isZero();
    assertThat(first.version()).isEqualTo(1);
    assertThat(first.queuesAdded()).containsExactly("a");
    assertThat(first.diff()).contains("+++ new").contains("+  - name: a");
    assertThat(current().yaml()).isEqualTo(ONE_QUEUE);
    assertThat(current().by()).isEqualTo("admin");
    assertThat(current().sha256()).hasSize(64);

    // In force at once: a queue the document lacks is refused, naming the ones it has.
    var refused = admin.post("/api/v1/jobs", "{" + CMD + ",\"queue\":\"b\"}");
    assertProblem(refused, 400, "queue");
    assertThat(refused.body()).contains("unknown queue 'b'").contains("[a]");
    assertThat(submit(",\"queue\":\"a\"")).isEqualTo(201);

    ConfigChange dry = apply(TWO_QUEUES, "dryRun", true);
    assertThat(dry.applied()).isFalse();
    assertThat(dry.changed()).isTrue();
    assertThat(dry.queuesAdded()).containsExactly("b");
    assertThat(dry.diff())
        .contains("--- config v1")
        .contains("-    quotas: {\"gpu:H100\": {nominal: 1}}");
    assertThat(current().version()).as("a dry run changes nothing").isEqualTo(1);

    ConfigChange second = apply(TWO_QUEUES, "expectedVersion", 1);
    assertThat(second.version()).isEqualTo(2);
    assertThat(submit(",\"queue\":\"b\"")).isEqualTo(201);
    assertThat(admin.get("/api/v1/queues").body()).contains("\"b\"");

    ConfigChange same = apply(TWO_QUEUES);
    assertThat(same.changed()).isFalse();
    assertThat(same.applied()).isFalse();
    assertThat(same.version()).isEqualTo(2);

    List<ConfigView> history =
        admin.get("/api/v1/config/history").as(new TypeReference<List<ConfigView>>() {});
    assertThat(history).extracting(ConfigView::version).containsExactly(2L, 1L);
    assertThat(history).allMatch(v -> v.yaml() == null);
    assertThat(admin.get("/api/v1/config?version=1").as(ConfigView.class).yaml())
        .isEqualTo(ONE_QUEUE);
    assertThat(admin.get("/api/v1/config?version=9").status()).isEqualTo(404);
    assertProblem(admin.get("/api/v1/config?version=x"), 400, "version");
  }

  @Test
  void aQuotaRaisedByAConfigChangeStartsTheJobItHeldBack() throws Exception {
    start(config());
    apply(ONE_QUEUE);
    var join = new TestApi(controller.url(), controller.joinToken());
    assertThat(join.post("/api/v1/agents/register", ControllerApiTest.node("n1", 4)).status())
        .isEqualTo(200);
    long first =
        admin
            .post("/api/v1/jobs", "{" + CMD + ",\"queue\":\"a\",\"gpus\":1}")
            .as(SubmitResult.class)
            .id();
    long second =
        admin
            .post("/api/v1/jobs", "{" + CMD + ",\"queue\":\"a\",\"gpus\":1}")
            .as(SubmitResult.class)
            .id();
    await().atMost(Duration.ofSeconds(30)).until(() -> state(first).equals("RUNNING"));
    // The quota is one GPU: the second waits on it, with the reason saying so.
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(job(second).pendingReason()).containsIgnoringCase("quota"));
    assertThat(state(second)).isEqualTo("PENDING");

    apply(TWO_QUEUES);
    await().atMost(Duration.ofSeconds(30)).until(() -> state(second).equals("RUNNING"));
  }

  @Test
  void badChangesAreRefusedNamingTheFixAndChangeNothing() throws Exception {
    start(config());
    apply(ONE_QUEUE);
    long pending =
        admin.post("/api/v1/jobs", "{" + CMD + ",\"queue\":\"a\"}").as(SubmitResult.class).id();

    var broken =
        admin.post("/api/v1/config", Map.of("yaml", "queues:\n  - name: a\n    quotass: {}\n"));
    assertProblem(broken, 400, "yaml");
    assertThat(broken.body()).contains("quotass").contains("fix");

    var notYaml = admin.post("/api/v1/config", Map.of("yaml", "queues: [unclosed"));
    assertProblem(notYaml, 400, "yaml");

    assertProblem(admin.post("/api/v1/config", "{}"), 400, "yaml");
    assertProblem(
        admin.post("/api/v1/config", Map.of("yaml", ONE_QUEUE, "expectedVersion", -3)),
        400,
        "expectedVersion");
    assertThat(admin.post("/api/v1/config", "{\"yaml\": 7, \"other\": 1}").status()).isEqualTo(400);

    var stale = admin.post("/api/v1/config", Map.of("yaml", TWO_QUEUES, "expectedVersion", 0));
    assertThat(stale.status()).as(stale.body()).isEqualTo(409);
    assertThat(stale.body()).contains("version 1");

    // Queue a goes away while job `pending` is in it: refused unless forced.
    var orphaning = admin.post("/api/v1/config", Map.of("yaml", ONLY_B));
    assertThat(orphaning.status()).as(orphaning.body()).isEqualTo(409);
    assertThat(orphaning.body()).contains("a (1 pending or running)").contains("--force");
    var dry = apply(ONLY_B, "dryRun", true);
    assertThat(dry.queuesRemoved()).containsExactly("a");
    assertThat(dry.liveJobsInRemovedQueues()).isEqualTo(1);
    assertThat(current().version()).as("nothing changed").isEqualTo(1);
    assertThat(current().yaml()).isEqualTo(ONE_QUEUE);

    var forced = apply(ONLY_B, "force", true);
    assertThat(forced.applied()).isTrue();
    assertThat(state(pending)).isEqualTo("PENDING");
  }

  @Test
  void onlyAnAdminReadsOrChangesIt() throws Exception {
    start(config());
    apply(ONE_QUEUE);
    String bob =
        admin
            .post("/api/v1/tokens", Map.of("user", "bob"))
            .as(io.kairos.protocol.TokenCreated.class)
            .token();
    var user = admin.as(bob);
    assertThat(user.get("/api/v1/config").status()).isEqualTo(403);
    assertThat(user.get("/api/v1/config/history").status()).isEqualTo(403);
    assertThat(user.post("/api/v1/config", Map.of("yaml", TWO_QUEUES)).status()).isEqualTo(403);
    var join = admin.as(controller.joinToken());
    assertThat(join.post("/api/v1/config", Map.of("yaml", TWO_QUEUES)).status()).isEqualTo(403);
    var nobody = admin.as(null);
    assertThat(nobody.get("/api/v1/config").status()).isEqualTo(401);
    assertThat(nobody.post("/api/v1/config", Map.of("yaml", TWO_QUEUES)).status()).isEqualTo(401);
    assertThat(current().version()).isEqualTo(1);
  }

  @Test
  void itSurvivesARestartAndOutranksATenancyFileBroughtLater() throws Exception {
    var file = config().withTenancy(TenancyYaml.parse(ONE_QUEUE, "tenancy.yaml"));
    start(file);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> current().version() == 1 && "replicated".equals(current().source()));
    assertThat(current().by()).isEqualTo("kairos server --tenancy");
    apply(TWO_QUEUES);
    controller.close();
    controller = null;

    // The same data directory, started with the old file again: version 2 stands.
    start(file);
    assertThat(current().version()).isEqualTo(2);
    assertThat(current().yaml()).isEqualTo(TWO_QUEUES);
    assertThat(submit(",\"queue\":\"b\"")).isEqualTo(201);
    Thread.sleep(500); // the bootstrap has looked, and must not have applied the file
    assertThat(current().version()).isEqualTo(2);
  }

  JobView job(long id) {
    return admin.get("/api/v1/jobs/" + id).as(JobView.class);
  }

  String state(long id) {
    return job(id).state().name();
  }
}
