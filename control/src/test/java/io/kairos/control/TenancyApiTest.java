package io.kairos.control;

import static io.kairos.control.BadInputTest.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.config.Tenancy;
import io.kairos.control.health.PhiAccrualDetector;
import io.kairos.core.fairshare.AccountTree;
import io.kairos.core.tenancy.CohortSpec;
import io.kairos.core.tenancy.PreemptionPolicy;
import io.kairos.core.tenancy.PriorityClass;
import io.kairos.core.tenancy.QueueDefaults;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.core.tenancy.Resource;
import io.kairos.core.tenancy.ResourceQuota;
import io.kairos.core.tenancy.TenancyConfig;
import io.kairos.core.tenancy.Tenants;
import io.kairos.protocol.AccountView;
import io.kairos.protocol.JobView;
import io.kairos.protocol.QueueView;
import io.kairos.protocol.SubmitResult;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Submission against a controller with a tenancy configuration (in-process, Ratis on a temp dir):
 * unknown queues, classes and accounts are refused with a 400 naming the field and the fix, and
 * change nothing; a valid job comes back resolved (account, class, the class's priority); the queue
 * and account views show the configuration. A seeded fuzz of the tenancy fields never gets a 5xx.
 */
class TenancyApiTest {
  static final String CMD = "\"command\":[\"sleep\",\"1\"]";
  @TempDir static Path dir;
  static Controller controller;
  static TestApi admin;

  static Tenancy tenancy() {
    var gpu = Resource.gpu("H100");
    var reclaim =
        new PreemptionPolicy(
            PreemptionPolicy.WithinQueue.NEVER,
            PreemptionPolicy.ReclaimWithinCohort.ANY,
            PreemptionPolicy.BorrowWithinCohort.NEVER);
    var config =
        new TenancyConfig(
            List.of(new PriorityClass("high", 1000, false), new PriorityClass("low", 10, true)),
            List.of(new CohortSpec("lab")),
            List.of(
                new QueueSpec(
                    "a",
                    "lab",
                    Map.of(gpu, ResourceQuota.of(2)),
                    PreemptionPolicy.NONE,
                    new QueueDefaults("vision", "low")),
                new QueueSpec(
                    "b", "lab", Map.of(gpu, ResourceQuota.of(2)), reclaim, QueueDefaults.NONE)));
    var accounts =
        AccountTree.of(
            List.of(
                new AccountTree.Account("vision", AccountTree.ROOT, 1),
                new AccountTree.Account("nlp", AccountTree.ROOT, 3)));
    return new Tenancy(config, accounts, 3600, Tenants.Settings.DEFAULT);
  }

  @BeforeAll
  static void start() throws Exception {
    // No node registers: nothing starts, so the views are stable.
    controller =
        Controller.start(
            ControllerConfig.single(dir, "127.0.0.1", 0)
                .withRunAs(TestApi.SINGLE_USER)
                .withDetection(new PhiAccrualDetector.Settings(8.0, 1000, 100, 3_600_000, 1_000))
                .withLease(io.kairos.control.agent.LeaseSettings.PATIENT)
                .withTenancy(tenancy()));
    admin = new TestApi(controller.url(), controller.adminToken());
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
  }

  @AfterAll
  static void stop() throws Exception {
    controller.close();
  }

  record Bad(String name, String body, String field, String detailHas, String fixHas) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Bad> refused() {
    return Stream.of(
        new Bad(
            "an unknown queue",
            "{" + CMD + ",\"queue\":\"c\"}",
            "queue",
            "unknown queue 'c'",
            "[a, b]"),
        new Bad(
            "the default queue when it is not configured",
            "{" + CMD + "}",
            "queue",
            "unknown queue 'default'",
            "[a, b]"),
        new Bad(
            "an unknown priority class",
            "{" + CMD + ",\"queue\":\"b\",\"priorityClass\":\"urgent\"}",
            "priorityClass",
            "unknown priority class 'urgent'",
            "[high, low]"),
        new Bad(
            "an unknown account",
            "{" + CMD + ",\"queue\":\"b\",\"account\":\"physics\"}",
            "account",
            "unknown account 'physics'",
            "nlp"),
        new Bad(
            "an unknown queue in a batch names the element",
            "[{" + CMD + ",\"queue\":\"a\"},{" + CMD + ",\"queue\":\"zz\"}]",
            "[1].queue",
            "unknown queue 'zz'",
            "[a, b]"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refused")
  void aSubmissionOutsideTheTenancyIsRefusedNamingTheFieldAndTheFix(Bad c) throws Exception {
    Long before = controller.replica().stateMachine().read(s -> (Long) s.nextJobId());
    var reply = admin.post("/api/v1/jobs", c.body());
    assertProblem(reply, 400, c.field());
    JsonNode body = TestApi.JSON.readTree(reply.body());
    assertThat(body.path("detail").asText()).contains(c.detailHas());
    assertThat(body.path("fix").asText()).contains(c.fixHas());
    Long after = controller.replica().stateMachine().read(s -> (Long) s.nextJobId());
    assertThat(after).as("no job was made").isEqualTo(before);
  }

  @Test
  void aJobIsResolvedFromItsQueuesDefaultsAndShowsThem() {
    var reply =
        admin.post("/api/v1/jobs", "{" + CMD + ",\"queue\":\"a\",\"gpus\":1,\"priority\":5}");
    assertThat(reply.status()).as(reply.body()).isEqualTo(201);
    long id = reply.as(SubmitResult.class).id();
    var job = admin.get("/api/v1/jobs/" + id).as(JobView.class);
    assertThat(job.account()).isEqualTo("vision");
    assertThat(job.priorityClass()).isEqualTo("low");
    assertThat(job.priority()).as("the class's value").isEqualTo(10);
    assertThat(job.preemptedAt()).isNull();

    var own =
        admin.post(
            "/api/v1/jobs",
            "{"
                + CMD
                + ",\"queue\":\"b\",\"gpus\":1,\"account\":\"nlp\",\"priorityClass\":\"high\"}");
    assertThat(own.status()).as(own.body()).isEqualTo(201);
    var ownJob = admin.get("/api/v1/jobs/" + own.as(SubmitResult.class).id()).as(JobView.class);
    assertThat(ownJob.account()).isEqualTo("nlp");
    assertThat(ownJob.priorityClass()).isEqualTo("high");
    assertThat(ownJob.priority()).isEqualTo(1000);

    var noClass = admin.post("/api/v1/jobs", "{" + CMD + ",\"queue\":\"b\",\"priority\":7}");
    var noClassJob =
        admin.get("/api/v1/jobs/" + noClass.as(SubmitResult.class).id()).as(JobView.class);
    assertThat(noClassJob.priorityClass()).isNull();
    assertThat(noClassJob.priority()).isEqualTo(7);
    assertThat(noClassJob.account()).as("the user, without a default").isEqualTo("admin");
  }

  @Test
  void theQueuesShowCohortsAndQuotasAndTheAccountsTheirShares() {
    var queues = admin.get("/api/v1/queues").as(new TypeReference<List<QueueView>>() {});
    assertThat(queues).extracting(QueueView::name).startsWith("a", "b");
    var a = queues.getFirst();
    assertThat(a.cohort()).isEqualTo("lab");
    assertThat(a.quotas())
        .singleElement()
        .satisfies(
            q -> {
              assertThat(q.resource()).isEqualTo("gpu:H100");
              assertThat(q.nominal()).isEqualTo(2);
              assertThat(q.usage()).isZero();
              assertThat(q.borrowed()).isZero();
            });
    var accounts = admin.get("/api/v1/accounts").as(new TypeReference<List<AccountView>>() {});
    assertThat(accounts).extracting(AccountView::name).containsExactlyInAnyOrder("vision", "nlp");
    assertThat(accounts)
        .filteredOn(x -> x.name().equals("nlp"))
        .singleElement()
        .satisfies(x -> assertThat(x.normalizedShare()).isEqualTo(0.75));
  }

  /** Random values for the tenancy fields: always 201 or a 4xx problem, never a 5xx. */
  @Test
  void fuzzedTenancyFieldsNeverFailTheServer() {
    var random = new Random(5);
    String[] values = {
      "\"a\"",
      "\"b\"",
      "\"\"",
      "null",
      "1",
      "[]",
      "{}",
      "true",
      "\"high\"",
      "\"low\"",
      "\"nlp\"",
      "\"vision\"",
      "\"x y\"",
      "\"" + "q".repeat(200) + "\"",
      "\"\\u0000\"",
      "\"é\"",
      "-1",
      "1e99",
      "\"root\""
    };
    String[] fields = {"queue", "priorityClass", "account", "priority"};
    for (int i = 0; i < 150; i++) {
      var body = new StringBuilder("{" + CMD);
      int n = 1 + random.nextInt(3);
      for (int k = 0; k < n; k++) {
        body.append(",\"")
            .append(fields[random.nextInt(fields.length)])
            .append("\":")
            .append(values[random.nextInt(values.length)]);
      }
      body.append('}');
      var reply = admin.post("/api/v1/jobs", body.toString());
      if (reply.status() != 201) {
        assertProblem(reply, -1, null);
      }
    }
  }
}
