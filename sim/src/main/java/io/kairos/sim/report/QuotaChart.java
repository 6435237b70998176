package io.kairos.sim.report;

import java.util.ArrayList;
import java.util.List;

/**
 * Small multiples of usage against a quota: one small panel per queue, in a grid of {@value
 * #COLUMNS} columns, sharing the time axis but each with its own vertical scale (a queue of 8 GPUs
 * next to one of 200 would otherwise be a flat line).
 *
 * <p>Each panel ({@code <g class="quota-panel" data-series="queue">}) draws the queue's GPUs held
 * as two stacked bands: {@code <path class="area within">} up to the nominal quota and {@code <path
 * class="area above">} beyond it (borrowed), and the nominal quota as {@code <path
 * class="nominal">}, a dashed horizontal line. The grid, the bands and the legend are plain SVG
 * text; the same input gives the same bytes.
 */
public final class QuotaChart {
  private QuotaChart() {}

  /**
   * One queue.
   *
   * @param name the queue, shown as the panel's title
   * @param nominal its nominal quota, in the units of {@code held}
   * @param held the amount held at each x (GPUs, time-weighted over a window)
   */
  public record Panel(String name, double nominal, double[] held) {}

  static final int COLUMNS = 3;
  static final String WITHIN = "#0072B2";
  static final String ABOVE = "#E69F00";

  private static final int TOP = 8;
  private static final int GAP = 12;
  private static final int GUTTER = 44;
  private static final int PANEL_TITLE = 18;
  private static final int PLOT_HEIGHT = 78;
  private static final int BELOW_PLOT = 20;
  private static final int AXIS_TITLE = 24;

  /**
   * The chart as SVG text.
   *
   * @param id unique in the page
   * @param x the shared time axis
   * @param yLabel what the vertical axes measure, with the unit ("GPUs held")
   * @param midpoints the x of each value of every panel's {@code held}
   */
  public static String svg(
      String id,
      String title,
      String desc,
      Axis x,
      String yLabel,
      double[] midpoints,
      List<Panel> panels) {
    for (Panel p : panels) {
      if (p.held().length != midpoints.length) {
        throw new IllegalArgumentException(
            "quota panel "
                + p.name()
                + ": "
                + p.held().length
                + " values for "
                + midpoints.length
                + " x values");
      }
    }
    var entries =
        List.of(
            new Frame.Entry("held within the nominal quota", WITHIN, "", true),
            new Frame.Entry("held above it (borrowed)", ABOVE, "", true),
            new Frame.Entry("nominal quota", Style.TEXT, "5 3", false));
    int rows = (panels.size() + COLUMNS - 1) / COLUMNS;
    int panelHeight = PANEL_TITLE + PLOT_HEIGHT + BELOW_PLOT;
    int legendTop = TOP + rows * panelHeight + AXIS_TITLE;
    int height = legendTop + Frame.legendRows(entries) * Frame.LEGEND_ROW + 8;
    double columnWidth = (Frame.WIDTH - 2.0 * GAP) / COLUMNS;
    var out = new StringBuilder(8192 + panels.size() * midpoints.length * 40);
    Frame.open(out, id, height, title, desc);
    for (int i = 0; i < panels.size(); i++) {
      int row = i / COLUMNS;
      int column = i % COLUMNS;
      double x0 = GAP + column * columnWidth + GUTTER;
      double x1 = GAP + (column + 1) * columnWidth - GAP;
      double top = TOP + row * panelHeight;
      double y1 = top + PANEL_TITLE;
      double y0 = y1 + PLOT_HEIGHT;
      boolean bottomRow = i + COLUMNS >= panels.size();
      panel(out, panels.get(i), x.scale(x0, x1), midpoints, x0, x1, y0, y1, top, bottomRow);
    }
    out.append("<text class=\"axis-label\" x=\"")
        .append(Svg.coord(Frame.WIDTH / 2.0))
        .append("\" y=\"")
        .append(Svg.coord(TOP + rows * panelHeight + 14))
        .append("\" text-anchor=\"middle\" fill=\"")
        .append(Style.TEXT)
        .append("\">")
        .append(Svg.escape(x.label() + "; vertical axes: " + yLabel + ", each panel its own scale"))
        .append("</text>\n");
    Frame.legend(out, entries, legendTop);
    Frame.close(out);
    return out.toString();
  }

