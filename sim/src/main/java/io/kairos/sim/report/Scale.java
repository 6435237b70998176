package io.kairos.sim.report;

import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleFunction;

/**
 * Maps data values to pixels along one axis, and chooses its ticks.
 *
 * <p>Linear scales tick at 1, 2 or 5 times a power of ten, about six ticks; logarithmic scales
 * (base 10, for positive data) tick at each power of ten. Both are pure: the same domain gives the
 * same ticks.
 */
public sealed interface Scale {
  /** Pixel position of {@code value}, clamped into the domain. */
  double pixel(double value);

  /** Tick values, increasing, inside the domain. */
  List<Double> ticks();

  /** A tick's label. */
  String label(double tick);

  /**
   * A linear scale from {@code min} to {@code max} (rounded out to ticks when {@code nice}) onto
   * {@code [fromPx, toPx]} (which may decrease, as y axes do).
   */
  static Scale linear(
      double min, double max, double fromPx, double toPx, DoubleFunction<String> labels) {
    if (!(max > min)) {
      max = min + 1;
    }
    double step = niceStep((max - min) / 6);
    min = Math.floor(min / step + 1e-9) * step;
    max = Math.ceil(max / step - 1e-9) * step;
    return new Linear(min, max, fromPx, toPx, step, labels);
  }

  /**
   * A base-10 log scale from the power of ten at or below {@code min} to the one at or above {@code
   * max}; {@code min} must be positive.
   */
  static Scale log(
      double min, double max, double fromPx, double toPx, DoubleFunction<String> labels) {
    if (!(min > 0)) {
      throw new IllegalArgumentException("log scale: minimum must be > 0, got " + min);
    }
    int lo = (int) Math.floor(Math.log10(min) + 1e-9);
    int hi = (int) Math.ceil(Math.log10(Math.max(max, min)) - 1e-9);
    if (hi <= lo) {
      hi = lo + 1;
    }
    return new Log(lo, hi, fromPx, toPx, labels);
  }

  /** 1, 2 or 5 times a power of ten, at least {@code raw}. */
  static double niceStep(double raw) {
    if (!(raw > 0) || !Double.isFinite(raw)) {
      return 1;
    }
    double power = Math.pow(10, Math.floor(Math.log10(raw)));
    double f = raw / power;
    double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
    return nice * power;
  }

  /** A linear scale. */
  record Linear(
      double min,
      double max,
      double fromPx,
      double toPx,
      double step,
      DoubleFunction<String> labels)
      implements Scale {
    @Override
    public double pixel(double value) {
      double v = Math.max(min, Math.min(max, value));
      return fromPx + (v - min) / (max - min) * (toPx - fromPx);
    }

    @Override
    public List<Double> ticks() {
      var ticks = new ArrayList<Double>();
      long first = (long) Math.ceil(min / step - 1e-9);
      for (long i = first; i * step <= max + step * 1e-9 && ticks.size() < 50; i++) {
        ticks.add(i * step);
      }
      return ticks;
    }

    @Override
    public String label(double tick) {
      return labels.apply(tick);
    }
  }

  /** A base-10 logarithmic scale over {@code [10^lo, 10^hi]}. */
  record Log(int lo, int hi, double fromPx, double toPx, DoubleFunction<String> labels)
      implements Scale {
    @Override
    public double pixel(double value) {
      double e = Math.log10(Math.max(value, Math.pow(10, lo)));
      e = Math.min(hi, e);
      return fromPx + (e - lo) / (hi - lo) * (toPx - fromPx);
    }

    @Override
    public List<Double> ticks() {
      var ticks = new ArrayList<Double>();
      for (int e = lo; e <= hi; e++) {
        ticks.add(Math.pow(10, e));
      }
      return ticks;
    }

    @Override
    public String label(double tick) {
      return labels.apply(tick);
    }
  }
}
