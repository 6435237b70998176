package io.kairos.control.health;

/**
 * The phi-accrual failure detector of Hayashibara et al. (2004), with the arithmetic of Akka's
 * {@code akka.remote.PhiAccrualFailureDetector}: one instance watches one node.
 *
 * <p>Design note. Phi is the suspicion that the node is gone, on a log scale: {@code phi = -log10(1
 * - F(t))}, where {@code t} is the time since the last heartbeat and {@code F} the normal CDF whose
 * mean and standard deviation are estimated from the last {@code maxSampleSize} inter-arrival
 * times. Phi 1 means a 10% chance that a live node would have been this late, phi 8 one in 10^8. As
 * in Akka:
 *
 * <ol>
 *   <li>the mean is shifted by {@code acceptableHeartbeatPauseMs}, so a GC pause or a dropped
 *       packet or two costs nothing;
 *   <li>the standard deviation is floored at {@code minStdDeviationMs}, so perfectly regular
 *       heartbeats do not make the detector hair-triggered;
 *   <li>the first heartbeat seeds the history with two intervals, {@code estimate -+ estimate/4}
 *       (integer division), so a node heard from once already has a distribution (mean {@code
 *       estimate}, standard deviation {@code estimate/4}) and becomes unavailable if it falls
 *       silent;
 *   <li>an interval is added only when the heartbeat arrives while the node is still available
 *       ({@code phi < threshold}): the first heartbeat after an outage would skew the history;
 *   <li>{@code F} is the logistic approximation {@code 1 / (1 + exp(-y (1.5976 + 0.070566 y^2)))},
 *       {@code y = (t - mean) / std} (max error 0.00014), evaluated on the side that keeps
 *       precision: for {@code t > mean}, {@code 1 - F = e / (1 + e)} with {@code e = exp(-y
 *       (...))}.
 * </ol>
 *
 * <p>Worked example, Akka's defaults ({@link Settings#AKKA_DEFAULTS}) and a heartbeat every 1,000
 * ms: the intervals have mean 1,000 and standard deviation below 100, so the floor applies; the
 * shifted mean is 4,000 ms. Phi reaches 3 at 4,306 ms of silence and 8 at 4,523 ms (see {@code
 * PhiAccrualDetectorTest}).
 *
 * <p>Structure: a ring buffer of intervals (grown by doubling up to {@code maxSampleSize}, so an
 * idle detector costs a few hundred bytes, not {@code 8 * maxSampleSize}) and running sums of the
 * intervals and their squares as {@code long}s, so mean and variance are exact and O(1) and a
 * heartbeat allocates nothing once the buffer has grown. Intervals are clamped to {@link
 * #MAX_INTERVAL_MS} and the sample size to {@link Settings#MAX_SAMPLE_SIZE} so the squared sum
 * cannot overflow.
 *
 * <p>Deterministic: time is a parameter (milliseconds on any clock that does not go backwards);
 * nothing here reads a clock. Not thread-safe: one owner, or external locking.
 */
public final class PhiAccrualDetector {
  /** Intervals longer than this (about 4.7 hours) are recorded as this. */
  static final long MAX_INTERVAL_MS = 1L << 24;

  private static final int INITIAL_CAPACITY = 8;

  /**
   * The detector's parameters, named as in Akka's {@code akka.cluster.failure-detector}.
   *
   * @param threshold phi at or above which the node counts as unavailable; lower detects sooner and
   *     suspects wrongly more often
   * @param maxSampleSize how many recent intervals the mean and deviation are estimated from
   * @param minStdDeviationMs the floor under the estimated standard deviation
   * @param acceptableHeartbeatPauseMs silence accepted on top of the mean interval before phi
   *     climbs (lost or delayed heartbeats, GC pauses)
   * @param firstHeartbeatEstimateMs the interval assumed before any has been measured
   */
  public record Settings(
      double threshold,
      int maxSampleSize,
      long minStdDeviationMs,
      long acceptableHeartbeatPauseMs,
      long firstHeartbeatEstimateMs) {
    /** The most samples a detector keeps: with intervals clamped, the squared sum fits a long. */
    public static final int MAX_SAMPLE_SIZE = 10_000;

    /**
     * Akka's cluster defaults: threshold 8, 1,000 samples, 100 ms floor, 3 s acceptable pause, 1 s
     * first estimate (its {@code heartbeat-interval}).
     */
    public static final Settings AKKA_DEFAULTS = new Settings(8.0, 1000, 100, 3_000, 1_000);

    public Settings {
      if (!(threshold > 0) || Double.isInfinite(threshold)) {
        throw new IllegalArgumentException(
            "threshold must be a finite number > 0, got " + threshold);
      }
      if (maxSampleSize < 1 || maxSampleSize > MAX_SAMPLE_SIZE) {
        throw new IllegalArgumentException(
            "maxSampleSize must be in 1.." + MAX_SAMPLE_SIZE + ", got " + maxSampleSize);
      }
      if (minStdDeviationMs <= 0) {
        throw new IllegalArgumentException(
            "minStdDeviationMs must be > 0, got " + minStdDeviationMs);
      }
      if (acceptableHeartbeatPauseMs < 0) {
        throw new IllegalArgumentException(
            "acceptableHeartbeatPauseMs must be >= 0, got " + acceptableHeartbeatPauseMs);
      }
      if (firstHeartbeatEstimateMs <= 0 || firstHeartbeatEstimateMs > MAX_INTERVAL_MS) {
        throw new IllegalArgumentException(
            "firstHeartbeatEstimateMs must be in 1.."
                + MAX_INTERVAL_MS
                + ", got "
                + firstHeartbeatEstimateMs);
      }
    }
  }