  private static void panel(
      StringBuilder out,
      Panel p,
      Scale sx,
      double[] xs,
      double x0,
      double x1,
      double y0,
      double y1,
      double top,
      boolean xLabels) {
    double peak = p.nominal();
    for (double v : p.held()) {
      peak = Math.max(peak, v);
    }
    Scale sy = Scale.linear(0, Math.max(peak, 1), y0, y1, ReportCharts::number);
    out.append("<g class=\"quota-panel\" data-series=\"")
        .append(Svg.escape(p.name()))
        .append("\">\n<text class=\"panel-title\" x=\"")
        .append(Svg.coord(x0))
        .append("\" y=\"")
        .append(Svg.coord(top + 13))
        .append("\" font-weight=\"bold\" fill=\"")
        .append(Style.TEXT)
        .append("\">")
        .append(Svg.escape(p.name() + " (nominal " + ReportCharts.number(p.nominal()) + ")"))
        .append("</text>\n");
    // Grid: horizontal lines at the y ticks, vertical ones at the shared x ticks.
    out.append("<g class=\"grid\" stroke=\"").append(Style.GRID).append("\" stroke-width=\"1\">");
    for (double t : sy.ticks()) {
      line(out, x0, x1, sy.pixel(t), sy.pixel(t));
    }
    for (double t : sx.ticks()) {
      line(out, sx.pixel(t), sx.pixel(t), y0, y1);
    }
    out.append("</g>\n");
    // Only the lowest and highest y ticks are labelled: panels are small.
    List<Double> ticks = sy.ticks();
    out.append("<g class=\"axis y-axis\" fill=\"")
        .append(Style.TEXT)
        .append("\" text-anchor=\"end\" font-size=\"10\">");
    for (double t : List.of(ticks.getFirst(), ticks.getLast())) {
      Svg.text(out, x0 - 4, sy.pixel(t) + 3, sy.label(t));
    }
    out.append("</g>\n");
    if (xLabels) {
      out.append("<g class=\"axis x-axis\" fill=\"")
          .append(Style.TEXT)
          .append("\" text-anchor=\"middle\" font-size=\"10\">");
      for (double t : sx.ticks()) {
        Svg.text(out, sx.pixel(t), y0 + 13, sx.label(t));
      }
      out.append("</g>\n");
    }
    // The bands: held up to the nominal, then what lies above it.
    int n = xs.length;
    double[] zero = new double[n];
    double[] within = new double[n];
    double[] total = new double[n];
    for (int k = 0; k < n; k++) {
      total[k] = p.held()[k];
      within[k] = Math.min(total[k], p.nominal());
    }
    out.append("<g class=\"plot\">\n");
    band(
        out,
        "within",
        WITHIN,
        p.name() + ": held within the nominal quota",
        xs,
        zero,
        within,
        sx,
        sy);
    band(
        out,
        "above",
        ABOVE,
        p.name() + ": held above the nominal quota",
        xs,
        within,
        total,
        sx,
        sy);
    String ny = Svg.coord(sy.pixel(p.nominal()));
    out.append("<path class=\"nominal\" d=\"M")
        .append(Svg.coord(x0))
        .append(',')
        .append(ny)
        .append('H')
        .append(Svg.coord(x1))
        .append("\" fill=\"none\" stroke=\"")
        .append(Style.TEXT)
        .append("\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"><title>")
        .append(Svg.escape(p.name() + ": nominal quota " + ReportCharts.number(p.nominal())))
        .append("</title></path>\n</g>\n");
    out.append("<path class=\"frame\" d=\"M")
        .append(Svg.coord(x0))
        .append(',')
        .append(Svg.coord(y1))
        .append('V')
        .append(Svg.coord(y0))
        .append('H')
        .append(Svg.coord(x1))
        .append("\" fill=\"none\" stroke=\"")
        .append(Style.AXIS)
        .append("\"/>\n</g>\n");
  }

  private static void band(
      StringBuilder out,
      String kind,
      String color,
      String tooltip,
      double[] xs,
      double[] below,
      double[] above,
      Scale sx,
      Scale sy) {
    out.append("<path class=\"area ")
        .append(kind)
        .append("\" fill=\"")
        .append(color)
        .append("\" d=\"")
        .append(StackedAreaChart.band(xs, below, above, sx, sy))
        .append("\"><title>")
        .append(Svg.escape(tooltip))
        .append("</title></path>\n");
  }

  private static void line(StringBuilder out, double xa, double xb, double ya, double yb) {
    out.append("<line x1=\"")
        .append(Svg.coord(xa))
        .append("\" x2=\"")
        .append(Svg.coord(xb))
        .append("\" y1=\"")
        .append(Svg.coord(ya))
        .append("\" y2=\"")
        .append(Svg.coord(yb))
        .append("\"/>");
  }

  /** The panels' names, for descriptions. */
  static List<String> names(List<Panel> panels) {
    var names = new ArrayList<String>();
    panels.forEach(p -> names.add(p.name()));
    return names;
  }
}
