package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.LimitsView;
import io.kairos.protocol.TokenCreated;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * No user can starve the controller (issue 13, point 4): a real {@code kairos server} process with
 * a 256 MiB heap ({@link TestCluster}: -Xmx256m, -XX:+ExitOnOutOfMemoryError), one user (alice)
 * posting 10,000-job batches as fast as it can for 30 s (and, alongside, 1,000-job batches that do
 * fit), while another user (bob) submits single jobs. Alice is refused with 429 naming the limit
 * once over it; every one of bob's submits succeeds; {@code /readyz} stays 200; the controller
 * lives (no OutOfMemoryError) with its heap under the maximum; restarted with the same heap on the
 * same data it serves again within 60 s, with every job it had. Prints what it measured (FLOOD:
 * lines).
 *
 * <p>Before the limits this ran the controller out of heap in seconds, and the restart ran out
 * again replaying the log.
 */
class FloodIT {
  static final Duration FLOOD = Duration.ofSeconds(Long.getLong("kairos.flood.seconds", 30));
  static final Duration RESTART_WITHIN = Duration.ofSeconds(60);
  static final Pattern HEAP_USED =
      Pattern.compile("^jvm_memory_used_bytes\\{area=\"heap\",[^}]*} (\\S+)$", Pattern.MULTILINE);
  static final Pattern HEAP_MAX =
      Pattern.compile("^jvm_memory_max_bytes\\{area=\"heap\",[^}]*} (\\S+)$", Pattern.MULTILINE);

  @TempDir Path dir;
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  static String batch(String user, int n) {
    var sb = new StringBuilder(n * 80).append('[');
    for (int i = 0; i < n; i++) {
      if (i > 0) {
        sb.append(',');
      }
      sb.append("{\"name\":\"")
          .append(user)
          .append("-flood\",\"command\":[\"sleep\",\"600\"],\"env\":{\"HF_TOKEN\":\"hf_x")
          .append(i)
          .append("\"},\"gpus\":1}");
    }
    return sb.append(']').toString();
  }

