package io.kairos.control;

import static io.kairos.control.BadInputTest.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.control.state.Limits;
import io.kairos.protocol.LimitsView;
import io.kairos.protocol.SubmitResult;
import io.kairos.protocol.TokenCreated;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The limits through the API of a real controller: set by the leader from its heap at start, read
 * by every user, changed by admins only; submits past a count limit, faster than a user's rate or
 * larger than a job may be are refused (429 with {@code Retry-After}, or 413) with a problem naming
 * the limit and its value, and change nothing, while other users' submits go on. Bad limits bodies,
 * listed and fuzzed, get a 4xx naming the field, never a 5xx, and leave the limits as they were.
 */
class LimitsApiTest {
  static final String JOB = "{\"command\":[\"sleep\",\"1\"],\"gpus\":1,\"gpuModel\":\"NOPE\"}";

  @TempDir static Path dir;
  static Controller controller;
  static TestApi admin;
  static TestApi alice;
  static TestApi bob;

  @BeforeAll
  static void start() throws Exception {
    controller =
        Controller.start(
            ControllerConfig.single(dir, "127.0.0.1", 0).withRunAs(TestApi.SINGLE_USER));
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    admin = new TestApi(controller.url(), controller.adminToken());
    alice = admin.as(token("alice"));
    bob = admin.as(token("bob"));
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!limits(admin).set()) {
      assertThat(System.nanoTime()).as("the leader sets its defaults").isLessThan(deadline);
      Thread.sleep(20);
    }
  }

  @AfterAll
  static void stop() throws Exception {
    controller.close();
  }

  /** Each test starts from the heap's defaults, with no job pending or running. */
  @BeforeEach
  void reset() {
    var r = admin.put("/api/v1/limits", "{\"reset\":true}");
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    for (TestApi who : List.of(alice, bob, admin)) {
      cancelAll(who);
    }
  }

  static String token(String user) {
    var r = admin.post("/api/v1/tokens", Map.of("user", user));
    assertThat(r.status()).as(r.body()).isEqualTo(201);
    return r.as(TokenCreated.class).token();
  }

  static LimitsView limits(TestApi who) {
    var r = who.get("/api/v1/limits");
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.as(LimitsView.class);
  }

  static void put(String json) {
    var r = admin.put("/api/v1/limits", json);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
  }

  static String batch(int n) {
    return "[" + String.join(",", java.util.Collections.nCopies(n, JOB)) + "]";
  }

  static long nextJobId() {
    return controller.replica().stateMachine().read(s -> s.nextJobId());
  }

  /** A 429 or 413 naming {@code limit} with {@code value}; nothing submitted. */
  static JsonNode assertRefused(TestApi.Reply r, int status, String limit, double value) {
    assertProblem(r, status, null);
    JsonNode p = r.as(JsonNode.class);
    assertThat(p.path("limit").asText()).as(r.body()).isEqualTo(limit);
    assertThat(p.path("limitValue").asDouble()).as(r.body()).isEqualTo(value);
    if (status == 429) {
      assertThat(r.raw().headers().firstValue("Retry-After"))
          .as("Retry-After")
          .hasValueSatisfying(v -> assertThat(Long.parseLong(v)).isPositive());
    }
    return p;
  }

  @Test
  void theLeaderSetsItsHeapDefaultsAndEveryUserReadsThem() {
    var seen = limits(alice);
    var heap = Limits.forHeap(Runtime.getRuntime().maxMemory());
    assertThat(seen.set()).isTrue();
    assertThat(seen.maxLiveJobs()).isEqualTo(heap.maxLiveJobs());
    assertThat(seen.maxJobsPerUser()).isEqualTo(heap.maxJobsPerUser());
    assertThat(seen.maxEndedJobs()).isEqualTo(heap.maxEndedJobs());
    assertThat(seen.maxJobBytes()).isEqualTo(Limits.DEFAULT_JOB_BYTES);
    assertThat(seen.heapMaxBytes()).isEqualTo(Runtime.getRuntime().maxMemory());
    assertThat(seen.defaults().maxLiveJobs()).isEqualTo(heap.maxLiveJobs());
    assertThat(alice.put("/api/v1/limits", "{\"maxLiveJobs\":5}").status()).isEqualTo(403);
    assertThat(limits(admin).maxLiveJobs()).isEqualTo(heap.maxLiveJobs());
  }

  @Test
  void aUserPastMaxJobsIsRefusedAsAWholeWhileAnotherStillSubmits() {
    put("{\"maxJobsPerUser\":5}");
    long before = nextJobId();
    assertThat(alice.post("/api/v1/jobs", batch(4)).status()).isEqualTo(201);
    long after4 = nextJobId();
    var over = alice.post("/api/v1/jobs", batch(2));
    var p = assertRefused(over, 429, "maxJobsPerUser", 5);
    assertThat(p.path("detail").asText()).contains("alice").contains("4").contains("2");
    assertThat(nextJobId()).as("nothing of the refused batch").isEqualTo(after4);
    assertThat(alice.post("/api/v1/jobs", JOB).status()).isEqualTo(201);
    assertRefused(alice.post("/api/v1/jobs", JOB), 429, "maxJobsPerUser", 5);
    // bob is not held back by alice.
    assertThat(bob.post("/api/v1/jobs", batch(5)).status()).isEqualTo(201);
    assertThat(nextJobId()).isEqualTo(before + 10);
    // A per-user override raises alice alone.
    put("{\"perUser\":{\"alice\":{\"maxJobs\":7}}}");
    assertThat(alice.post("/api/v1/jobs", batch(2)).status()).isEqualTo(201);
    assertRefused(bob.post("/api/v1/jobs", JOB), 429, "maxJobsPerUser", 5);
    assertThat(limits(alice).perUser()).containsKey("alice");
    put("{\"perUser\":{\"alice\":null}}");
    assertThat(limits(alice).perUser()).doesNotContainKey("alice");
    // Freed by cancelling.
    cancelAll(alice);
    cancelAll(bob);
  }

  @Test
  void theClusterCapRefusesEveryone() {
    long live = limits(admin).liveJobs();
    put("{\"maxLiveJobs\":" + (live + 3) + "}");
    assertThat(alice.post("/api/v1/jobs", batch(2)).status()).isEqualTo(201);
    assertRefused(bob.post("/api/v1/jobs", batch(2)), 429, "maxLiveJobs", live + 3);
    assertThat(bob.post("/api/v1/jobs", JOB).status()).isEqualTo(201);
    cancelAll(alice);
    cancelAll(bob);
  }

  @Test
  void aUserSubmittingFasterThanItsRateIsPacedAndTheAdminIsNot() {
    put("{\"perUser\":{\"alice\":{\"submitsPerSec\":0.5,\"submitBurst\":3}}}");
    assertRefused(alice.post("/api/v1/jobs", batch(4)), 413, "submitBurst", 3);
    for (int i = 0; i < 3; i++) {
      assertThat(alice.post("/api/v1/jobs", JOB).status()).isEqualTo(201);
    }
    long before = nextJobId();
    var paced = alice.post("/api/v1/jobs", JOB);
    assertRefused(paced, 429, "submitsPerSec", 0.5);
    assertThat(Long.parseLong(paced.raw().headers().firstValue("Retry-After").orElseThrow()))
        .isBetween(1L, 2L);
    assertThat(nextJobId()).isEqualTo(before);
    assertThat(bob.post("/api/v1/jobs", batch(20)).status()).as("bob's own bucket").isEqualTo(201);
    put("{\"submitsPerSec\":0.01,\"submitBurst\":1}");
    for (int i = 0; i < 3; i++) {
      assertThat(admin.post("/api/v1/jobs", batch(5)).status())
          .as("admins are not paced")
          .isEqualTo(201);
    }
    cancelAll(alice);
    cancelAll(bob);
    cancelAll(admin);
  }

  @Test
  void aJobLargerThanMaxJobBytesIs413NamingItsLargestPart() {
    put("{\"maxJobBytes\":2048}");
    String big =
        "{\"command\":[\"true\"],\"env\":{\"BLOB\":\"" + "x".repeat(3000) + "\"},\"cpus\":1}";
    long before = nextJobId();
    var one = alice.post("/api/v1/jobs", big);
    assertRefused(one, 413, "maxJobBytes", 2048);
    assertThat(one.as(JsonNode.class).path("field").asText()).isEqualTo("env");
    var inBatch = alice.post("/api/v1/jobs", "[" + JOB + "," + big + "]");
    assertThat(inBatch.as(JsonNode.class).path("field").asText()).isEqualTo("[1].env");
    String longCommand = "{\"command\":[\"echo\",\"" + "y".repeat(3000) + "\"],\"cpus\":1}";
    assertThat(alice.post("/api/v1/jobs", longCommand).as(JsonNode.class).path("field").asText())
        .isEqualTo("command");
    assertThat(nextJobId()).isEqualTo(before);
  }

  @Test
  void loweringMaxEndedJobsForgetsTheOldestEndedJobs() {
    long first = alice.post("/api/v1/jobs", JOB).as(SubmitResult.class).id();
    cancelAll(alice);
    assertThat(admin.get("/api/v1/jobs/" + first).status()).isEqualTo(200);
    long ended = limits(admin).endedJobs();
    // Filling the ended jobs past the limit forgets the oldest first.
    put("{\"maxEndedJobs\":" + Math.max(Limits.MIN_ENDED_JOBS, ended) + "}");
    int more = (int) (Math.max(Limits.MIN_ENDED_JOBS, ended) - ended) + 5;
    for (int done = 0; done < more; done += 500) {
      assertThat(bob.post("/api/v1/jobs", batch(Math.min(500, more - done))).status())
          .isEqualTo(201);
      cancelAll(bob);
    }
    // Forgotten by the state; shown from the accounting store (the state machine wrote it there
    // before it forgot it).
    boolean kept = controller.replica().stateMachine().read(st -> st.job(first).isPresent());
    assertThat(kept).as("still in the replicated state").isFalse();
    var fromStore = admin.get("/api/v1/jobs/" + first);
    assertThat(fromStore.status()).as(fromStore.body()).isEqualTo(200);
    assertThat(fromStore.as(io.kairos.protocol.JobView.class).state())
        .isEqualTo(io.kairos.protocol.JobState.CANCELLED);
    assertThat(limits(admin).endedJobs()).isLessThanOrEqualTo(limits(admin).maxEndedJobs());
    // A dependency on a forgotten job is refused at once.
    var r =
        alice.post(
            "/api/v1/jobs", "{\"command\":[\"true\"],\"dependency\":\"afterany:" + first + "\"}");
    assertProblem(r, 400, "dependency");
  }

  /** A body without a Content-Length (chunked) is admitted once read and measured. */
  @Test
  void aChunkedSubmitIsMeasuredOnceRead() throws Exception {
    byte[] body = batch(3).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    var reply =
        java.net.http.HttpClient.newHttpClient()
            .send(
                java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create(controller.url() + "/api/v1/jobs"))
                    .header("Authorization", "Bearer " + alice.token())
                    .header("Content-Type", "application/json")
                    .POST(
                        java.net.http.HttpRequest.BodyPublishers.ofInputStream(
                            () -> new java.io.ByteArrayInputStream(body)))
                    .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    assertThat(reply.statusCode()).as(reply.body()).isEqualTo(201);
  }

  static void cancelAll(TestApi who) {
    var mine = who.get("/api/v1/jobs?state=PENDING,RUNNING").as(JsonNode.class);
    String user = who.get("/api/v1/whoami").as(JsonNode.class).path("user").asText();
    for (JsonNode j : mine) {
      if (j.path("user").asText().equals(user)) {
        var r = who.post("/api/v1/jobs/" + j.path("id").asLong() + "/cancel", "");
        assertThat(r.status()).as(r.body()).isEqualTo(200);
      }
    }
  }

  // --- bad limits ----------------------------------------------------------------------------

  record Bad(String name, String body, int status, String field) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Bad> badBodies() {
    return Stream.of(
        new Bad("empty body", "", 400, null),
        new Bad("not JSON", "{maxLiveJobs:", 400, null),
        new Bad("an array", "[1]", 400, null),
        new Bad("null", "null", 400, null),
        new Bad("unknown field", "{\"maxJobs\":3}", 400, "maxJobs"),
        new Bad("read-only field", "{\"liveJobs\":3}", 400, "liveJobs"),
        new Bad("zero live jobs", "{\"maxLiveJobs\":0}", 400, "maxLiveJobs"),
        new Bad("negative per user", "{\"maxJobsPerUser\":-1}", 400, "maxJobsPerUser"),
        new Bad("a string", "{\"maxJobsPerUser\":\"10\"}", 400, "maxJobsPerUser"),
        new Bad("a fraction", "{\"maxLiveJobs\":1.5}", 400, "maxLiveJobs"),
        new Bad("too many ended", "{\"maxEndedJobs\":2000000000}", 400, "maxEndedJobs"),
        new Bad("too few ended", "{\"maxEndedJobs\":10}", 400, "maxEndedJobs"),
        new Bad("tiny jobs", "{\"maxJobBytes\":10}", 400, "maxJobBytes"),
        new Bad("huge jobs", "{\"maxJobBytes\":1000000000}", 400, "maxJobBytes"),
        new Bad("zero rate", "{\"submitsPerSec\":0}", 400, "submitsPerSec"),
        new Bad("negative rate", "{\"submitsPerSec\":-3.5}", 400, "submitsPerSec"),
        new Bad("huge rate", "{\"submitsPerSec\":1e300}", 400, "submitsPerSec"),
        new Bad("zero burst", "{\"submitBurst\":0}", 400, "submitBurst"),
        new Bad("too long a number", "{\"maxLiveJobs\":1" + "0".repeat(50) + "}", 400, null),
        new Bad("bad user name", "{\"perUser\":{\"../x\":{\"maxJobs\":1}}}", 400, "perUser"),
        new Bad(
            "per-user zero",
            "{\"perUser\":{\"alice\":{\"maxJobs\":0}}}",
            400,
            "perUser.alice.maxJobs"),
        new Bad(
            "per-user rate",
            "{\"perUser\":{\"alice\":{\"submitsPerSec\":-1}}}",
            400,
            "perUser.alice.submitsPerSec"),
        new Bad(
            "per-user unknown",
            "{\"perUser\":{\"alice\":{\"maxLiveJobs\":1}}}",
            400,
            "perUser.alice.maxLiveJobs"),
        new Bad("per-user a list", "{\"perUser\":[1]}", 400, "perUser"),
        new Bad("reset a string", "{\"reset\":\"yes\"}", 400, "reset"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badBodies")
  void badLimitsAre4xxNamingTheFieldAndChangeNothing(Bad bad) {
    String before = admin.get("/api/v1/limits").body();
    var r = admin.put("/api/v1/limits", bad.body());
    assertProblem(r, bad.status(), bad.field());
    assertThat(admin.get("/api/v1/limits").body()).isEqualTo(before);
  }

  /**
   * Seeded random limits bodies: each is either accepted (200, and reads back as sent) or refused
   * with a 4xx problem that leaves the limits unchanged; never a 5xx. {@code -Dkairos.fuzz.seed=S}
   * replays a run.
   */
  @Test
  void fuzzedLimitsAreAcceptedOrRefusedCleanly() {
    long seed = Long.getLong("kairos.fuzz.seed", 20_260_313L);
    var rnd = new Random(seed);
    String[] fields = {
      "maxJobsPerUser",
      "maxLiveJobs",
      "maxEndedJobs",
      "maxJobBytes",
      "submitsPerSec",
      "submitBurst",
      "perUser",
      "reset",
      "bogus"
    };
    int accepted = 0;
    for (int i = 0; i < 300; i++) {
      var parts = new ArrayList<String>();
      for (String f : fields) {
        if (rnd.nextInt(4) == 0) {
          parts.add("\"" + f + "\":" + (f.equals("perUser") ? perUser(rnd) : value(rnd)));
        }
      }
      String body = rnd.nextInt(30) == 0 ? value(rnd) : "{" + String.join(",", parts) + "}";
      String before = admin.get("/api/v1/limits").body();
      var r = admin.put("/api/v1/limits", body);
      String where =
          "fuzz seed " + seed + ", case " + i + ": " + body + " -> " + r.status() + " " + r.body();
      if (r.status() == 200) {
        accepted++;
        continue;
      }
      try {
        assertProblem(r, -1, null);
        assertThat(admin.get("/api/v1/limits").body()).isEqualTo(before);
      } catch (AssertionError e) {
        fail(where + "\n" + e.getMessage(), e);
      }
    }
    assertThat(accepted).as("the fuzz also produces valid bodies").isBetween(1, 299);
    // What the fuzz left must still be workable for the other tests (which reset first anyway).
    assertThat(admin.put("/api/v1/limits", "{\"reset\":true}").status()).isEqualTo(200);
  }

  private static String value(Random rnd) {
    return switch (rnd.nextInt(12)) {
      case 0 -> "null";
      case 1 -> "-1";
      case 2 -> "0";
      case 3 -> Long.toString(1 + rnd.nextInt(100_000));
      case 4 -> Long.toString(rnd.nextLong());
      case 5 -> "1.5";
      case 6 -> "\"text\"";
      case 7 -> "true";
      case 8 -> "[]";
      case 9 -> "{}";
      case 10 -> "1e" + rnd.nextInt(400);
      default -> Long.toString(1000 + rnd.nextInt(1_000_000));
    };
  }

  private static String perUser(Random rnd) {
    if (rnd.nextInt(5) == 0) {
      return value(rnd);
    }
    String user = List.of("alice", "bob", "", "a b", "x".repeat(70), "carol").get(rnd.nextInt(6));
    String inner =
        rnd.nextInt(5) == 0
            ? value(rnd)
            : "{\""
                + List.of("maxJobs", "submitsPerSec", "submitBurst", "other").get(rnd.nextInt(4))
                + "\":"
                + value(rnd)
                + "}";
    return "{\"" + user + "\":" + inner + "}";
  }
}
