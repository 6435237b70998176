package io.kairos.control.dashboard;

import io.kairos.protocol.UtilizationPoint;
import io.kairos.protocol.UtilizationView;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The cluster's recent load at decreasing resolution: 10-second points for 6 hours, 1-minute points
 * for 2 days, 10-minute points for 14 days (about 7,000 points, a few hundred KiB).
 *
 * <p>Design: each tier is a ring of buckets indexed by {@code (bucketStart / resolution) mod size};
 * a bucket remembers its own start, so a slot whose start is not the one asked for is stale and is
 * reset on write and skipped on read. No cleanup pass is needed, and a gap (no leader, a stopped
 * controller) simply leaves no points. Every sample goes into every tier: O(tiers) per sample; a
 * query reads one tier, O(window / resolution).
 *
 * <p>Thread-safe: the sampler writes, API requests read; both under this object's monitor.
 */
public final class UtilizationHistory {
  /** One measurement; {@code started} and {@code finished} count since the previous one. */
  public record Sample(
      long gpusTotal, long gpusBusy, long pending, long running, long started, long finished) {}

  /** A resolution and how far back it reaches. */
  record Tier(Duration resolution, Duration span) {
    Tier {
      Objects.requireNonNull(resolution, "resolution");
      Objects.requireNonNull(span, "span");
      if (resolution.toSeconds() < 1 || span.toSeconds() % resolution.toSeconds() != 0) {
        throw new IllegalArgumentException("tier " + resolution + " must divide " + span);
      }
    }

    int slots() {
      return (int) (span.toSeconds() / resolution.toSeconds());
    }
  }

  static final List<Tier> DEFAULT_TIERS =
      List.of(
          new Tier(Duration.ofSeconds(10), Duration.ofHours(6)),
          new Tier(Duration.ofMinutes(1), Duration.ofDays(2)),
          new Tier(Duration.ofMinutes(10), Duration.ofDays(14)));

  /** The longest window a query may ask for. */
  public static final Duration MAX_WINDOW = Duration.ofDays(14);

  private static final class Bucket {
    long startSec = Long.MIN_VALUE;
    int samples;
    double gpusTotal;
    double gpusBusy;
    double pending;
    double running;
    long started;
    long finished;

    void reset(long start) {
      startSec = start;
      samples = 0;
      gpusTotal = gpusBusy = pending = running = 0;
      started = finished = 0;
    }
  }

  private final List<Tier> tiers;
  private final Bucket[][] rings;

  public UtilizationHistory() {
    this(DEFAULT_TIERS);
  }

  UtilizationHistory(List<Tier> tiers) {
    this.tiers = List.copyOf(tiers);
    rings = new Bucket[this.tiers.size()][];
    for (int t = 0; t < rings.length; t++) {
      rings[t] = new Bucket[this.tiers.get(t).slots()];
      for (int i = 0; i < rings[t].length; i++) {
        rings[t][i] = new Bucket();
      }
    }
  }

  /** Forgets every sample (before a rebuild from the accounting store). */
  public synchronized void clear() {
    for (Bucket[] ring : rings) {
      for (Bucket b : ring) {
        b.reset(Long.MIN_VALUE);
      }
    }
  }

  /** Adds a sample taken at {@code at} to every tier. */
  public synchronized void record(Instant at, Sample s) {
    long sec = at.getEpochSecond();
    for (int t = 0; t < rings.length; t++) {
      long res = tiers.get(t).resolution().toSeconds();
      long start = Math.floorDiv(sec, res) * res;
      Bucket b = rings[t][slot(t, start)];
      if (b.startSec != start) {
        b.reset(start);
      }
      b.samples++;
      b.gpusTotal += s.gpusTotal();
      b.gpusBusy += s.gpusBusy();
      b.pending += s.pending();
      b.running += s.running();
      b.started += s.started();
      b.finished += s.finished();
    }
  }

  /**
   * The points of the last {@code window} before {@code now}, oldest first, from the finest tier
   * that reaches that far back.
   */
  public synchronized UtilizationView query(String label, Duration window, Instant now) {
    int t = 0;
    while (t < tiers.size() - 1 && tiers.get(t).span().compareTo(window) < 0) {
      t++;
    }
    long res = tiers.get(t).resolution().toSeconds();
    long nowSec = now.getEpochSecond();
    long last = Math.floorDiv(nowSec, res) * res;
    long first =
        Math.max(
            Math.floorDiv(nowSec - window.toSeconds(), res) * res + res,
            last - (long) (rings[t].length - 1) * res);
    var points = new ArrayList<UtilizationPoint>();
    for (long start = first; start <= last; start += res) {
      Bucket b = rings[t][slot(t, start)];
      if (b.startSec != start || b.samples == 0) {
        continue;
      }
      double n = b.samples;
      points.add(
          new UtilizationPoint(
              Instant.ofEpochSecond(start).toString(),
              round(b.gpusTotal / n),
              round(b.gpusBusy / n),
              round(b.pending / n),
              round(b.running / n),
              b.started,
              b.finished));
    }
    return new UtilizationView(label, res, points);
  }

  private int slot(int tier, long startSec) {
    long res = tiers.get(tier).resolution().toSeconds();
    return (int) Math.floorMod(startSec / res, (long) rings[tier].length);
  }

  private static double round(double v) {
    return Math.round(v * 100) / 100.0;
  }

  /**
   * Parses a window such as {@code 30m}, {@code 6h} or {@code 2d}: a whole number of minutes, hours
   * or days, from one minute to {@link #MAX_WINDOW}. Empty when it is not one.
   */
  public static java.util.Optional<Duration> parseWindow(String text) {
    var m = java.util.regex.Pattern.compile("([0-9]{1,5})([mhd])").matcher(text.trim());
    if (!m.matches()) {
      return java.util.Optional.empty();
    }
    long n = Long.parseLong(m.group(1));
    Duration d =
        switch (m.group(2)) {
          case "m" -> Duration.ofMinutes(n);
          case "h" -> Duration.ofHours(n);
          default -> Duration.ofDays(n);
        };
    if (d.compareTo(Duration.ofMinutes(1)) < 0 || d.compareTo(MAX_WINDOW) > 0) {
      return java.util.Optional.empty();
    }
    return java.util.Optional.of(d);
  }
}
