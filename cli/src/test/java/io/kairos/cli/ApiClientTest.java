package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.cli.FakeKairos.Reply;
import java.io.IOException;
import java.nio.file.Files;
import org.junit.jupiter.api.Test;

/**
 * How every client command reaches the controller: where the server and token come from, connection
 * refused, fail-over, redirects, and problems as one line with the exit code.
 */
class ApiClientTest extends ClientTestSupport {
  private static final String WHOAMI = "{\"user\":\"alice\",\"admin\":false}";

  @Test
  void tokenFromEnvironmentIsSentAsBearer() {
    server.on("GET", "/api/v1/whoami", 200, WHOAMI);
    kairos("whoami").assertOk();
    assertThat(server.only("GET", "/api/v1/whoami").header("Authorization"))
        .isEqualTo("Bearer " + TOKEN);
  }

  @Test
  void tokenOptionBeatsEnvironment() {
    server.on("GET", "/api/v1/whoami", 200, WHOAMI);
    kairos("whoami", "--token", "from-flag").assertOk();
    assertThat(server.only("GET", "/api/v1/whoami").header("Authorization"))
        .isEqualTo("Bearer from-flag");
  }

  @Test
  void tokenFallsBackToTheLocalControllersAdminTokenFile() throws IOException {
    env.remove("KAIROS_TOKEN");
    var data = Files.createDirectories(dir.resolve("data"));
    Files.writeString(data.resolve("admin.token"), "admin-secret\n");
    server.on("GET", "/api/v1/whoami", 200, WHOAMI);
    kairos("whoami").assertOk();
    assertThat(server.only("GET", "/api/v1/whoami").header("Authorization"))
        .isEqualTo("Bearer admin-secret");
  }

  @Test
  void dataDirectoryDefaultsToDotKairosInHome() throws IOException {
    env.remove("KAIROS_TOKEN");
    env.remove("KAIROS_DATA");
    var data = Files.createDirectories(dir.resolve("home/.kairos"));
    Files.writeString(data.resolve("admin.token"), "home-secret");
    server.on("GET", "/api/v1/whoami", 200, WHOAMI);
    kairos("whoami").assertOk();
    assertThat(server.only("GET", "/api/v1/whoami").header("Authorization"))
        .isEqualTo("Bearer home-secret");
  }

  @Test
  void withoutAnyTokenNoAuthorizationIsSentAndA401SaysHowToGetOne() {
    env.remove("KAIROS_TOKEN");
    server.on(
        "GET",
        "/api/v1/whoami",
        r ->
            Reply.problem(
                401, "{\"title\":\"Unauthorized\",\"status\":401,\"detail\":\"no bearer token\"}"));
    kairos("whoami")
        .assertError(1, "kairos: no bearer token (fix: pass --token or set KAIROS_TOKEN");
    assertThat(server.only("GET", "/api/v1/whoami").header("Authorization")).isNull();
  }

  @Test
  void serverOptionBeatsEnvironment() {
    try (var other = new FakeKairos()) {
      other.on("GET", "/api/v1/whoami", 200, "{\"user\":\"bob\",\"admin\":true}");
      var r = kairos("whoami", "--server", other.url()).assertOk();
      assertThat(r.out()).isEqualTo("bob (admin) at " + other.url() + "\n");
      assertThat(server.requests()).isEmpty();
    }
  }

  @Test
  void connectionRefusedIsOneLineNamingTheUrlAndHowToStartOne() {
    String url = "http://127.0.0.1:" + deadPort();
    var r = kairos("queue", "--server", url);
    r.assertError(1, "kairos: no controller at " + url + ": start one with `./kairos up`");
    assertThat(r.out()).isEmpty();
  }

  @Test
  void theNextServerIsTriedWhenOneRefuses() {
    String dead = "http://127.0.0.1:" + deadPort();
    env.put("KAIROS_SERVER", dead + "," + server.url());
    server.on("GET", "/api/v1/whoami", 200, WHOAMI);
    var r = kairos("whoami").assertOk();
    assertThat(r.out()).isEqualTo("alice at " + server.url() + "\n");
  }

  @Test
  void allServersRefusingNamesThemAll() {
    String a = "http://127.0.0.1:" + deadPort();
    String b = "http://127.0.0.1:" + deadPort();
    kairos("whoami", "--server", a + "," + b)
        .assertError(1, "no controller at " + a + ", " + b + ":");
  }

