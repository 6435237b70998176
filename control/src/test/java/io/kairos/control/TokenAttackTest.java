package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.TokenCreated;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 14's token attacks against a real controller: a revoked and an expired token (user and
 * join) are refused, saying which; only admins make, list and revoke tokens; the list shows each
 * token's last use, never the token; and one user cannot hold every event stream.
 */
class TokenAttackTest {
  @TempDir static Path dir;
  static Controller controller;
  static TestApi admin;

  @BeforeAll
  static void start() throws Exception {
    controller =
        Controller.start(
            ControllerConfig.single(dir, "127.0.0.1", 0).withRunAs(TestApi.SINGLE_USER));
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    admin = new TestApi(controller.url(), controller.adminToken());
  }

  @AfterAll
  static void stop() throws IOException {
    controller.close();
  }

  static TokenCreated create(String json) {
    var reply = admin.post("/api/v1/tokens", json);
    assertThat(reply.status()).as(reply.body()).isEqualTo(201);
    return reply.as(TokenCreated.class);
  }

  /** Revoking the last active admin token would leave nobody able to manage tokens. */
  @Test
  void theLastActiveAdminTokenIsNotRevoked(@TempDir Path own) throws Exception {
    try (Controller alone =
        Controller.start(
            ControllerConfig.single(own, "127.0.0.1", 0).withRunAs(TestApi.SINGLE_USER))) {
      Leaders.awaitLeader(alone, Duration.ofSeconds(30));
      var boot = new TestApi(alone.url(), alone.adminToken());
      String bootHash = io.kairos.control.auth.Tokens.hash(alone.adminToken());
      // The bootstrap tokens reach the replicated state a moment after the leader is elected.
      String bootId =
          org.awaitility.Awaitility.await()
              .atMost(Duration.ofSeconds(20))
              .until(
                  () ->
                      boot.get("/api/v1/tokens").as(JsonNode.class).findValues("id").stream()
                          .map(JsonNode::asText)
                          .filter(bootHash::startsWith)
                          .findFirst(),
                  java.util.Optional::isPresent)
              .orElseThrow();

      var refused = boot.method("DELETE", "/api/v1/tokens/" + bootId);
      assertThat(refused.status()).as(refused.body()).isEqualTo(409);
      assertThat(refused.body()).contains("last active admin token", "--admin");
      assertThat(boot.get("/api/v1/whoami").status()).as("still an admin").isEqualTo(200);

      var second = boot.post("/api/v1/tokens", "{\"user\":\"root2\",\"admin\":true}");
      assertThat(second.status()).as(second.body()).isEqualTo(201);
      TestApi other = boot.as(second.as(TokenCreated.class).token());
      assertThat(other.method("DELETE", "/api/v1/tokens/" + bootId).status()).isEqualTo(200);
      assertThat(boot.get("/api/v1/whoami").status()).isEqualTo(401);
      String otherId = second.as(TokenCreated.class).id();
      assertThat(other.method("DELETE", "/api/v1/tokens/" + otherId).status())
          .as("now the other is the last")
          .isEqualTo(409);
    }
  }

  @Test
  void aRevokedUserTokenIsRefusedSayingSo() {
    TokenCreated t = create("{\"user\":\"carol\"}");
    TestApi carol = admin.as(t.token());
    assertThat(carol.get("/api/v1/jobs").status()).isEqualTo(200);
    assertThat(t.expiresAt()).as("user tokens expire by default").isNotNull();

    var revoked = admin.method("DELETE", "/api/v1/tokens/" + t.id());
    assertThat(revoked.status()).as(revoked.body()).isEqualTo(200);
    assertThat(revoked.as(JsonNode.class).get("state").asText()).isEqualTo("revoked");

    var refused = carol.get("/api/v1/jobs");
    assertThat(refused.status()).isEqualTo(401);
    assertThat(refused.body()).contains("revoked");
    assertThat(carol.post("/api/v1/jobs", "{\"command\":[\"x\"],\"gpus\":0}").status())
        .isEqualTo(401);
  }

