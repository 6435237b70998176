package io.kairos.control.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.Controller;
import io.kairos.control.ControllerConfig;
import io.kairos.control.Leaders;
import io.kairos.control.TestApi;
import io.kairos.protocol.UtilizationView;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The event stream, the utilization history and the dashboard's files on a real controller. */
class EventRoutesTest {
  @TempDir static Path dir;
  static Controller controller;
  static TestApi api;
  static final HttpClient HTTP = HttpClient.newHttpClient();

  @BeforeAll
  static void start() throws Exception {
    controller =
        Controller.start(
            ControllerConfig.single(dir, "127.0.0.1", 0).withRunAs(TestApi.SINGLE_USER));
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    api = new TestApi(controller.url(), controller.adminToken());
  }

  @AfterAll
  static void stop() throws Exception {
    controller.close();
  }

  static String nextEvent(Iterator<String> lines) {
    var frame = new StringBuilder();
    while (lines.hasNext()) {
      String line = lines.next();
      if (line.isEmpty()) {
        if (frame.toString().contains("event:")) {
          return frame.toString();
        }
        frame.setLength(0);
        continue;
      }
      frame.append(line).append('\n');
    }
    throw new AssertionError("the stream ended");
  }

  static long version(String frame) {
    return Long.parseLong(
        frame.lines().filter(l -> l.startsWith("id: ")).findFirst().orElseThrow().substring(4));
  }

  @Test
  void aSubmitSendsAChangedEventWithAHigherVersion() throws Exception {
    var request =
        HttpRequest.newBuilder(URI.create(controller.url() + "/api/v1/events"))
            .header("Authorization", "Bearer " + controller.adminToken())
            .GET()
            .build();
    HttpResponse<Stream<String>> reply =
        HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofLines()).get(10, TimeUnit.SECONDS);
    assertThat(reply.statusCode()).isEqualTo(200);
    assertThat(reply.headers().firstValue("Content-Type").orElse(""))
        .startsWith("text/event-stream");
    try (Stream<String> body = reply.body()) {
      Iterator<String> lines = body.iterator();
      String first = nextEvent(lines);
      assertThat(first).contains("event: changed");
      long before = version(first);
      assertThat(api.post("/api/v1/jobs", "{\"command\": [\"true\"]}").status()).isEqualTo(201);
      long after = version(nextEvent(lines));
      assertThat(after).isGreaterThan(before);
    }
  }

  @Test
  void theStreamNeedsAUserTokenInTheHeader() {
    assertThat(api.as(null).get("/api/v1/events").status()).isEqualTo(401);
    assertThat(api.as(controller.joinToken()).get("/api/v1/events").status()).isEqualTo(403);
    assertThat(api.as(null).get("/api/v1/events?token=" + controller.adminToken()).status())
        .as("no token in the query")
        .isEqualTo(401);
  }

  @Test
  void utilizationAnswersAWindowAndRefusesABadOne() {
    var ok = api.get("/api/v1/stats/utilization?window=6h");
    assertThat(ok.status()).as(ok.body()).isEqualTo(200);
    var view = ok.as(UtilizationView.class);
    assertThat(view.window()).isEqualTo("6h");
    assertThat(view.resolutionSec()).isEqualTo(10);
    var bad = api.get("/api/v1/stats/utilization?window=forever");
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.body()).contains("\"field\":\"window\"");
    assertThat(api.as(null).get("/api/v1/stats/utilization").status()).isEqualTo(401);
  }

  @Test
  void theDashboardIsServedWithoutATokenUnderAStrictContentSecurityPolicy() {
    var page = api.as(null).get("/");
    assertThat(page.status()).isEqualTo(200);
    assertThat(page.contentType()).startsWith("text/html");
    assertThat(page.body()).contains("<script type=\"module\" src=\"/js/main.js\">");
    String csp = page.raw().headers().firstValue("Content-Security-Policy").orElse("");
    assertThat(csp)
        .contains("script-src 'self'")
        .doesNotContain("unsafe-inline")
        .doesNotContain("unsafe-eval");
    var script = api.as(null).get("/js/main.js");
    assertThat(script.status()).isEqualTo(200);
    assertThat(script.contentType()).contains("javascript");
    assertThat(api.as(null).get("/api/v1/nodes").status())
        .as("data still needs a token")
        .isEqualTo(401);
    assertThat(api.as(null).get("/no-such-file.js").status()).isEqualTo(404);
  }
}
