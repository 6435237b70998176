package io.kairos.sim.report;

import java.util.ArrayList;
import java.util.List;

/**
 * A line chart: one {@code <path class="series">} per series, in a colour and dash pattern of its
 * own, with a text legend below the plot. Each path carries a {@code <title>} (the browser's hover
 * tooltip) and a {@code data-series} attribute naming it.
 */
public final class LineChart {
  private LineChart() {}

  private static final int TOP = 16;
  private static final int PLOT_HEIGHT = 260;
  private static final int BELOW_PLOT = 48;

  /**
   * The chart as SVG text.
   *
   * @param id unique in the page; the title and description get ids derived from it
   * @param stepwise draw each series as a step function (a CDF) rather than straight segments
   */
  public static String svg(
      String id, String title, String desc, Axis x, Axis y, List<Series> series, boolean stepwise) {
    var entries = new ArrayList<Frame.Entry>();
    for (int i = 0; i < series.size(); i++) {
      entries.add(new Frame.Entry(series.get(i).name(), Style.line(i), Style.dash(i), false));
    }
    int height = TOP + PLOT_HEIGHT + BELOW_PLOT + Frame.legendRows(entries) * Frame.LEGEND_ROW + 8;
    double x0 = Frame.LEFT;
    double x1 = Frame.WIDTH - Frame.RIGHT;
    double y0 = TOP + PLOT_HEIGHT;
    double y1 = TOP;
    Scale sx = x.scale(x0, x1);
    Scale sy = y.scale(y0, y1);
    var out = new StringBuilder(4096 + series.stream().mapToInt(Series::size).sum() * 16);
    Frame.open(out, id, height, title, desc);
    Frame.axes(out, sx, sy, x0, x1, y0, y1, x.label(), y.label(), true);
    out.append("<g class=\"plot\" fill=\"none\" stroke-width=\"2\" stroke-linejoin=\"round\">\n");
    for (int i = 0; i < series.size(); i++) {
      Series s = series.get(i);
      out.append("<path class=\"series\" data-series=\"")
          .append(Svg.escape(s.name()))
          .append("\" stroke=\"")
          .append(Style.line(i))
          .append('"');
      if (!Style.dash(i).isEmpty()) {
        out.append(" stroke-dasharray=\"").append(Style.dash(i)).append('"');
      }
      out.append(" d=\"")
          .append(stepwise ? steps(s, sx, sy) : segments(s, sx, sy))
          .append("\"><title>")
          .append(Svg.escape(s.name()))
          .append("</title></path>\n");
    }
    out.append("</g>\n");
    Frame.legend(out, entries, y0 + BELOW_PLOT);
    Frame.close(out);
    return out.toString();
  }

  /** Straight segments between points; an empty series draws nothing ("M" needs a point). */
  private static String segments(Series s, Scale sx, Scale sy) {
    var d = new StringBuilder(s.size() * 14);
    for (int i = 0; i < s.size(); i++) {
      d.append(i == 0 ? 'M' : 'L')
          .append(Svg.coord(sx.pixel(s.x()[i])))
          .append(',')
          .append(Svg.coord(sy.pixel(s.y()[i])));
    }
    return d.isEmpty() ? "M0,0" : d.toString();
  }

  /**
   * A right-continuous step function from the left edge at y = 0: flat until each point's x, then
   * up to its y, and flat to the right edge after the last point.
   */
  private static String steps(Series s, Scale sx, Scale sy) {
    var d = new StringBuilder(s.size() * 14);
    double left = Double.NEGATIVE_INFINITY;
    d.append('M').append(Svg.coord(sx.pixel(left))).append(',').append(Svg.coord(sy.pixel(0)));
    for (int i = 0; i < s.size(); i++) {
      d.append('H')
          .append(Svg.coord(sx.pixel(s.x()[i])))
          .append('V')
          .append(Svg.coord(sy.pixel(s.y()[i])));
    }
    d.append('H').append(Svg.coord(sx.pixel(Double.POSITIVE_INFINITY)));
    return d.toString();
  }
}
