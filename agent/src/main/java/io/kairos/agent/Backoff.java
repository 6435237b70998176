package io.kairos.agent;

import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * Retry delays: exponential from {@link #BASE} up to {@link #CAP}, with "equal jitter" (half the
 * delay fixed, half random) so that agents restarted together do not retry together, yet never
 * retry in a tight loop.
 *
 * <p>Example: failures 1, 2, 3, ... give delays in [50, 100], [100, 200], [200, 400] ms, ..., then
 * [2.5, 5] s from the seventh on.
 *
 * <p>Pure apart from the injected generator; not thread-safe when the generator is not.
 */
public final class Backoff {
  public static final Duration BASE = Duration.ofMillis(100);
  public static final Duration CAP = Duration.ofSeconds(5);

  private final RandomGenerator random;

  public Backoff(RandomGenerator random) {
    this.random = Objects.requireNonNull(random, "random");
  }

  /**
   * As {@link #delay(int)}, but not shorter than the controller asked ({@code Retry-After}, in
   * milliseconds; 0 when it did not): a controller that sheds load says when to come back.
   */
  public Duration delay(int failures, long retryAfterMs) {
    Duration backoff = delay(failures);
    return retryAfterMs > backoff.toMillis() ? Duration.ofMillis(retryAfterMs) : backoff;
  }

  /** The delay before the next try after {@code failures} failures in a row (1 or more). */
  public Duration delay(int failures) {
    if (failures < 1) {
      throw new IllegalArgumentException("failures must be >= 1, got " + failures);
    }
    int doublings = Math.min(failures - 1, 30);
    long ceilingMs = Math.min(CAP.toMillis(), BASE.toMillis() << doublings);
    long half = ceilingMs / 2;
    return Duration.ofMillis(ceilingMs - half + random.nextLong(half + 1));
  }
}
