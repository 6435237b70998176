package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kairos.cli.FakeKairos.Reply;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code kairos bench submit} and {@code bench latency} against the fake controller. */
class BenchCommandTest extends ClientTestSupport {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final AtomicLong ids = new AtomicLong();

  @BeforeEach
  void acceptSubmits() {
    server.on("GET", "/api/v1/whoami", 200, "{\"user\":\"alice\",\"admin\":true}");
    server.on(
        "POST",
        "/api/v1/jobs",
        r -> {
          JsonNode body = r.json();
          if (body.isArray()) {
            var replies = new StringBuilder("[");
            for (int i = 0; i < body.size(); i++) {
              replies
                  .append(i == 0 ? "" : ",")
                  .append("{\"id\":")
                  .append(ids.incrementAndGet())
                  .append('}');
            }
            return Reply.json(201, replies.append(']').toString());
          }
          return Reply.json(201, "{\"id\":" + ids.incrementAndGet() + "}");
        });
  }

  private List<FakeKairos.Request> posts() {
    return server.requests().stream().filter(r -> r.method().equals("POST")).toList();
  }

  @Test
  void submitSendsCountJobsInBatchesAndReports() throws IOException {
    var r =
        kairos(
                "bench",
                "submit",
                "--count",
                "23",
                "--batch",
                "5",
                "--concurrency",
                "4",
                "-o",
                "json")
            .assertOk();
    JsonNode report = JSON.readTree(r.out());
    assertThat(report.get("requests").asLong()).isEqualTo(5);
    assertThat(report.get("jobs_acknowledged").asLong()).isEqualTo(23);
    assertThat(report.get("errors").asLong()).isZero();
    assertThat(report.get("rate_jobs_per_s").asDouble()).isPositive();
    for (String p : List.of("p50", "p90", "p99", "p99_9", "max")) {
      assertThat(report.get("latency_ms").get(p).isNumber()).as(p).isTrue();
    }
    assertThat(posts()).hasSize(5);
    assertThat(posts()).extracting(p -> p.json().size()).containsExactlyInAnyOrder(5, 5, 5, 5, 3);
    JsonNode one = posts().getFirst().json().get(0);
    assertThat(one)
        .isEqualTo(JSON.readTree("{\"name\":\"bench\",\"command\":[\"true\"],\"gpus\":1}"));
    assertThat(posts().getFirst().header("Authorization")).isEqualTo("Bearer " + TOKEN);
  }

  @Test
  void submitAtAFixedRateSendsSingleObjectsAndPrintsATextReport() {
    var r =
        kairos("bench", "submit", "--count", "10", "--rate", "500", "--gpus", "0", "--cpus", "1")
            .assertOk();
    assertThat(posts()).hasSize(10);
    assertThat(posts().getFirst().json().isObject()).isTrue();
    assertThat(r.out())
        .contains(
            "acknowledged  10 jobs",
            "errors        0 requests",
            "rate ",
            "latency (ms)  p50 ",
            "p99.9 ",
            "max ");
  }

  @Test
  void errorsAreCountedAndTheFirstIsShown() {
    var n = new AtomicInteger();
    server.on(
        "POST",
        "/api/v1/jobs",
        r ->
            n.incrementAndGet() % 2 == 0
                ? Reply.problem(
                    503, "{\"title\":\"Unavailable\",\"status\":503,\"detail\":\"no leader\"}")
                : Reply.json(201, "{\"id\":1}"));
    var r = kairos("bench", "submit", "--count", "6", "--concurrency", "1");
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.out())
        .contains("acknowledged  3 jobs", "errors        3 requests", "first error   no leader");
  }

  @Test
  void submitForADurationStops() throws IOException {
    var r =
        kairos("bench", "submit", "--duration", "0.2", "--rate", "100", "-o", "json").assertOk();
    long requests = JSON.readTree(r.out()).get("requests").asLong();
    assertThat(requests).isBetween(15L, 21L);
  }

  /** A long run is cut into windows by due time, each with its own figures (sustained tails). */
  @Test
  void aDurationWithAUnitRunsAndPrintsEachWindow() {
    var r =
        kairos("bench", "submit", "--duration", "1500ms", "--rate", "40", "--window", "500ms")
            .assertOk();
    assertThat(r.out().lines().filter(l -> l.startsWith("window ")).count()).isEqualTo(3);
    assertThat(r.out()).contains("acknowledged  60 jobs");
    assertThat(kairos("bench", "submit", "--duration", "ten minutes").code()).isEqualTo(2);
  }

  @Test
  void latencyMeasuresSubmitToRunningBothWays() throws IOException {
    var polls = new ConcurrentHashMap<Long, AtomicInteger>();
    server.on("GET", "/api/v1/jobs/1", r -> state(1, polls));
    server.on("GET", "/api/v1/jobs/2", r -> state(2, polls));
    server.on("GET", "/api/v1/jobs/3", r -> state(3, polls));
    var r = kairos("bench", "latency", "--count", "3", "-o", "json").assertOk();
    JsonNode report = JSON.readTree(r.out());
    assertThat(report.get("jobs").asInt()).isEqualTo(3);
    assertThat(report.get("server_ms").get("p50").asDouble()).isEqualTo(12.0);
    assertThat(report.get("server_ms").get("max").asDouble()).isEqualTo(12.0);
    assertThat(report.get("client_ms").get("p99").asDouble()).isPositive();
    assertThat(report.get("ended_ms").get("p50").asDouble())
        .isGreaterThanOrEqualTo(report.get("client_ms").get("p50").asDouble());
    JsonNode sent = posts().getFirst().json();
    assertThat(sent)
        .isEqualTo(
            JSON.readTree(
                "{\"name\":\"bench-latency\",\"command\":[\"true\"],\"gpus\":0,\"cpus\":1}"));
  }

  @Test
  void latencyTextShowsServerAndClientRows() {
    var polls = new ConcurrentHashMap<Long, AtomicInteger>();
    server.on("GET", "/api/v1/jobs/1", r -> state(1, polls));
    var r = kairos("bench", "latency", "--count", "1").assertOk();
    assertThat(r.out().lines())
        .anyMatch(l -> l.startsWith("server stamped   12.0  12.0  12.0  12.0"));
    assertThat(r.out().lines()).anyMatch(l -> l.startsWith("client observed "));
    assertThat(r.out().lines()).anyMatch(l -> l.startsWith("client to ended "));
  }

  /** PENDING on the first poll, RUNNING (started 12 ms after submit) next, then SUCCEEDED. */
  private static Reply state(long id, ConcurrentHashMap<Long, AtomicInteger> polls) {
    int n = polls.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
    String times = ",\"submitTime\":\"2026-03-28T11:55:00.000Z\"";
    String started = ",\"startTime\":\"2026-03-28T11:55:00.012Z\"";
    return Reply.json(
        200,
        switch (n) {
          case 1 -> job(id, "PENDING", "");
          case 2 ->
              job(id, "RUNNING", started)
                  .replace("\"submitTime\":\"2026-03-28T11:55:00Z\",", "")
                  .replace("\"requeues\":0", "\"requeues\":0" + times);
          default ->
              job(id, "SUCCEEDED", started)
                  .replace("\"submitTime\":\"2026-03-28T11:55:00Z\",", "")
                  .replace("\"requeues\":0", "\"requeues\":0" + times);
        });
  }
}
