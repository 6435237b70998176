package io.kairos.cli;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * When the CLI tries a request again: only after a 429 or 503 that carries {@code Retry-After}. The
 * controller sends that header only with refusals it decided before doing anything (a shed submit,
 * a user's rate, the request budget), so sending the same request again cannot duplicate a job. The
 * wait is the larger of the server's {@code Retry-After} and an exponential backoff (0.5 s, 1 s, 2
 * s, 4 s) with up to 20% jitter, so that clients shed together do not return together; at most
 * {@link #MAX_RETRIES} tries more, and never when the server asks for more than {@link #MAX_WAIT}:
 * then the refusal is the answer.
 */
final class Retry {
  static final int MAX_RETRIES = 4;
  static final Duration MAX_WAIT = Duration.ofSeconds(30);
  private static final long BASE_BACKOFF_MS = 500;

  private Retry() {}

  /** How long to wait before retry number {@code retry} (from 1), or empty for no retry. */
  static Optional<Duration> after(ApiClient.Response response, int retry) {
    if ((response.status() != 429 && response.status() != 503) || retry > MAX_RETRIES) {
      return Optional.empty();
    }
    Optional<Long> seconds = response.header("Retry-After").flatMap(Retry::seconds);
    if (seconds.isEmpty() || seconds.get() > MAX_WAIT.toSeconds()) {
      return Optional.empty();
    }
    long backoffMs = BASE_BACKOFF_MS << (retry - 1);
    long ms = Math.max(seconds.get() * 1000, backoffMs);
    ms += ThreadLocalRandom.current().nextLong(ms / 5 + 1);
    return Optional.of(Duration.ofMillis(ms));
  }

  /** Tells the user why the command pauses (stderr: its output stays clean). */
  static void say(ApiClient.Response response, Duration wait) {
    System.err.printf(
        java.util.Locale.ROOT,
        "kairos: the controller answered %d (busy or rate-limited); trying again in %.1f s%n",
        response.status(),
        wait.toMillis() / 1000.0);
  }

  /** Retry-After in seconds (delta-seconds form; an HTTP date counts as 1 s). */
  static Optional<Long> seconds(String value) {
    String v = value.strip();
    if (v.isEmpty()) {
      return Optional.empty();
    }
    try {
      long s = Long.parseLong(v);
      return s < 0 ? Optional.empty() : Optional.of(s);
    } catch (NumberFormatException e) {
      return Optional.of(1L);
    }
  }
}
