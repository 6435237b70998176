package io.kairos.control.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kairos.control.health.PhiAccrualDetector.Settings;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The detector's arithmetic against values computed by hand (and checked in Python with the same
 * IEEE doubles), and its detection times under Akka's defaults.
 */
class PhiAccrualDetectorTest {
  private static final Settings AKKA = Settings.AKKA_DEFAULTS;

  /** A detector fed {@code count} heartbeats from t=0, {@code intervalsMs} repeated in turn. */
  private static PhiAccrualDetector fed(int count, long... intervalsMs) {
    var d = new PhiAccrualDetector(AKKA);
    long t = 0;
    d.heartbeat(t);
    for (int i = 1; i < count; i++) {
      t += intervalsMs[(i - 1) % intervalsMs.length];
      d.heartbeat(t);
    }
    return d;
  }

  /** The first whole millisecond of silence at which phi reaches {@code level}. */
  private static long silenceUntil(PhiAccrualDetector d, double level) {
    long last = d.lastHeartbeatMs();
    for (long t = last; t < last + 600_000; t++) {
      if (d.phi(t) >= level) {
        return t - last;
      }
    }
    throw new AssertionError("phi never reached " + level);
  }

  @Test
  void phiFollowsTheLogisticApproximationOfTheNormalTail() {
    // y = (t - mean) / std; 1 - F(y) = e / (1 + e), e = exp(-y (1.5976 + 0.070566 y^2)).
    // y = 0: F = 1/2, phi = log10(2).
    assertThat(PhiAccrualDetector.phi(1000, 1000, 100)).isCloseTo(Math.log10(2), within(1e-12));
    // y = 1: e = exp(-1.668166) = 0.188610, phi = -log10(0.188610 / 1.188610) = 0.799508.
    assertThat(PhiAccrualDetector.phi(1100, 1000, 100)).isCloseTo(0.799508, within(1e-6));
    // y = 2: e = exp(-3.759728) = 0.023292, phi = -log10(0.022762) = 1.642828.
    assertThat(PhiAccrualDetector.phi(1200, 1000, 100)).isCloseTo(1.642828, within(1e-6));
    // y = 3: e = exp(-6.697882) = 0.0012322, phi = 2.909475 (the exact normal tail gives 2.8697).
    assertThat(PhiAccrualDetector.phi(1300, 1000, 100)).isCloseTo(2.909475, within(1e-6));
    // y = -1: the other branch, -log10(1 - 1 / (1 + e)) with e = exp(1.668166) = 5.302; 0.075033.
    assertThat(PhiAccrualDetector.phi(900, 1000, 100)).isCloseTo(0.075033, within(1e-6));
    // Far in the tail e underflows to 0: phi is +Infinity, not NaN.
    assertThat(PhiAccrualDetector.phi(1_000_000, 1000, 100)).isEqualTo(Double.POSITIVE_INFINITY);
    // Far before the mean: 0, not -0.0.
    assertThat(PhiAccrualDetector.phi(0, 1_000_000, 100)).isEqualTo(0.0);
  }

  @Test
  void phiIsZeroBeforeTheFirstHeartbeat() {
    var d = new PhiAccrualDetector(AKKA);
    assertThat(d.isMonitoring()).isFalse();
    assertThat(d.phi(123_456)).isZero();
    assertThat(d.isAvailable(123_456)).isTrue();
  }

  @Test
  void theFirstHeartbeatSeedsMeanEstimateAndDeviationAQuarterOfIt() {
    var d = fed(1);
    // Seeds 750 and 1250: mean 1000, variance (750^2 + 1250^2) / 2 - 1000^2 = 62,500, std 250.
    assertThat(d.intervals()).containsExactly(750, 1250);
    assertThat(d.mean()).isEqualTo(1000.0);
    assertThat(d.stdDeviation()).isEqualTo(250.0);
    // The shifted mean is 1000 + 3000: phi there is log10(2); at y = 2 (4500 ms), 1.642828.
    assertThat(d.phi(4000)).isCloseTo(Math.log10(2), within(1e-12));
    assertThat(d.phi(4500)).isCloseTo(1.642828, within(1e-6));
  }

  @Test
  void aNodeHeardFromOnceIsDown5307MsLater() {
    // Mean 4000 (1000 + pause), std 250: phi 8 at y = 5.2265, 4000 + 1306.6.
    var d = fed(1);
    assertThat(silenceUntil(d, 8.0)).isEqualTo(5307);
  }

  @Test
  void steadyOneSecondHeartbeatsThenSilenceIsDetected4523MsAfterTheLastHeartbeat() {
    // 100 heartbeats 1000 ms apart: 99 intervals of 1000 plus the seeds 750 and 1250, so mean
    // 1000 and std sqrt(125,000 / 101) = 35 < 100: the floor applies. Phi = 8 where
    // y (1.5976 + 0.070566 y^2) = ln(10^8 - 1), y = 5.2262: 4000 + 522.6 ms. Phi 3 at y = 3.059.
    var d = fed(100, 1000);
    assertThat(d.mean()).isEqualTo(1000.0);
    assertThat(d.stdDeviation()).isEqualTo(100.0);
    long last = d.lastHeartbeatMs();
    assertThat(silenceUntil(d, 8.0)).isEqualTo(4523);
    assertThat(d.isAvailable(last + 4522)).isTrue();
    assertThat(d.isAvailable(last + 4523)).isFalse();
    assertThat(silenceUntil(d, 3.0)).isEqualTo(4306);
  }

