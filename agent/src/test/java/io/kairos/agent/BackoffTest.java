package io.kairos.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class BackoffTest {
  static LongStream seeds() {
    return LongStream.range(0, 50);
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void delaysDoubleFromTheBaseWithJitterUpToTheCap(long seed) {
    var backoff = new Backoff(new SplittableRandom(seed));

    for (int failures = 1; failures <= 40; failures++) {
      long ceilingMs = Math.min(5_000, 100L << Math.min(failures - 1, 30));
      assertThat(backoff.delay(failures).toMillis())
          .as("seed %d, failure %d", seed, failures)
          .isBetween(ceilingMs / 2, ceilingMs);
    }
  }

  @Test
  void aRetryAfterLongerThanTheBackoffIsWaitedInFull() {
    var backoff = new Backoff(new SplittableRandom(3));
    assertThat(backoff.delay(1, 1_000)).isEqualTo(Duration.ofSeconds(1));
    assertThat(backoff.delay(3, 30_000)).isEqualTo(Duration.ofSeconds(30));
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void aShorterOrNoRetryAfterLeavesTheBackoff(long seed) {
    for (int failures = 1; failures <= 10; failures++) {
      Duration plain = new Backoff(new SplittableRandom(seed)).delay(failures);
      assertThat(new Backoff(new SplittableRandom(seed)).delay(failures, 0)).isEqualTo(plain);
      assertThat(new Backoff(new SplittableRandom(seed)).delay(failures, 10)).isEqualTo(plain);
    }
  }

  @Test
  void theSameSeedGivesTheSameDelays() {
    assertThat(delays(7)).isEqualTo(delays(7));
  }

  @Test
  void differentSeedsSpreadAgentsApart() {
    assertThat(delays(1)).isNotEqualTo(delays(2));
  }

  @Test
  void theFirstDelayIsAtMostTheBase() {
    assertThat(new Backoff(new SplittableRandom(3)).delay(1)).isLessThanOrEqualTo(Backoff.BASE);
  }

  @Test
  void zeroFailuresIsABug() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> new Backoff(new SplittableRandom(1)).delay(0))
        .withMessageContaining("failures");
  }

  private static List<Duration> delays(long seed) {
    var backoff = new Backoff(new SplittableRandom(seed));
    List<Duration> delays = new ArrayList<>();
    for (int failures = 1; failures <= 10; failures++) {
      delays.add(backoff.delay(failures));
    }
    return delays;
  }
}