  @Test
  void aBadServerUrlIsAUsageError() {
    kairos("whoami", "--server", "ftp://x")
        .assertError(2, "--server: 'ftp://x' is not a controller URL");
  }

  @Test
  void aPostRedirectedToTheLeaderIsResentWithItsBodyAndToken() {
    try (var leader = new FakeKairos()) {
      leader.on("POST", "/api/v1/jobs", 201, "{\"id\":7}");
      server.on("POST", "/api/v1/jobs", r -> Reply.redirect(307, leader.url() + "/api/v1/jobs"));
      var r = kairos("submit", "--gpus", "2", "--", "hostname").assertOk();
      assertThat(r.out()).isEqualTo("Submitted job 7\n");
      var first = server.only("POST", "/api/v1/jobs");
      var resent = leader.only("POST", "/api/v1/jobs");
      assertThat(resent.body()).isEqualTo(first.body()).contains("\"hostname\"");
      assertThat(resent.header("Authorization")).isEqualTo("Bearer " + TOKEN);
      assertThat(resent.header("Content-Type")).isEqualTo("application/json");
    }
  }

  @Test
  void aRelativePermanentRedirectIsFollowedToo() {
    server.on("POST", "/api/v1/jobs/3/cancel", r -> Reply.redirect(308, "/v2/cancel/3"));
    server.on("POST", "/v2/cancel/3", 200, job(3, "CANCELLED", ""));
    kairos("cancel", "3").assertOk();
    assertThat(server.requests())
        .extracting(FakeKairos.Request::method)
        .containsExactly("POST", "POST");
  }

  @Test
  void aProblemIsOneLineWithFieldAndFixAndExit2ForBadInput() {
    server.on(
        "POST",
        "/api/v1/jobs",
        r ->
            Reply.problem(
                400,
                """
            {"type":"/docs/errors#invalid-field","title":"Invalid job spec","status":400,
             "field":"gpusPerNode","detail":"must divide gpus (16), got 3",
             "fix":"set gpusPerNode to a divisor of gpus"}"""));
    var r = kairos("submit", "--gpus", "16", "--gpus-per-node", "3", "--", "x");
    r.assertError(2);
    assertThat(r.err())
        .isEqualTo(
            "kairos: must divide gpus (16), got 3 (field: gpusPerNode; fix: set gpusPerNode to a"
                + " divisor of gpus)\n");
    assertThat(r.out()).isEmpty();
  }

  @Test
  void notFoundIsExit1() {
    server.on(
        "GET",
        "/api/v1/jobs/99",
        r ->
            Reply.problem(
                404, "{\"title\":\"Not found\",\"status\":404,\"detail\":\"no job 99\"}"));
    kairos("show", "99").assertError(1, "kairos: no job 99");
  }

  @Test
  void aServerErrorShowsItsCorrelationId() {
    server.on(
        "GET",
        "/api/v1/nodes",
        r ->
            Reply.problem(
                500, "{\"title\":\"Internal error\",\"status\":500,\"correlationId\":\"c-42\"}"));
    kairos("nodes").assertError(1, "kairos: Internal error (correlation id: c-42)");
  }

  @Test
  void anErrorThatIsNotProblemJsonShowsStatusAndText() {
    server.on(
        "GET", "/api/v1/nodes", r -> Reply.text(502, "Bad Gateway\nmore", java.util.Map.of()));
    kairos("nodes")
        .assertError(1, "kairos: HTTP 502 from " + server.url() + "/api/v1/nodes: Bad Gateway");
  }

  @Test
  void aReplyThatIsNotJsonIsAnErrorNotAStackTrace() {
    server.on("GET", "/api/v1/nodes", r -> Reply.text(200, "<html>", java.util.Map.of()));
    kairos("nodes").assertError(1, "unexpected reply from " + server.url() + "/api/v1/nodes");
  }

  @Test
  void nestedCommandsTakeClientOptionsFromTheirParent() {
    try (var other = new FakeKairos()) {
      other.on(
          "POST", "/api/v1/nodes/n1/resume", 200, "{\"name\":\"n1\",\"state\":\"UP\",\"gpus\":8}");
      kairos("nodes", "--server", other.url(), "--token", "p", "resume", "n1").assertOk();
      assertThat(other.only("POST", "/api/v1/nodes/n1/resume").header("Authorization"))
          .isEqualTo("Bearer p");
    }
  }

  @Test
  void unknownOutputFormatIsAUsageError() {
    var r = kairos("queue", "--output", "yaml");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("unknown format 'yaml'; use table, json or csv");
  }
}
