package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.control.api.Safeguards;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Overload on a real controller whose bound on submits in flight is 4: a flood of concurrent
 * submits gets 503s with {@code Retry-After} past the bound, each read nothing and changed nothing;
 * every acknowledged job is in the state, the accepted requests were answered within the commit
 * timeout, and {@code /metrics} counts exactly the shed requests.
 */
class LoadSheddingTest {
  static final int BOUND = 4;
  static final int CLIENTS = 48;
  static final int JOBS_PER_REQUEST = 200;

  @TempDir static Path dir;
  static Controller controller;
  static TestApi admin;

  @BeforeAll
  static void start() throws Exception {
    System.setProperty(Safeguards.MAX_SUBMITS_IN_FLIGHT, Integer.toString(BOUND));
    try {
      controller =
          Controller.start(
              ControllerConfig.single(dir, "127.0.0.1", 0).withRunAs(TestApi.SINGLE_USER));
    } finally {
      System.clearProperty(Safeguards.MAX_SUBMITS_IN_FLIGHT);
    }
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    admin = new TestApi(controller.url(), controller.adminToken());
    // Lift the count limits (every job stays pending), as an admin would for a load test.
    var r =
        admin.put("/api/v1/limits", "{\"maxJobsPerUser\":1000000000,\"maxLiveJobs\":1000000000}");
    assertThat(r.status()).as(r.body()).isEqualTo(200);
  }

  @AfterAll
  static void stop() throws Exception {
    controller.close();
  }

  record Outcome(int status, String retryAfter, String body, long nanos) {}

  @Test
  void aFloodPastTheBoundIsShedWithRetryAfterAndNothingAcknowledgedIsLost() throws Exception {
    // A job no node can run (no agent, a model nobody has): it stays pending, so counts are exact.
    String one = "{\"command\":[\"true\"],\"gpus\":1,\"gpuModel\":\"NONE\"}";
    String batch =
        "[" + String.join(",", java.util.Collections.nCopies(JOBS_PER_REQUEST, one)) + "]";
    var all = new ArrayList<Outcome>();
    // Rounds until one sheds: on a quiet machine the first almost always does.
    for (int round = 0; round < 20 && all.stream().noneMatch(o -> o.status() == 503); round++) {
      all.addAll(flood(batch));
    }
    List<Outcome> shed = all.stream().filter(o -> o.status() == 503).toList();
    List<Outcome> accepted = all.stream().filter(o -> o.status() == 201).toList();
    assertThat(shed).as("requests past the bound of %d in flight", BOUND).isNotEmpty();
    assertThat(accepted).as("requests within the bound").isNotEmpty();
    assertThat(accepted.size() + shed.size())
        .as("every reply is 201 or 503: %s", all)
        .isEqualTo(all.size());
    for (Outcome o : shed) {
      assertThat(o.retryAfter()).as("Retry-After on %s", o.body()).isNotNull();
      assertThat(Long.parseLong(o.retryAfter())).isPositive();
      JsonNode problem = TestApi.JSON.readTree(o.body());
      assertThat(problem.path("status").asInt()).isEqualTo(503);
      assertThat(problem.path("detail").asText()).contains("in flight").contains("changed nothing");
    }
    // Accepted requests kept their latency: answered well within the commit timeout.
    long slowestMs = accepted.stream().mapToLong(Outcome::nanos).max().orElseThrow() / 1_000_000;
    assertThat(slowestMs).as("slowest accepted submit, ms").isLessThan(10_000);
    // Nothing acknowledged is lost, nothing shed was created.
    long created = 0;
    for (Outcome o : accepted) {
      for (JsonNode r : TestApi.JSON.readTree(o.body())) {
        long id = r.path("id").asLong();
        var job = admin.get("/api/v1/jobs/" + id);
        assertThat(job.status()).as("acknowledged job %d", id).isEqualTo(200);
        created++;
      }
    }
    assertThat(created).isEqualTo((long) accepted.size() * JOBS_PER_REQUEST);
    var pending = admin.get("/api/v1/jobs?state=PENDING&limit=1000000");
    assertThat(TestApi.JSON.readTree(pending.body()).size()).isEqualTo((int) created);
    // /metrics counts exactly the shed requests.
    String metrics = admin.get("/metrics").body();
    Matcher m =
        Pattern.compile("kairos_api_shed_total\\{[^}]*route=\"submit\"[^}]*} ([0-9.eE+]+)")
            .matcher(metrics);
    assertThat(m.find()).as("kairos_api_shed_total in /metrics").isTrue();
    assertThat((long) Double.parseDouble(m.group(1))).isEqualTo(shed.size());
  }

  /** {@link #CLIENTS} submits sent at once, each on its own connection. */
  private static List<Outcome> flood(String batch) throws Exception {
    var go = new CountDownLatch(1);
    var futures = new ArrayList<Future<Outcome>>();
    try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
      for (int i = 0; i < CLIENTS; i++) {
        futures.add(
            pool.submit(
                () -> {
                  try (var http =
                      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build()) {
                    var request =
                        HttpRequest.newBuilder(URI.create(controller.url() + "/api/v1/jobs"))
                            .header("Authorization", "Bearer " + controller.adminToken())
                            .header("Content-Type", "application/json")
                            .timeout(Duration.ofSeconds(60))
                            .POST(HttpRequest.BodyPublishers.ofString(batch))
                            .build();
                    go.await();
                    long t0 = System.nanoTime();
                    var r = http.send(request, HttpResponse.BodyHandlers.ofString());
                    return new Outcome(
                        r.statusCode(),
                        r.headers().firstValue("Retry-After").orElse(null),
                        r.body(),
                        System.nanoTime() - t0);
                  }
                }));
      }
      go.countDown();
      var outcomes = new ArrayList<Outcome>();
      for (var f : futures) {
        outcomes.add(f.get());
      }
      return outcomes;
    }
  }
}