  HttpResponse<String> post(String url, String token, byte[] body) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(url + "/api/v1/jobs"))
            .timeout(Duration.ofSeconds(60))
            .header("Authorization", "Bearer " + token)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> get(String url, String path, String token) throws Exception {
    var b = HttpRequest.newBuilder(URI.create(url + path)).timeout(Duration.ofSeconds(10));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  static long sum(Pattern p, String metrics) {
    long total = 0;
    var m = p.matcher(metrics);
    while (m.find()) {
      double v = Double.parseDouble(m.group(1));
      total += v > 0 ? (long) v : 0;
    }
    return total;
  }

  @Test
  void oneUsersFloodNeitherStarvesAnotherNorRunsTheControllerOutOfHeap() throws Exception {
    var cluster = TestCluster.start(dir);
    String url = cluster.url;
    String alice =
        TestCluster.JSON
            .readValue(cluster.post("/api/v1/tokens", "{\"user\":\"alice\"}"), TokenCreated.class)
            .token();
    String bob =
        TestCluster.JSON
            .readValue(cluster.post("/api/v1/tokens", "{\"user\":\"bob\"}"), TokenCreated.class)
            .token();
    var limits =
        TestCluster.JSON.readValue(get(url, "/api/v1/limits", alice).body(), LimitsView.class);
    System.out.printf(
        "FLOOD: limits with a %d MiB heap: maxJobsPerUser %d, maxLiveJobs %d, maxEndedJobs %d,"
            + " submitsPerSec %.0f, submitBurst %d%n",
        limits.heapMaxBytes() >> 20,
        limits.maxJobsPerUser(),
        limits.maxLiveJobs(),
        limits.maxEndedJobs(),
        limits.submitsPerSec(),
        limits.submitBurst());

    byte[] big = batch("alice", 10_000).getBytes(StandardCharsets.UTF_8);
    byte[] small = batch("alice", 1_000).getBytes(StandardCharsets.UTF_8);
    var stop = new AtomicBoolean();
    var statuses = new ConcurrentHashMap<String, AtomicLong>();
    var aliceAccepted = new AtomicLong();
    var floodRequests = new AtomicLong();
    var bobLatencyMs = new CopyOnWriteArrayList<Double>();
    var bobFailures = new CopyOnWriteArrayList<String>();
    var readyFailures = new CopyOnWriteArrayList<String>();
    var heapUsedMax = new AtomicLong();
    var heapMax = new AtomicLong();
    var threads = new ArrayList<Thread>();
    // Alice: three threads of 10,000-job batches, one of 1,000-job batches, as fast as replies
    // come.
    for (int t = 0; t < 4; t++) {
      byte[] body = t < 3 ? big : small;
      int jobs = t < 3 ? 10_000 : 1_000;
      threads.add(
          Thread.ofPlatform()
              .name("alice-" + t)
              .start(
                  () -> {
                    while (!stop.get()) {
                      try {
                        var r = post(url, alice, body);
                        floodRequests.incrementAndGet();
                        String key = r.statusCode() + " " + limitOf(r.body());
                        statuses.computeIfAbsent(key, k -> new AtomicLong()).incrementAndGet();
                        if (r.statusCode() == 201) {
                          aliceAccepted.addAndGet(jobs);
                        }
                      } catch (Exception e) {
                        statuses
                            .computeIfAbsent("error " + e, k -> new AtomicLong())
                            .incrementAndGet();
                      }
                    }
                  }));
    }
    // Bob: single jobs, one after the other.
    byte[] one =
        "{\"name\":\"bob-job\",\"command\":[\"sleep\",\"1\"],\"gpus\":1}"
            .getBytes(StandardCharsets.UTF_8);
    threads.add(
        Thread.ofPlatform()
            .name("bob")
            .start(
                () -> {
                  while (!stop.get()) {
                    long t0 = System.nanoTime();
                    try {
                      var r = post(url, bob, one);
                      bobLatencyMs.add((System.nanoTime() - t0) / 1e6);
                      if (r.statusCode() != 201) {
                        bobFailures.add(r.statusCode() + " " + r.body());
                      }
                      Thread.sleep(20);
                    } catch (InterruptedException e) {
                      return;
                    } catch (Exception e) {
                      bobFailures.add(e.toString());
                    }
                  }
                }));
    // The probes: readiness and heap, every 250 ms.
    threads.add(
        Thread.ofPlatform()
            .name("probe")
            .start(
                () -> {
                  while (!stop.get()) {
                    try {
                      var ready = get(url, "/readyz", null);
                      if (ready.statusCode() != 200) {
                        readyFailures.add(ready.statusCode() + " " + ready.body().strip());
                      }
                      String metrics = get(url, "/metrics", null).body();
                      heapUsedMax.accumulateAndGet(sum(HEAP_USED, metrics), Math::max);
                      heapMax.set(sum(HEAP_MAX, metrics));
                      Thread.sleep(250);
                    } catch (InterruptedException e) {
                      return;
                    } catch (Exception e) {
                      readyFailures.add(e.toString());
                    }
                  }
                }));
    Thread.sleep(FLOOD.toMillis());
    stop.set(true);
    for (Thread t : threads) {
      t.join(120_000);
    }

    var after =
        TestCluster.JSON.readValue(get(url, "/api/v1/limits", alice).body(), LimitsView.class);
    String metrics = get(url, "/metrics", null).body();
    long heapAfter = sum(HEAP_USED, metrics);
    var sorted = new ArrayList<>(bobLatencyMs);
    Collections.sort(sorted);
    System.out.printf(
        "FLOOD: %d s, alice sent %d requests; replies %s; alice's jobs accepted %d (her limit %d)%n",
        FLOOD.toSeconds(),
        floodRequests.get(),
        new java.util.TreeMap<>(statuses),
        aliceAccepted.get(),
        limits.maxJobsPerUser());
    System.out.printf(
        "FLOOD: bob %d submits, %d failed; latency p50 %.1f ms, p99 %.1f ms, max %.1f ms%n",
        sorted.size(),
        bobFailures.size(),
        percentile(sorted, 0.50),
        percentile(sorted, 0.99),
        sorted.isEmpty() ? 0 : sorted.getLast());
    System.out.printf(
        "FLOOD: heap used at most %d MiB of %d MiB during the flood, %d MiB after; live jobs %d;"
            + " readyz failures %d%n",
        heapUsedMax.get() >> 20,
        heapMax.get() >> 20,
        heapAfter >> 20,
        after.liveJobs(),
        readyFailures.size());

    assertThat(cluster.serverProcess().isAlive()).as("the controller lives").isTrue();
    assertThat(statuses.keySet())
        .as("alice was refused by a limit")
        .anyMatch(k -> k.startsWith("429 "));
    assertThat(statuses.keySet())
        .as("alice got only 201, 429 or 413 (a limit), never a 5xx")
        .allMatch(k -> k.startsWith("201") || k.startsWith("429 ") || k.startsWith("413 "));
    assertThat(aliceAccepted.get()).isLessThanOrEqualTo(limits.maxJobsPerUser());
    assertThat(bobFailures).as("bob's submits").isEmpty();
    assertThat(sorted).as("bob submitted throughout").hasSizeGreaterThan(10);
    assertThat(readyFailures).as("/readyz during the flood").isEmpty();
    assertThat(heapUsedMax.get()).isLessThan(heapMax.get());

    // Restart with the same heap on the same data: it serves again within 60 s, with every job.
    cluster.close();
    long t0 = System.nanoTime();
    var again = TestCluster.start(dir, cluster.port);
    try {
      long deadline = System.nanoTime() + RESTART_WITHIN.toNanos();
      HttpResponse<String> ready;
      while ((ready = get(again.url, "/readyz", null)).statusCode() != 200) {
        assertThat(System.nanoTime())
            .as(
                "ready again within %s; readyz: %s; log: %s",
                RESTART_WITHIN, ready.body(), TestCluster.tail(again.serverLog()))
            .isLessThan(deadline);
        Thread.sleep(100);
      }
      double restartSec = (System.nanoTime() - t0) / 1e9;
      var restored =
          TestCluster.JSON.readValue(
              get(again.url, "/api/v1/limits", alice).body(), LimitsView.class);
      System.out.printf(
          "FLOOD: restarted with the same heap: serving and ready in %.1f s, %d live jobs%n",
          restartSec, restored.liveJobs());
      assertThat(restartSec).isLessThan(RESTART_WITHIN.toSeconds());
      assertThat(restored.liveJobs()).isEqualTo(after.liveJobs());
      assertThat(post(again.url, bob, one).statusCode()).isEqualTo(201);
    } finally {
      again.close();
    }
  }

  static String limitOf(String body) {
    try {
      JsonNode p = TestCluster.JSON.readTree(body);
      return p.path("limit").asText("");
    } catch (Exception e) {
      return "";
    }
  }

  static double percentile(List<Double> sorted, double q) {
    if (sorted.isEmpty()) {
      return 0;
    }
    return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(q * sorted.size()) - 1));
  }
}