  private final Settings settings;
  private long[] ring = new long[0];
  private int head; // index of the oldest interval
  private int size;
  private long intervalSum;
  private long squaredIntervalSum;
  private long lastHeartbeatMs;
  private boolean isMonitoring;

  public PhiAccrualDetector(Settings settings) {
    this.settings = java.util.Objects.requireNonNull(settings, "settings");
  }

  public Settings settings() {
    return settings;
  }

  /** Whether any heartbeat has been recorded; until then phi is 0. */
  public boolean isMonitoring() {
    return isMonitoring;
  }

  /** When the last heartbeat was recorded; meaningful only while {@link #isMonitoring()}. */
  public long lastHeartbeatMs() {
    return lastHeartbeatMs;
  }

  /** How many intervals the estimate is built from (the two seeds included). */
  public int sampleCount() {
    return size;
  }

  /**
   * Records a heartbeat that arrived at {@code nowMs}.
   *
   * @throws IllegalArgumentException if {@code nowMs} is before the previous heartbeat
   */
  public void heartbeat(long nowMs) {
    if (!isMonitoring) {
      // 3. Seed: two intervals around the estimate, so one heartbeat is enough to be judged.
      long mean = settings.firstHeartbeatEstimateMs();
      long deviation = mean / 4;
      add(mean - deviation);
      add(mean + deviation);
      isMonitoring = true;
      lastHeartbeatMs = nowMs;
      return;
    }
    if (nowMs < lastHeartbeatMs) {
      throw new IllegalArgumentException(
          "heartbeat at " + nowMs + " ms is before the previous one at " + lastHeartbeatMs + " ms");
    }
    // 4. The first heartbeat after an outage is not a sample of the normal interval.
    if (isAvailable(nowMs)) {
      add(Math.min(nowMs - lastHeartbeatMs, MAX_INTERVAL_MS));
    }
    lastHeartbeatMs = nowMs;
  }

  /**
   * The suspicion level at {@code nowMs}: 0 before the first heartbeat, then non-decreasing in the
   * time since the last one, never NaN, possibly {@code +Infinity} after a very long silence. A
   * time before the last heartbeat counts as no time at all.
   */
  public double phi(long nowMs) {
    if (!isMonitoring) {
      return 0.0;
    }
    long elapsedMs = Math.max(0, nowMs - lastHeartbeatMs);
    return phi(elapsedMs, mean() + settings.acceptableHeartbeatPauseMs(), stdDeviation());
  }

  /** {@code phi(nowMs) < threshold}. */
  public boolean isAvailable(long nowMs) {
    return phi(nowMs) < settings.threshold();
  }

  /** Mean of the recorded intervals (ms); only while monitoring. */
  double mean() {
    return (double) intervalSum / size;
  }

  /** Standard deviation of the recorded intervals, floored at {@code minStdDeviationMs}. */
  double stdDeviation() {
    double mean = mean();
    double variance = (double) squaredIntervalSum / size - mean * mean;
    // Rounding can leave a hair below zero for equal intervals; the floor covers it either way.
    return Math.max(Math.sqrt(Math.max(variance, 0.0)), settings.minStdDeviationMs());
  }

  /**
   * {@code -log10(1 - F(elapsedMs))} for the normal distribution {@code N(mean, std)}, by the
   * logistic approximation of its CDF (Akka's formula, see the class note).
   */
  static double phi(long elapsedMs, double mean, double stdDeviation) {
    double y = (elapsedMs - mean) / stdDeviation;
    double e = Math.exp(-y * (1.5976 + 0.070566 * y * y));
    double phi = elapsedMs > mean ? -Math.log10(e / (1.0 + e)) : -Math.log10(1.0 - 1.0 / (1.0 + e));
    return phi + 0.0; // -0.0 becomes 0.0
  }

  private void add(long intervalMs) {
    int max = settings.maxSampleSize();
    if (size == max) {
      long oldest = ring[head];
      intervalSum -= oldest;
      squaredIntervalSum -= oldest * oldest;
      ring[head] = intervalMs;
      head = (head + 1) % max;
    } else {
      if (size == ring.length) {
        grow(max);
      }
      ring[(head + size) % ring.length] = intervalMs;
      size++;
    }
    intervalSum += intervalMs;
    squaredIntervalSum += intervalMs * intervalMs;
  }

  /** Doubles the buffer (up to {@code max}), unrolling it so the oldest interval is at 0. */
  private void grow(int max) {
    int capacity = Math.min(max, Math.max(INITIAL_CAPACITY, ring.length * 2));
    long[] bigger = new long[capacity];
    for (int i = 0; i < size; i++) {
      bigger[i] = ring[(head + i) % ring.length];
    }
    ring = bigger;
    head = 0;
  }

  @Override
  public String toString() {
    return isMonitoring
        ? "PhiAccrualDetector[last="
            + lastHeartbeatMs
            + "ms, samples="
            + size
            + ", mean="
            + mean()
            + "ms, std="
            + stdDeviation()
            + "ms]"
        : "PhiAccrualDetector[not monitoring]";
  }

  /** The recorded intervals, oldest first (tests). */
  long[] intervals() {
    long[] out = new long[size];
    for (int i = 0; i < size; i++) {
      out[i] = ring[(head + i) % ring.length];
    }
    return out;
  }
}
