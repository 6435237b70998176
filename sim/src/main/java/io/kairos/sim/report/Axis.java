package io.kairos.sim.report;

import java.util.function.DoubleFunction;

/**
 * How a chart draws one axis.
 *
 * @param label the axis title, with its unit
 * @param min the lowest value shown (for a log axis, values below are drawn at it)
 * @param max the highest value shown
 * @param log base-10 logarithmic rather than linear
 * @param ticks formats a tick value
 */
public record Axis(
    String label, double min, double max, boolean log, DoubleFunction<String> ticks) {
  public static Axis linear(String label, double min, double max, DoubleFunction<String> ticks) {
    return new Axis(label, min, max, false, ticks);
  }

  public static Axis log(String label, double min, double max, DoubleFunction<String> ticks) {
    return new Axis(label, min, max, true, ticks);
  }

  Scale scale(double fromPx, double toPx) {
    return log
        ? Scale.log(min, max, fromPx, toPx, ticks)
        : Scale.linear(min, max, fromPx, toPx, ticks);
  }
}
