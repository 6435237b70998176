package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kairos.control.Controller;
import io.kairos.control.ControllerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code kairos token create --join --ttl}, {@code token list}, {@code token revoke} and {@code
 * kairos nodes reset} against a real controller: what an admin types, and what the cluster then
 * does with the token.
 */
class TokenCommandsTest extends ClientTestSupport {
  static final ObjectMapper JSON = new ObjectMapper();
  Controller controller;

  @BeforeEach
  void startController() throws Exception {
    controller = Controller.start(ControllerConfig.single(dir.resolve("ctl"), "127.0.0.1", 0));
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!controller.replica().isLeaderReady() || !controller.isBootstrapped()) {
      assertThat(System.nanoTime()).as("the controller leads within 30 s").isLessThan(deadline);
      Thread.sleep(20);
    }
    // The bootstrap tokens are committed in the background once a leader leads.
    while (controller.replica().stateMachine().read(s -> s.tokens().size()) < 2) {
      assertThat(System.nanoTime())
          .as("the bootstrap tokens commit within 30 s")
          .isLessThan(deadline);
      Thread.sleep(20);
    }
    env.put("KAIROS_SERVER", controller.url());
    env.put("KAIROS_TOKEN", controller.adminToken());
  }

  @AfterEach
  void stopController() throws Exception {
    controller.close();
  }

  @Test
  void aJoinTokenIsMadeListedAndRevoked() throws Exception {
    var created = kairos("token", "create", "--join", "--ttl", "2h");
    assertThat(created.code()).as(created.err()).isZero();
    String token = created.out().strip();
    assertThat(token).startsWith("kjoin_");
    assertThat(created.err()).startsWith("Join token ").contains("expires ");
    String id = created.err().substring("Join token ".length()).split(",")[0];
    assertThat(register(token, "n1")).isEqualTo(200);

    String listed = kairos("token", "list").assertOk().out();
    assertThat(listed).contains("ID").contains("LAST USED").doesNotContain(token);
    String row = line(listed, id);
    assertThat(row).contains("join").contains("active");
    assertThat(line(listed, "(bootstrap)")).as("the data directory's tokens").isNotEmpty();

    var revoked = kairos("token", "revoke", id).assertOk();
    assertThat(revoked.out()).startsWith("Revoked join token " + id);
    assertThat(line(kairos("token", "list").assertOk().out(), id)).contains("revoked");
    assertThat(register(token, "n2")).isEqualTo(401);

    JsonNode json = JSON.readTree(kairos("token", "list", "-o", "json").assertOk().out());
    assertThat(json.isArray()).isTrue();
    assertThat(json.findValuesAsText("id")).contains(id);
  }

  @Test
  void badInputGetsOneLineNamingTheField() {
    // 400s are exit status 2, like usage errors; the others 1.
    kairos("token", "create", "--user", "bob", "--ttl", "forever").assertError(2, "ttl", "24h");
    kairos("token", "revoke", "zz").assertError(2, "id", "kairos token list");
    kairos("token", "revoke", "0123456789ab").assertError(1, "no token");
    kairos("nodes", "reset", "nowhere").assertError(1, "nowhere");
  }

  @Test
  void onlyAnAdminListsOrRevokes() {
    var user = kairos("token", "create", "--user", "bob");
    env.put("KAIROS_TOKEN", user.out().strip());
    kairos("token", "list").assertError(1, "admin");
    kairos("nodes", "reset", "n1").assertError(1, "admin");
  }

  @Test
  void aResetNodesNameIsFreeForAJoinToken() throws Exception {
    String join = controller.joinToken();
    assertThat(register(join, "n1")).isEqualTo(200);
    assertThat(register(join, "n1", "other")).as("a name bound to its node").isEqualTo(403);

    var reset = kairos("nodes", "reset", "n1");
    assertThat(reset.code()).as(reset.err()).isZero();
    assertThat(register(join, "n1", "other")).isEqualTo(200);
  }

  private int register(String token, String node) throws Exception {
    return register(token, node, node);
  }

  /** Registers {@code node} with the join token and the node secret of {@code whose}. */
  private int register(String token, String node, String whose) throws Exception {
    String secret = "knode_" + io.kairos.control.auth.Tokens.hash("cli test " + whose);
    String body =
        "{\"node\":\""
            + node
            + "\",\"address\":\"http://127.0.0.1:1\",\"gpus\":[],\"cpus\":4,"
            + "\"memoryBytes\":1073741824,\"labels\":{},\"zone\":\"z\",\"block\":\"b\","
            + "\"rack\":\"r\",\"nvlinkDomainSize\":1,\"logToken\":\"klog_"
            + io.kairos.control.auth.Tokens.hash("log " + whose)
            + "\",\"credential\":{\"secret\":\""
            + secret
            + "\"}}";
    try (var http = HttpClient.newHttpClient()) {
      return http.send(
              HttpRequest.newBuilder(URI.create(controller.url() + "/api/v1/agents/register"))
                  .header("Authorization", "Bearer " + token)
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString(body))
                  .build(),
              HttpResponse.BodyHandlers.ofString())
          .statusCode();
    }
  }

  private static String line(String table, String containing) {
    return table
        .lines()
        .filter(l -> l.contains(containing))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no line with " + containing + " in\n" + table));
  }
}