  @Test
  void anExpiredUserTokenIsRefusedSayingSo() throws Exception {
    TokenCreated t = create("{\"user\":\"dave\",\"ttl\":\"1s\"}");
    TestApi dave = admin.as(t.token());
    assertThat(dave.get("/api/v1/jobs").status()).isEqualTo(200);
    Thread.sleep(1_200);

    var refused = dave.get("/api/v1/jobs");
    assertThat(refused.status()).isEqualTo(401);
    assertThat(refused.body()).contains("expired").contains("kairos token create");
    assertThat(state(t.id())).isEqualTo("expired");
  }

  @Test
  void joinTokensAreSeveralExpireAndAreRevocable() throws Exception {
    TokenCreated day = create("{\"join\":true,\"ttl\":\"24h\"}");
    TokenCreated brief = create("{\"join\":true,\"ttl\":\"1s\"}");
    TokenCreated byDefault = create("{\"join\":true}");
    assertThat(day.role()).isEqualTo("join");
    assertThat(java.time.Instant.parse(byDefault.expiresAt()))
        .as("24 h by default")
        .isBetween(
            java.time.Instant.now().plus(Duration.ofHours(23)),
            java.time.Instant.now().plus(Duration.ofHours(25)));

    var first = admin.as(day.token()).post("/api/v1/agents/register", node("j1"));
    assertThat(first.status()).as(first.body()).isEqualTo(200);

    assertThat(admin.method("DELETE", "/api/v1/tokens/" + day.id()).status()).isEqualTo(200);
    var afterRevoke = admin.as(day.token()).post("/api/v1/agents/register", node("j2"));
    assertThat(afterRevoke.status()).isEqualTo(401);
    assertThat(afterRevoke.body()).contains("revoked");

    Thread.sleep(1_200);
    var afterExpiry = admin.as(brief.token()).post("/api/v1/agents/register", node("j3"));
    assertThat(afterExpiry.status()).isEqualTo(401);
    assertThat(afterExpiry.body()).contains("expired");

    var other = admin.as(byDefault.token()).post("/api/v1/agents/register", node("j4"));
    assertThat(other.status()).as("the other join tokens still work").isEqualTo(200);
    // A join token is for registering and nothing else.
    assertThat(admin.as(byDefault.token()).get("/api/v1/jobs").status()).isEqualTo(403);
  }

  @Test
  void onlyAdminsMakeListAndRevokeTokens() {
    TokenCreated t = create("{\"user\":\"erin\"}");
    TestApi erin = admin.as(t.token());
    assertThat(erin.post("/api/v1/tokens", "{\"user\":\"erin\",\"admin\":true}").status())
        .isEqualTo(403);
    assertThat(erin.get("/api/v1/tokens").status()).isEqualTo(403);
    assertThat(erin.method("DELETE", "/api/v1/tokens/" + t.id()).status()).isEqualTo(403);
    assertThat(admin.as(controller.joinToken()).get("/api/v1/tokens").status()).isEqualTo(403);
    assertThat(admin.as(null).get("/api/v1/tokens").status()).isEqualTo(401);
  }

  @Test
  void theListShowsEachTokensRoleAndLastUseButNeverTheToken() {
    assertThat(admin.get("/api/v1/whoami").status()).isEqualTo(200);
    var list = admin.get("/api/v1/tokens");
    assertThat(list.status()).as(list.body()).isEqualTo(200);
    assertThat(list.body())
        .doesNotContain(controller.adminToken())
        .doesNotContain(controller.joinToken());
    JsonNode adminRow = null;
    for (JsonNode row : list.as(JsonNode.class)) {
      if (row.get("role").asText().equals("admin") && row.has("lastUsedAt")) {
        adminRow = row;
      }
    }
    assertThat(adminRow).as("the admin token with its last use, in %s", list.body()).isNotNull();
    assertThat(java.time.Instant.parse(adminRow.get("lastUsedAt").asText()))
        .isAfter(java.time.Instant.now().minus(Duration.ofMinutes(1)));
  }

