package io.kairos.control.health;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.health.PhiAccrualDetector.Settings;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Properties of phi over generated settings and heartbeat histories (regular, jittery, with
 * outages, with bursts). Each case comes from its seed alone: a failure names the seed, and {@code
 * -Dkairos.propertySeeds=N} runs more of them.
 */
class PhiAccrualDetectorProperties {
  static LongStream seeds() {
    return LongStream.range(0, Long.getLong("kairos.propertySeeds", 500));
  }

  /** Settings from the whole valid range, edges included. */
  private static Settings settings(SplittableRandom r) {
    double threshold = r.nextInt(4) == 0 ? 0.01 + r.nextDouble() : 1 + r.nextDouble() * 20;
    int samples = r.nextInt(3) == 0 ? 1 + r.nextInt(3) : 1 + r.nextInt(1200);
    long minStd = r.nextInt(4) == 0 ? 1 : 1 + r.nextLong(1000);
    long pause = r.nextInt(4) == 0 ? 0 : r.nextLong(10_000);
    long estimate = r.nextInt(4) == 0 ? 1 + r.nextLong(3) : 1 + r.nextLong(5000);
    return new Settings(threshold, samples, minStd, pause, estimate);
  }

  /** The next gap between heartbeats: mostly near the period, some 0, some long outages. */
  private static long gap(SplittableRandom r, long periodMs) {
    return switch (r.nextInt(10)) {
      case 0 -> 0;
      case 1 -> r.nextLong(20 * periodMs + 1);
      case 2 -> r.nextLong(1, 1_000_000);
      default -> Math.max(0, periodMs + r.nextLong(-periodMs / 2, periodMs / 2 + 1));
    };
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void phiNeverDecreasesWithSilenceAndIsNeverNanOrNegative(long seed) {
    var r = new SplittableRandom(seed);
    Settings settings = settings(r);
    var d = new PhiAccrualDetector(settings);
    long periodMs = 1 + r.nextLong(5000);
    long t = r.nextLong(-1_000_000, 1_000_000); // any origin: only differences matter
    int heartbeats = r.nextInt(200);
    String replay = "seed " + seed + " (" + settings + ", period " + periodMs + " ms): ";
    for (int i = 0; i < heartbeats; i++) {
      t += gap(r, periodMs);
      d.heartbeat(t);
      assertThat(d.sampleCount()).as(replay + "samples").isBetween(1, settings.maxSampleSize());
    }
    // Walk forward from the last heartbeat in uneven steps (1 ms to long jumps).
    double previous = d.phi(t);
    long elapsed = 0;
    for (int step = 0; step < 2000; step++) {
      elapsed += r.nextInt(3) == 0 ? 1 : r.nextLong(1, 4 * periodMs + 2);
      double phi = d.phi(t + elapsed);
      String at = replay + "phi after " + elapsed + " ms of silence, " + d;
      assertThat(Double.isNaN(phi)).as(at + " is NaN").isFalse();
      assertThat(phi).as(at).isGreaterThanOrEqualTo(0.0);
      assertThat(phi).as(at + " fell from " + previous).isGreaterThanOrEqualTo(previous);
      assertThat(d.isAvailable(t + elapsed)).as(at).isEqualTo(phi < settings.threshold());
      previous = phi;
    }
  }
}
