package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.cli.FakeKairos.Reply;
import java.net.URI;
import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The CLI tries again only after a 429 or 503 that carries Retry-After (the controller changed
 * nothing), not sooner than it says, a bounded number of times.
 */
class RetryTest extends ClientTestSupport {
  private static final String WHOAMI = "{\"user\":\"alice\",\"admin\":false}";
  private static final String SHED =
      "{\"type\":\"about:blank\",\"title\":\"Unavailable\",\"status\":503,"
          + "\"detail\":\"the controller is at its bound of 256 submits in flight\"}";

  record Case(String name, int status, String retryAfter, int retry, Long minMs, Long maxMs) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Case> cases() {
    return Stream.of(
        new Case("503 with Retry-After 1: waits at least 1 s", 503, "1", 1, 1000L, 1200L),
        new Case("429 with Retry-After 2: waits at least 2 s", 429, "2", 1, 2000L, 2400L),
        new Case("Retry-After 0: the backoff still applies", 503, "0", 1, 500L, 600L),
        new Case("the backoff doubles: fourth retry", 503, "0", 4, 4000L, 4800L),
        new Case(
            "an HTTP date counts as 1 s", 503, "Wed, 21 Oct 2026 07:28:00 GMT", 1, 1000L, 1200L),
        new Case("no fifth retry", 503, "1", 5, null, null),
        new Case(
            "503 without Retry-After: may have been applied, no retry", 503, null, 1, null, null),
        new Case("500: no retry", 500, "1", 1, null, null),
        new Case("a wait above 30 s: the refusal is the answer", 429, "31", 1, null, null),
        new Case("a negative Retry-After is ignored", 503, "-1", 1, null, null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void whenToTryAgain(Case c) {
    Map<String, List<String>> headers =
        c.retryAfter() == null ? Map.of() : Map.of("Retry-After", List.of(c.retryAfter()));
    var response =
        new ApiClient.Response(
            c.status(),
            HttpHeaders.of(headers, (a, b) -> true),
            "{}".getBytes(StandardCharsets.UTF_8),
            URI.create("http://127.0.0.1:1/api/v1/jobs"));
    Optional<Duration> wait = Retry.after(response, c.retry());
    if (c.minMs() == null) {
      assertThat(wait).isEmpty();
    } else {
      assertThat(wait)
          .hasValueSatisfying(w -> assertThat(w.toMillis()).isBetween(c.minMs(), c.maxMs()));
    }
  }

  @Test
  void aShedRequestIsSentAgainAfterItsRetryAfterAndSucceeds() {
    var calls = new AtomicInteger();
    server.on(
        "GET",
        "/api/v1/whoami",
        r ->
            calls.incrementAndGet() == 1
                ? new Reply(
                    503,
                    Map.of("Content-Type", "application/problem+json", "Retry-After", "1"),
                    SHED.getBytes(StandardCharsets.UTF_8))
                : Reply.json(200, WHOAMI));
    long t0 = System.nanoTime();
    kairos("whoami").assertOk();
    assertThat(calls).hasValue(2);
    assertThat(Duration.ofNanos(System.nanoTime() - t0))
        .isGreaterThanOrEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void a503WithoutRetryAfterIsNotSentAgain() {
    server.on("POST", "/api/v1/jobs", 503, SHED);
    kairos("submit", "--", "true").assertError(1, "submits in flight");
    assertThat(server.requests()).hasSize(1);
  }
}
