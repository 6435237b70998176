package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.core.type.TypeReference;
import com.sun.net.httpserver.HttpServer;
import io.kairos.config.Tenancy;
import io.kairos.control.auth.PrivateData;
import io.kairos.core.fairshare.AccountTree;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.core.tenancy.Resource;
import io.kairos.core.tenancy.ResourceQuota;
import io.kairos.core.tenancy.TenancyConfig;
import io.kairos.core.tenancy.Tenants;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.SubmitResult;
import io.kairos.protocol.TokenCreated;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job's private data (env, command, workdir, checkpoint directory, logs) through every endpoint a
 * user can call, with two users' tokens against real controllers, one per {@code --private-data}
 * level: under {@code owner} (the default) alice reads none of bob's through any endpoint while bob
 * and the admin read all of it; {@code account} widens it to the members of the job's account in
 * the account tree; {@code all} to every user. The rest of the job (name, user, state, GPUs,
 * placement) every user sees.
 */
class PrivacyApiTest {
  /** In every private field of bob's job and in its output: never in a reply to alice. */
  static final String SECRET = "s3cr3t";

  static final String BOBS_JOB =
      "{\"name\":\"train\",\"command\":[\"python\",\"train.py\",\"--key\",\"arg-"
          + SECRET
          + "\"],\"env\":{\"HF_TOKEN\":\"hf_"
          + SECRET
          + "\"},\"workdir\":\"/home/bob/"
          + SECRET
          + "\",\"checkpointDir\":\"/ckpt/"
          + SECRET
          + "\",\"gpus\":1%s}";

  @TempDir static Path dir;
  static HttpServer logServer;
  static Cluster owner;
  static Cluster all;
  static Cluster account;

  /** One controller at one level, with tokens for alice, bob and carol and one node. */
  record Cluster(Controller controller, TestApi admin, TestApi alice, TestApi bob, TestApi carol) {
    static Cluster start(Path dir, PrivateData level, Tenancy tenancy, String logs)
        throws Exception {
      var config = ControllerConfig.single(dir, "127.0.0.1", 0).withPrivateData(level);
      var controller = Controller.start(tenancy == null ? config : config.withTenancy(tenancy));
      Leaders.awaitLeader(controller, Duration.ofSeconds(30));
      var admin = new TestApi(controller.url(), controller.adminToken());
      var reg =
          admin.as(controller.joinToken()).post("/api/v1/agents/register", node("n1", 8, logs));
      assertThat(reg.status()).as(reg.body()).isEqualTo(200);
      return new Cluster(
          controller,
          admin,
          admin.as(token(admin, "alice")),
          admin.as(token(admin, "bob")),
          admin.as(token(admin, "carol")));
    }

    /** Submits bob's job (with {@code extra} fields) and waits until it runs. */
    long bobsRunningJob(String extra) {
      var r = bob.post("/api/v1/jobs", String.format(BOBS_JOB, extra));
      assertThat(r.status()).as(r.body()).isEqualTo(201);
      long id = r.as(SubmitResult.class).id();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () -> admin.get("/api/v1/jobs/" + id).as(JobView.class).state() == JobState.RUNNING);
      return id;
    }

