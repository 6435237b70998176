package io.kairos.sim.report;

import java.util.ArrayList;
import java.util.List;

/**
 * Stacked areas in one or more panels that share their axes and layers (one panel per policy, one
 * layer per queue). Each layer of each panel is one {@code <path class="area">} with {@code
 * data-panel} and {@code data-series} attributes and a {@code <title>} tooltip; the panels are
 * {@code <g class="panel">} groups headed by a visible label. The legend names the layers once.
 */
public final class StackedAreaChart {
  private StackedAreaChart() {}

  /**
   * One panel: layer {@code l} is {@code layers.get(l)} over {@code x}; layers stack bottom-up in
   * order.
   */
  public record Panel(String name, double[] x, List<double[]> layers) {
    public Panel {
      layers = List.copyOf(layers);
      for (double[] layer : layers) {
        if (layer.length != x.length) {
          throw new IllegalArgumentException(
              "panel "
                  + name
                  + ": a layer has "
                  + layer.length
                  + " values for "
                  + x.length
                  + " x values");
        }
      }
    }
  }

  private static final int TOP = 8;
  private static final int PANEL_TITLE = 22;
  private static final int PLOT_HEIGHT = 180;
  private static final int BELOW_PLOT = 26;
  private static final int AXIS_TITLE = 26;

  public static String svg(
      String id,
      String title,
      String desc,
      Axis x,
      Axis y,
      List<String> layerNames,
      List<Panel> panels) {
    var entries = new ArrayList<Frame.Entry>();
    for (int l = 0; l < layerNames.size(); l++) {
      entries.add(new Frame.Entry(layerNames.get(l), Style.area(l), "", true));
    }
    int panelHeight = PANEL_TITLE + PLOT_HEIGHT + BELOW_PLOT;
    int legendTop = TOP + panels.size() * panelHeight + AXIS_TITLE;
    int height = legendTop + Frame.legendRows(entries) * Frame.LEGEND_ROW + 8;
    double x0 = Frame.LEFT;
    double x1 = Frame.WIDTH - Frame.RIGHT;
    var out = new StringBuilder(8192);
    Frame.open(out, id, height, title, desc);
    for (int p = 0; p < panels.size(); p++) {
      Panel panel = panels.get(p);
      double top = TOP + p * panelHeight;
      double y1 = top + PANEL_TITLE;
      double y0 = y1 + PLOT_HEIGHT;
      Scale sx = x.scale(x0, x1);
      Scale sy = y.scale(y0, y1);
      out.append("<g class=\"panel\" data-panel=\"")
          .append(Svg.escape(panel.name()))
          .append("\">\n");
      out.append("<text class=\"panel-title\" x=\"")
          .append(Svg.coord(x0))
          .append("\" y=\"")
          .append(Svg.coord(top + 15))
          .append("\" font-weight=\"bold\" fill=\"")
          .append(Style.TEXT)
          .append("\">")
          .append(Svg.escape(panel.name()))
          .append("</text>\n");
      Frame.axes(out, sx, sy, x0, x1, y0, y1, x.label(), y.label(), p == panels.size() - 1);
      double[] below = new double[panel.x().length];
      out.append("<g class=\"plot\" stroke=\"#ffffff\" stroke-width=\"0.5\">\n");
      for (int l = 0; l < panel.layers().size(); l++) {
        double[] layer = panel.layers().get(l);
        double[] above = new double[below.length];
        for (int k = 0; k < above.length; k++) {
          above[k] = below[k] + layer[k];
        }
        out.append("<path class=\"area\" data-panel=\"")
            .append(Svg.escape(panel.name()))
            .append("\" data-series=\"")
            .append(Svg.escape(layerNames.get(l)))
            .append("\" fill=\"")
            .append(Style.area(l))
            .append("\" d=\"")
            .append(band(panel.x(), below, above, sx, sy))
            .append("\"><title>")
            .append(Svg.escape(panel.name() + ": " + layerNames.get(l)))
            .append("</title></path>\n");
        below = above;
      }
      out.append("</g>\n</g>\n");
    }
    Frame.legend(out, entries, legendTop);
    Frame.close(out);
    return out.toString();
  }

  /** The band between {@code below} and {@code above}: along the top, back along the bottom. */
  static String band(double[] x, double[] below, double[] above, Scale sx, Scale sy) {
    if (x.length == 0) {
      return "M0,0";
    }
    var d = new StringBuilder(x.length * 28);
    for (int k = 0; k < x.length; k++) {
      d.append(k == 0 ? 'M' : 'L')
          .append(Svg.coord(sx.pixel(x[k])))
          .append(',')
          .append(Svg.coord(sy.pixel(above[k])));
    }
    for (int k = x.length - 1; k >= 0; k--) {
      d.append('L')
          .append(Svg.coord(sx.pixel(x[k])))
          .append(',')
          .append(Svg.coord(sy.pixel(below[k])));
    }
    return d.append('Z').toString();
  }
}
