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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code kairos bench heartbeats}: its options, and a tiny run against a real controller. */
class BenchHeartbeatsCommandTest extends ClientTestSupport {
  private static final ObjectMapper JSON = new ObjectMapper();

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({
    "--agents, 0, --agents must be in 1..1000000",
    "--rate, 0, --rate must be in (0, 1000]",
    "--rate, -1, --rate must be in (0, 1000]",
    "--duration, 0s, --duration must be > 0",
    "--duration, soon, is not a duration",
    "--warmup, -5s, is not a duration",
    "--connections, 0, --connections and --register-parallel must be in 1..4096",
    "--gpus, 2, --gpus must be 0 or 1",
    "--url, ftp://x:1, --url must be an http(s) base URL",
  })
  void badOptionsAreRejectedNamingTheOption(String option, String value, String message) {
    var r = kairos("bench", "heartbeats", "--join-token", "t", option, value);
    assertThat(r.code()).as(r.err()).isEqualTo(2);
    assertThat(r.err()).contains(message);
    assertThat(server.requests()).isEmpty();
  }

  @Test
  void aJoinTokenIsRequired() {
    kairos("bench", "heartbeats", "--agents", "1").assertError(2, "--join-token-file");
  }

  @Test
  void durationsTakeUnits() {
    var s = new BenchHeartbeatsCommand.Seconds();
    assertThat(s.convert("60s")).isEqualTo(60.0);
    assertThat(s.convert("2m")).isEqualTo(120.0);
    assertThat(s.convert("1500ms")).isEqualTo(1.5);
    assertThat(s.convert("0.25")).isEqualTo(0.25);
  }