  @Test
  void badLifetimesAndIdsAre400NamingTheField() {
    var ttl = admin.post("/api/v1/tokens", "{\"user\":\"x\",\"ttl\":\"forever\"}");
    assertThat(ttl.status()).isEqualTo(400);
    assertThat(ttl.as(JsonNode.class).get("field").asText()).isEqualTo("ttl");
    var id = admin.method("DELETE", "/api/v1/tokens/not-an-id");
    assertThat(id.status()).isEqualTo(400);
    assertThat(id.as(JsonNode.class).get("field").asText()).isEqualTo("id");
    assertThat(admin.method("DELETE", "/api/v1/tokens/0123456789abcdef").status()).isEqualTo(404);
  }

  /**
   * One user opens event streams until refused (429, naming the limit); another user still gets
   * one, and so does the first once it closes one.
   */
  @Test
  void oneUserCannotHoldEveryEventStream() throws Exception {
    String mallory = create("{\"user\":\"mallory\"}").token();
    String frank = create("{\"user\":\"frank\"}").token();
    List<InputStream> open = new ArrayList<>();
    HttpClient http = HttpClient.newHttpClient();
    try {
      int opened = 0;
      HttpResponse<InputStream> refused = null;
      while (refused == null && opened < 100) {
        HttpResponse<InputStream> r = stream(http, mallory);
        if (r.statusCode() == 200) {
          open.add(r.body());
          opened++;
        } else {
          refused = r;
        }
      }
      assertThat(refused).as("mallory is refused a stream at some point").isNotNull();
      assertThat(opened).isEqualTo(8);
      assertThat(refused.statusCode()).isEqualTo(429);
      String body =
          new String(refused.body().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      assertThat(body).contains("eventStreamsPerUser");

      HttpResponse<InputStream> franks = stream(http, frank);
      assertThat(franks.statusCode()).as("another user still gets one").isEqualTo(200);
      open.add(franks.body());

      open.removeFirst().close();
      // A write after the peer closed often succeeds (it only draws the reset); the next fails.
      // So the server may need two keep-alives to notice, and the deadline allows for them.
      long deadline =
          System.nanoTime()
              + io.kairos.control.dashboard.EventStream.KEEP_ALIVE.multipliedBy(2).toNanos()
              + TimeUnit.SECONDS.toNanos(10);
      int status;
      do {
        // The server notices the closed stream at its next write (a keep-alive at the latest).
        HttpResponse<InputStream> again = stream(http, mallory);
        status = again.statusCode();
        if (status == 200) {
          open.add(again.body());
        } else {
          again.body().close();
          Thread.sleep(200);
        }
      } while (status != 200 && System.nanoTime() < deadline);
      assertThat(status).as("mallory gets a stream again once she closes one").isEqualTo(200);
    } finally {
      for (InputStream in : open) {
        in.close();
      }
      http.shutdownNow();
    }
  }

  private static HttpResponse<InputStream> stream(HttpClient http, String token)
      throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create(controller.url() + "/api/v1/events"))
            .header("Authorization", "Bearer " + token)
            .header("Accept", "text/event-stream")
            .GET()
            .build(),
        HttpResponse.BodyHandlers.ofInputStream());
  }

  private static String state(String id) {
    for (JsonNode row : admin.get("/api/v1/tokens").as(JsonNode.class)) {
      if (row.get("id").asText().equals(id)) {
        return row.get("state").asText();
      }
    }
    throw new AssertionError("no token " + id);
  }

  private static io.kairos.protocol.agent.Registration node(String name) {
    return ControllerApiTest.node(name, 1);
  }
}
