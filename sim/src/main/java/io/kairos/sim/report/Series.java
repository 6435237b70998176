package io.kairos.sim.report;

/**
 * One named line: points {@code (x[i], y[i])} with {@code x} increasing.
 *
 * @param name what the legend and the tooltip say (a policy, a queue)
 */
public record Series(String name, double[] x, double[] y) {
  public Series {
    if (x.length != y.length) {
      throw new IllegalArgumentException(
          "series " + name + ": " + x.length + " x values but " + y.length + " y values");
    }
    for (int i = 0; i < x.length; i++) {
      if (!Double.isFinite(x[i]) || !Double.isFinite(y[i]) || i > 0 && x[i] < x[i - 1]) {
        throw new IllegalArgumentException(
            "series "
                + name
                + ": point "
                + i
                + " ("
                + x[i]
                + ", "
                + y[i]
                + ") is not finite or goes back in x");
      }
    }
  }

  public int size() {
    return x.length;
  }
}