  @Test
  void twentyAgentsHeartbeatARealControllerForTwoSeconds() throws Exception {
    try (var controller =
        Controller.start(ControllerConfig.single(dir.resolve("ctl"), "127.0.0.1", 0))) {
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (!controller.replica().isLeaderReady() || !controller.isBootstrapped()) {
        assertThat(System.nanoTime()).as("the controller leads within 30 s").isLessThan(deadline);
        Thread.sleep(20);
      }
      Path tokenFile = dir.resolve("join.token");
      Files.writeString(tokenFile, controller.joinToken() + "\n");

      var r =
          kairos(
                  "bench",
                  "heartbeats",
                  "--url",
                  controller.url(),
                  "--join-token-file",
                  tokenFile.toString(),
                  "--agents",
                  "20",
                  "--rate",
                  "1",
                  "--duration",
                  "2s",
                  "--warmup",
                  "500ms",
                  "--connections",
                  "2",
                  "--gpus",
                  "1",
                  "--prefix",
                  "bench-",
                  "-o",
                  "json")
              .assertOk();

      JsonNode report = JSON.readTree(r.out());
      assertThat(report.get("agents").asInt()).isEqualTo(20);
      assertThat(report.get("target_per_s").asDouble()).isEqualTo(20.0);
      assertThat(report.get("due").asLong()).isEqualTo(40);
      assertThat(report.get("ok").asLong()).isEqualTo(40);
      assertThat(report.get("errors").size()).isZero();
      assertThat(report.get("achieved_per_s").asDouble()).isBetween(10.0, 25.0);
      assertThat(report.get("latency_ms").get("p99").asDouble()).isGreaterThanOrEqualTo(0.0);
      assertThat(report.get("late_agents").isNumber()).isTrue();

      // The agents are real nodes of the controller, each with its one emulated GPU.
      var nodes =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create(controller.url() + "/api/v1/nodes"))
                      .header("Authorization", "Bearer " + controller.adminToken())
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(nodes.statusCode()).isEqualTo(200);
      assertThat(nodes.body()).contains("\"bench-0\"", "\"bench-19\"");
    }
  }

  /**
   * {@code bench submit --agents}: emulated agents over the real agent API take the submitted jobs,
   * run them and report them finished, so the open loop runs with jobs finishing; the controller's
   * own figures come back from its /metrics.
   */
  @Test
  void submittedJobsRunAndFinishOnEmulatedAgents() throws Exception {
    try (var controller =
        Controller.start(
            ControllerConfig.single(dir.resolve("fin"), "127.0.0.1", 0)
                .withRunAs(io.kairos.control.auth.RunAsPolicy.of(null, true)))) {
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (!controller.replica().isLeaderReady() || !controller.isBootstrapped()) {
        assertThat(System.nanoTime()).as("the controller leads within 30 s").isLessThan(deadline);
        Thread.sleep(20);
      }
      Path tokenFile = dir.resolve("fin-join.token");
      Files.writeString(tokenFile, controller.joinToken() + "\n");
      var r =
          kairos(
                  "bench",
                  "submit",
                  "--server",
                  controller.url(),
                  "--token",
                  controller.adminToken(),
                  "--rate",
                  "50",
                  "--duration",
                  "2s",
                  "--agents",
                  "2",
                  "--task-time",
                  "50ms",
                  "--join-token-file",
                  tokenFile.toString(),
                  "--server-stats",
                  "-o",
                  "json")
              .assertOk();
      JsonNode report = JSON.readTree(r.out());
      assertThat(report.get("jobs_acknowledged").asLong()).isEqualTo(100);
      assertThat(report.get("agent_errors").asLong()).isZero();
      // Most of them ran and finished before the run ended; the rest end just after.
      assertThat(report.get("jobs_finished_by_agents").asLong()).isBetween(1L, 100L);
      assertThat(report.get("server_jobs_in_state").asDouble()).isGreaterThanOrEqualTo(100.0);
      assertThat(report.get("server_heap_mib").asLong()).isPositive();
      var jobs =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create(controller.url() + "/api/v1/jobs/1"))
                      .header("Authorization", "Bearer " + controller.adminToken())
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(jobs.body()).contains("\"SUCCEEDED\"");
    }
  }

  /**
   * Over HTTPS each simulated agent registers a key of its own, gets a node certificate, and
   * heartbeats on a TLS connection of its own presenting it: what real agents cost the controller.
   */
  @Test
  void agentsWithTheirOwnCertificatesHeartbeatOverTls() throws Exception {
    var security =
        new io.kairos.control.NetworkSecurity(
            io.kairos.control.NetworkSecurity.Mode.TLS,
            java.util.Optional.empty(),
            java.util.List.of(),
            java.util.Optional.empty(),
            false);
    try (var controller =
        Controller.start(
            ControllerConfig.single(dir.resolve("tls"), "127.0.0.1", 0).withSecurity(security))) {
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (!controller.replica().isLeaderReady() || !controller.isBootstrapped()) {
        assertThat(System.nanoTime()).as("the controller leads within 30 s").isLessThan(deadline);
        Thread.sleep(20);
      }
      Path tokenFile = dir.resolve("tls-join.token");
      Files.writeString(tokenFile, controller.joinToken() + "\n");
      var r =
          kairos(
                  "bench",
                  "heartbeats",
                  "--url",
                  controller.url(),
                  "--ca",
                  dir.resolve("tls/ca.pem").toString(),
                  "--join-token-file",
                  tokenFile.toString(),
                  "--agents",
                  "10",
                  "--duration",
                  "2s",
                  "--warmup",
                  "500ms",
                  "-o",
                  "json")
              .assertOk();
      JsonNode report = JSON.readTree(r.out());
      assertThat(report.get("ok").asLong()).isEqualTo(20);
      assertThat(report.get("errors").size()).isZero();
      // Each name is bound to its agent's key: a node certificate of the cluster CA.
      boolean keys =
          controller
              .replica()
              .stateMachine()
              .read(s -> s.nodes().stream().allMatch(n -> n.credential.startsWith("key:")));
      assertThat(keys).isTrue();
    }
  }

  @Test
  void aRefusedRegistrationStopsTheRunWithOneLine() {
    server.on(
        "POST",
        "/api/v1/agents/register",
        401,
        "{\"title\":\"Unauthorized\",\"status\":401,\"detail\":\"bad token\"}");
    var r =
        kairos(
            "bench",
            "heartbeats",
            "--url",
            server.url(),
            "--join-token",
            "nope",
            "--agents",
            "3",
            "--duration",
            "1s");
    r.assertError(1, "registration failed", "HTTP 401");
  }
}
