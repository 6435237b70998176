package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.core.type.TypeReference;
import io.kairos.control.accounting.AccountingSettings;
import io.kairos.protocol.HistoryRecord;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.SubmitResult;
import io.kairos.protocol.TokenCreated;
import io.kairos.protocol.UsageReport;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The accounting store behind a real controller: jobs that ran and ended (a hand-played agent
 * reports their exits) leave the replicated state at once (retention 0) and are read back through
 * {@code /api/v1/history}, {@code /api/v1/report} and {@code /api/v1/jobs/{id}}; and the attack:
 * bob, a plain user, asking for alice's history or report gets only his own records.
 */
class AccountingApiTest {
  @TempDir static Path dir;
  static Controller controller;
  static TestApi admin;
  static TestApi alice;
  static TestApi bob;
  static long alicesJob;
  static long bobsJob;

  @BeforeAll
  static void start() throws Exception {
    controller =
        Controller.start(
            ControllerConfig.single(dir, "127.0.0.1", 0),
            AccountingSettings.defaults().withRetention(Duration.ZERO, 0));
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    admin = new TestApi(controller.url(), controller.adminToken());
    alice = admin.as(token("alice"));
    bob = admin.as(token("bob"));
    var join = admin.as(controller.joinToken());
    var reg = join.post("/api/v1/agents/register", ControllerApiTest.node("n1", 8));
    assertThat(reg.status()).as(reg.body()).isEqualTo(200);
    long epoch = reg.as(Registered.class).epoch();

    alicesJob = submit(alice, "{\"name\":\"a\",\"command\":[\"true\"],\"gpus\":4}");
    bobsJob = submit(bob, "{\"name\":\"b\",\"command\":[\"true\"],\"gpus\":1}");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> state(alicesJob) == JobState.RUNNING && state(bobsJob) == JobState.RUNNING);
    // The agent reports both tasks exited 0.
    var node = join.asNode("n1");
    var beat =
        node.post(
            "/api/v1/agents/heartbeat",
            new Heartbeat("n1", epoch, List.of(exited(alicesJob, 0), exited(bobsJob, 0)), 0));
    assertThat(beat.status()).as(beat.body()).isEqualTo(200);
    // Retention 0: once written they leave the replicated state.
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                controller
                    .replica()
                    .stateMachine()
                    .read(st -> st.job(alicesJob).isEmpty() && st.job(bobsJob).isEmpty()));
  }

  @AfterAll
  static void stop() throws Exception {
    controller.close();
  }

  static TaskReport exited(long job, int code) {
    long now = System.currentTimeMillis();
    return new TaskReport(job, 1, 0, TaskStatus.EXITED, code, null, null, now - 2_000, now);
  }

  static String token(String user) {
    var r = admin.post("/api/v1/tokens", Map.of("user", user));
    assertThat(r.status()).as(r.body()).isEqualTo(201);
    return r.as(TokenCreated.class).token();
  }

  static long submit(TestApi as, String json) {
    var r = as.post("/api/v1/jobs", json);
    assertThat(r.status()).as(r.body()).isEqualTo(201);
    return r.as(SubmitResult.class).id();
  }

  static JobState state(long id) {
    return admin.get("/api/v1/jobs/" + id).as(JobView.class).state();
  }

  static List<HistoryRecord> history(TestApi as, String query) {
    var r = as.get("/api/v1/history" + query);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.as(new TypeReference<List<HistoryRecord>>() {});
  }

  static UsageReport report(TestApi as, String query) {
    var r = as.get("/api/v1/report" + query);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.as(UsageReport.class);
  }

  @Test
  void anAdminReadsEveryEndedJobFromTheStore() {
    var all = history(admin, "");
    assertThat(all).extracting(HistoryRecord::id).containsExactly(alicesJob, bobsJob);
    var a = all.getFirst();
    assertThat(a.user()).isEqualTo("alice");
    assertThat(a.state()).isEqualTo(JobState.SUCCEEDED);
    assertThat(a.attempts()).isEqualTo(1);
    assertThat(a.nodes()).containsExactly("n1");
    assertThat(a.gpuSecondsByModel()).containsKey("H100");
    assertThat(history(admin, "?user=bob")).extracting(HistoryRecord::id).containsExactly(bobsJob);
    assertThat(history(admin, "?state=FAILED")).isEmpty();
  }

  @Test
  void aJobTheStateForgotIsStillShownFromTheStore() {
    var r = alice.get("/api/v1/jobs/" + alicesJob);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    var view = r.as(JobView.class);
    assertThat(view.state()).isEqualTo(JobState.SUCCEEDED);
    assertThat(view.user()).isEqualTo("alice");
    assertThat(view.placement()).isNotEmpty();
    assertThat(admin.get("/api/v1/jobs/999999").status()).isEqualTo(404);
  }

  @Test
  void bobAskingForAlicesHistoryOrReportGetsOnlyHisOwn() {
    assertThat(history(bob, "?user=alice")).isEmpty();
    assertThat(history(bob, "")).extracting(HistoryRecord::id).containsExactly(bobsJob);
    var byUser = report(bob, "?by=user&since=1h");
    assertThat(byUser.rows()).extracting(UsageReport.UsageRow::key).containsExactly("bob");
    var byAccount = report(bob, "?by=account&since=1h");
    assertThat(byAccount.total().jobs()).isEqualTo(1);
    // An admin's report has both.
    assertThat(report(admin, "?by=user&since=1h").rows())
        .extracting(UsageReport.UsageRow::key)
        .containsExactlyInAnyOrder("alice", "bob");
  }

  @Test
  void badFiltersAreRefusedWithTheFieldAndTheFix() {
    var r = admin.get("/api/v1/history?since=yesterday-ish");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.body()).contains("since").contains("ISO-8601");
    r = admin.get("/api/v1/history?state=RUNNING");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.body()).contains("SUCCEEDED, FAILED or CANCELLED");
    r = admin.get("/api/v1/report?by=planet");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.body()).contains("account, user or queue");
    r = admin.get("/api/v1/history?limit=0");
    assertThat(r.status()).isEqualTo(400);
  }

  @Test
  void noTokenReadsNothing() {
    var anonymous = new TestApi(controller.url(), null);
    assertThat(anonymous.get("/api/v1/history").status()).isEqualTo(401);
    assertThat(anonymous.get("/api/v1/report").status()).isEqualTo(401);
  }
}