    void close() throws IOException {
      controller.close();
    }
  }

  static io.kairos.protocol.agent.Registration node(String name, int gpus, String address) {
    var list = new ArrayList<io.kairos.protocol.GpuDevice>();
    for (int i = 0; i < gpus; i++) {
      list.add(new io.kairos.protocol.GpuDevice(i, "GPU-" + name + "-" + i, "H100", 80L << 30));
    }
    return TestApi.identified(
        new io.kairos.protocol.agent.Registration(
            name, address, list, 64, 512L << 30, Map.of(), "z", "b", "r", gpus));
  }

  static String token(TestApi admin, String user) {
    var r = admin.post("/api/v1/tokens", Map.of("user", user));
    assertThat(r.status()).as(r.body()).isEqualTo(201);
    return r.as(TokenCreated.class).token();
  }

  /** Accounts ml (alice, bob) and ops (carol); one queue. */
  static Tenancy tenancy() {
    var config =
        TenancyConfig.ofQueues(
            List.of(QueueSpec.of("main", null, Map.of(Resource.gpu("H100"), ResourceQuota.of(8)))));
    var accounts =
        AccountTree.of(
            List.of(
                new AccountTree.Account("ml", AccountTree.ROOT, 1),
                new AccountTree.Account("ops", AccountTree.ROOT, 1),
                new AccountTree.Account("alice", "ml", 1),
                new AccountTree.Account("bob", "ml", 1),
                new AccountTree.Account("carol", "ops", 1)));
    return new Tenancy(config, accounts, 3600, Tenants.Settings.DEFAULT);
  }

  @BeforeAll
  static void start() throws Exception {
    // The agents' log server: every task printed a secret.
    logServer = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    logServer.createContext(
        "/logs/",
        ex -> {
          byte[] all = ("the " + SECRET + " output\n").getBytes(StandardCharsets.UTF_8);
          ex.getResponseHeaders().add("Kairos-Log-Offset", Long.toString(all.length));
          ex.getResponseHeaders().add("Kairos-Log-Done", "false");
          ex.sendResponseHeaders(200, all.length);
          ex.getResponseBody().write(all);
          ex.close();
        });
    logServer.start();
    String logs = "http://127.0.0.1:" + logServer.getAddress().getPort();
    owner = Cluster.start(dir.resolve("owner"), PrivateData.OWNER, null, logs);
    all = Cluster.start(dir.resolve("all"), PrivateData.ALL, null, logs);
    account = Cluster.start(dir.resolve("account"), PrivateData.ACCOUNT, tenancy(), logs);
  }

  @AfterAll
  static void stop() throws Exception {
    for (var c : new Cluster[] {owner, all, account}) {
      if (c != null) {
        c.close();
      }
    }
    if (logServer != null) {
      logServer.stop(0);
    }
  }

  /** Every GET a user may call, for a cluster where job {@code id} exists. */
  static List<String> readPaths(long id) {
    return List.of(
        "/api/v1/jobs",
        "/api/v1/jobs?user=bob",
        "/api/v1/jobs?state=RUNNING",
        "/api/v1/jobs?state=SUCCEEDED,FAILED,CANCELLED",
        "/api/v1/jobs?queue=default&limit=5",
        "/api/v1/jobs/" + id,
        "/api/v1/jobs/" + id + "/logs",
        "/api/v1/jobs/" + id + "/logs?stream=stderr",
        "/api/v1/jobs/" + id + "/logs?task=0&offset=0",
        "/api/v1/nodes",
        "/api/v1/queues",
        "/api/v1/accounts",
        "/api/v1/cluster",
        "/api/v1/limits",
        "/api/v1/whoami",
        "/api/v1/stats/utilization",
        "/api/v1/openapi.json");
  }

  @Test
  void aliceReadsNoneOfBobsPrivateDataThroughAnyEndpoint() throws Exception {
    long id = owner.bobsRunningJob("");
    for (String path : readPaths(id)) {
      var r = owner.alice().get(path);
      assertThat(r.status()).as("GET %s as alice: %s", path, r.body()).isLessThan(500);
      assertThat(r.body()).as("GET %s as alice", path).doesNotContain(SECRET);
    }
    assertThat(events(owner.controller(), owner.alice())).doesNotContain(SECRET);
    // What she does see: the job, and that its private data was withheld.
    var seen = owner.alice().get("/api/v1/jobs/" + id).as(JobView.class);
    assertThat(seen.user()).isEqualTo("bob");
    assertThat(seen.name()).isEqualTo("train");
    assertThat(seen.state()).isEqualTo(JobState.RUNNING);
    assertThat(seen.gpus()).isEqualTo(1);
    assertThat(seen.placement()).isNotEmpty();
    assertThat(seen.command()).isNull();
    assertThat(seen.env()).isNull();
    assertThat(seen.workdir()).isNull();
    assertThat(seen.checkpointDir()).isNull();
    assertThat(seen.redacted()).containsExactly("command", "env", "workdir", "checkpointDir");
    var logs = owner.alice().get("/api/v1/jobs/" + id + "/logs");
    assertThat(logs.status()).isEqualTo(403);
    assertThat(logs.contentType()).startsWith("application/problem+json");
    // Her cancel is refused, and its reply shows nothing either.
    var cancel = owner.alice().post("/api/v1/jobs/" + id + "/cancel", "");
    assertThat(cancel.status()).isEqualTo(403);
    assertThat(cancel.body()).doesNotContain(SECRET);
    // Once it ended (history), still nothing.
    assertThat(owner.bob().post("/api/v1/jobs/" + id + "/cancel", "").status()).isEqualTo(200);
    for (String path : readPaths(id)) {
      assertThat(owner.alice().get(path).body())
          .as("GET %s as alice, ended", path)
          .doesNotContain(SECRET);
    }
  }

  @Test
  void theOwnerAndAdminsReadItAll() {
    long id = owner.bobsRunningJob("");
    for (TestApi who : List.of(owner.bob(), owner.admin())) {
      var job = who.get("/api/v1/jobs/" + id).as(JobView.class);
      assertThat(job.env()).containsEntry("HF_TOKEN", "hf_" + SECRET);
      assertThat(job.command()).contains("arg-" + SECRET);
      assertThat(job.workdir()).contains(SECRET);
      assertThat(job.checkpointDir()).contains(SECRET);
      assertThat(job.redacted()).isNull();
      var listed =
          who.get("/api/v1/jobs?user=bob").as(new TypeReference<List<JobView>>() {}).stream()
              .filter(j -> j.id() == id)
              .findFirst()
              .orElseThrow();
      assertThat(listed.env()).containsEntry("HF_TOKEN", "hf_" + SECRET);
      var logs = who.get("/api/v1/jobs/" + id + "/logs");
      assertThat(logs.status()).as(logs.body()).isEqualTo(200);
      assertThat(logs.body()).contains(SECRET);
    }
    // Alice's own job is hers to read.
    var mine =
        owner
            .alice()
            .post("/api/v1/jobs", "{\"command\":[\"sleep\",\"1\"],\"env\":{\"A\":\"mine\"}}");
    long own = mine.as(SubmitResult.class).id();
    assertThat(owner.alice().get("/api/v1/jobs/" + own).as(JobView.class).env())
        .containsEntry("A", "mine");
  }

  @Test
  void privateDataAllShowsEveryUserEverything() {
    long id = all.bobsRunningJob("");
    var job = all.alice().get("/api/v1/jobs/" + id).as(JobView.class);
    assertThat(job.env()).containsEntry("HF_TOKEN", "hf_" + SECRET);
    assertThat(job.redacted()).isNull();
    var logs = all.alice().get("/api/v1/jobs/" + id + "/logs");
    assertThat(logs.status()).as(logs.body()).isEqualTo(200);
    assertThat(logs.body()).contains(SECRET);
  }

  @Test
  void privateDataAccountShowsTheMembersOfTheJobsAccountOnly() {
    long team = account.bobsRunningJob(",\"queue\":\"main\",\"account\":\"ml\"");
    long own = account.bobsRunningJob(",\"queue\":\"main\",\"account\":\"bob\"");
    // alice is under ml: she reads bob's job charged to ml, not the one charged to bob himself.
    assertThat(account.alice().get("/api/v1/jobs/" + team).as(JobView.class).env())
        .containsEntry("HF_TOKEN", "hf_" + SECRET);
    assertThat(account.alice().get("/api/v1/jobs/" + team + "/logs").status()).isEqualTo(200);
    assertThat(account.alice().get("/api/v1/jobs/" + own).body()).doesNotContain(SECRET);
    assertThat(account.alice().get("/api/v1/jobs/" + own + "/logs").status()).isEqualTo(403);
    // carol is under ops: neither.
    for (long id : List.of(team, own)) {
      for (String path : readPaths(id)) {
        assertThat(account.carol().get(path).body())
            .as("GET %s as carol", path)
            .doesNotContain(SECRET);
      }
    }
  }

  /** The first frames of {@code GET /api/v1/events} as {@code who}: state versions only. */
  static String events(Controller controller, TestApi who) throws Exception {
    String token = who.token();
    var client = HttpClient.newHttpClient();
    var reply =
        client.send(
            HttpRequest.newBuilder(URI.create(controller.url() + "/api/v1/events"))
                .header("Authorization", "Bearer " + token)
                .build(),
            HttpResponse.BodyHandlers.ofInputStream());
    assertThat(reply.statusCode()).isEqualTo(200);
    byte[] buffer = new byte[256];
    int n;
    try (InputStream in = reply.body()) {
      n = in.read(buffer);
    }
    String text = new String(buffer, 0, Math.max(0, n), StandardCharsets.UTF_8);
    assertThat(text).contains("event: changed").containsPattern("data: \\{\"version\":\\d+\\}");
    return text;
  }
}