  @Test
  void jitteryHeartbeatsRaiseTheDeviationAndDelayDetectionTo6594Ms() {
    // Intervals alternate 500 and 1500 ms: the same mean, std 496.3 (seeds included), so the
    // tail is five times wider: phi 8 at 4000 + 5.2262 * 496.3 = 6594 ms instead of 4523.
    var d = fed(101, 500, 1500);
    assertThat(d.mean()).isEqualTo(1000.0);
    assertThat(d.stdDeviation()).isCloseTo(496.31, within(0.01));
    assertThat(silenceUntil(d, 8.0)).isEqualTo(6594);
    assertThat(silenceUntil(d, 8.0)).isGreaterThan(silenceUntil(fed(101, 1000), 8.0));
  }

  @Test
  void theHeartbeatEndingAnOutageIsNotASample() {
    var d = fed(10, 1000);
    int before = d.sampleCount();
    long last = d.lastHeartbeatMs();
    d.heartbeat(last + 60_000); // phi was far above 8: not an interval of the live node
    assertThat(d.sampleCount()).isEqualTo(before);
    assertThat(d.mean()).isEqualTo(1000.0);
    assertThat(d.isAvailable(last + 60_000)).isTrue(); // the clock restarts from this heartbeat
    d.heartbeat(last + 61_000);
    assertThat(d.sampleCount()).isEqualTo(before + 1);
  }

  @Test
  void onlyTheLastMaxSampleSizeIntervalsCount() {
    var d = new PhiAccrualDetector(new Settings(8.0, 3, 100, 3000, 1000));
    long t = 0;
    for (long interval : new long[] {0, 900, 1100, 1000, 1200}) {
      t += interval;
      d.heartbeat(t);
    }
    assertThat(d.intervals()).containsExactly(1100, 1000, 1200);
    assertThat(d.mean()).isEqualTo(1100.0);
    // Running sums after wrapping the ring: (1100^2 + 1000^2 + 1200^2) / 3 - 1100^2 = 6666.67.
    assertThat(d.stdDeviation()).isEqualTo(100.0); // sqrt(6666.67) = 81.6, floored
  }

  @Test
  void theRingGrowsPastItsInitialCapacityKeepingOrder() {
    var d = new PhiAccrualDetector(new Settings(8.0, 20, 1, 3000, 1000));
    long t = 0;
    d.heartbeat(t);
    for (int i = 1; i <= 25; i++) {
      t += 1000 + i;
      d.heartbeat(t);
    }
    long[] expected = new long[20];
    for (int i = 0; i < 20; i++) {
      expected[i] = 1000 + 6 + i;
    }
    assertThat(d.intervals()).containsExactly(expected);
    assertThat(d.mean()).isEqualTo(1015.5);
  }

  @Test
  void heartbeatsGoingBackInTimeAreRejected() {
    var d = fed(2, 1000);
    assertThatThrownBy(() -> d.heartbeat(999))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("999")
        .hasMessageContaining("1000");
    assertThat(d.phi(0)).isEqualTo(d.phi(1000)); // a query before the last heartbeat: no silence
  }

  static Stream<Arguments> badSettings() {
    return Stream.of(
        Arguments.of(new double[] {0, 1000, 100, 3000, 1000}, "threshold"),
        Arguments.of(new double[] {Double.NaN, 1000, 100, 3000, 1000}, "threshold"),
        Arguments.of(new double[] {Double.POSITIVE_INFINITY, 1000, 100, 3000, 1000}, "threshold"),
        Arguments.of(new double[] {8, 0, 100, 3000, 1000}, "maxSampleSize"),
        Arguments.of(new double[] {8, 10_001, 100, 3000, 1000}, "maxSampleSize"),
        Arguments.of(new double[] {8, 1000, 0, 3000, 1000}, "minStdDeviationMs"),
        Arguments.of(new double[] {8, 1000, 100, -1, 1000}, "acceptableHeartbeatPauseMs"),
        Arguments.of(new double[] {8, 1000, 100, 3000, 0}, "firstHeartbeatEstimateMs"),
        Arguments.of(new double[] {8, 1000, 100, 3000, 1L << 25}, "firstHeartbeatEstimateMs"));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("badSettings")
  void badSettingsAreRejectedNamingTheField(double[] v, String field) {
    assertThatThrownBy(() -> new Settings(v[0], (int) v[1], (long) v[2], (long) v[3], (long) v[4]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(field + " must be");
  }

  @Test
  void akkaDefaultsAreAkkasClusterDefaults() {
    assertThat(AKKA).isEqualTo(new Settings(8.0, 1000, 100, 3000, 1000));
  }

  @Test
  void theLargestSettingsCannotOverflowTheSquaredSum() {
    // A huge acceptable pause keeps every heartbeat "available", so every interval is a sample;
    // each is 2^40 ms, clamped to 2^24: 10,000 squares of 2^24 sum to 2.8e18 < Long.MAX_VALUE.
    var d =
        new PhiAccrualDetector(
            new Settings(
                8.0, Settings.MAX_SAMPLE_SIZE, 1, 1L << 60, PhiAccrualDetector.MAX_INTERVAL_MS));
    long t = 0;
    d.heartbeat(t);
    for (int i = 0; i < Settings.MAX_SAMPLE_SIZE + 5; i++) {
      t += 1L << 40;
      d.heartbeat(t);
    }
    assertThat(d.sampleCount()).isEqualTo(Settings.MAX_SAMPLE_SIZE);
    assertThat(d.mean()).isEqualTo((double) PhiAccrualDetector.MAX_INTERVAL_MS);
    assertThat(d.stdDeviation()).isEqualTo(1.0);
  }
}
