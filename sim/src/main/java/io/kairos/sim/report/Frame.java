package io.kairos.sim.report;

import java.util.List;

/**
 * The parts every chart shares: the {@code <svg role="img">} element with its {@code <title>} and
 * {@code <desc>}, axes with ticks, grid lines and axis titles, and a text legend.
 */
final class Frame {
  private Frame() {}

  static final int WIDTH = 760;
  static final int LEFT = 72;
  static final int RIGHT = 24;
  static final int LEGEND_ROW = 22;

  /** One legend entry: a swatch drawn as a line (dashed) or a filled square. */
  record Entry(String name, String color, String dash, boolean filled) {}

  /** Opens the SVG element; {@code id} must be unique in the page. */
  static void open(StringBuilder out, String id, int height, String title, String desc) {
    out.append("<svg xmlns=\"")
        .append(Svg.NS)
        .append("\" id=\"")
        .append(id)
        .append("\" class=\"chart\" role=\"img\" viewBox=\"0 0 ")
        .append(WIDTH)
        .append(' ')
        .append(height)
        .append("\" width=\"")
        .append(WIDTH)
        .append("\" height=\"")
        .append(height)
        .append("\" aria-labelledby=\"")
        .append(id)
        .append("-title ")
        .append(id)
        .append("-desc\" font-family=\"")
        .append(Svg.escape(Style.FONT))
        .append("\" font-size=\"12\">\n");
    out.append("<title id=\"")
        .append(id)
        .append("-title\">")
        .append(Svg.escape(title))
        .append("</title>\n");
    out.append("<desc id=\"")
        .append(id)
        .append("-desc\">")
        .append(Svg.escape(desc))
        .append("</desc>\n");
    out.append("<rect width=\"")
        .append(WIDTH)
        .append("\" height=\"")
        .append(height)
        .append("\" fill=\"#ffffff\"/>\n");
  }

  static void close(StringBuilder out) {
    out.append("</svg>\n");
  }

  /**
   * Grid lines, tick marks, tick labels and axis lines of the plot area {@code [x0, x1] x [y1, y0]}
   * (y0 is the bottom), and the axis titles.
   */
  static void axes(
      StringBuilder out,
      Scale x,
      Scale y,
      double x0,
      double x1,
      double y0,
      double y1,
      String xLabel,
      String yLabel,
      boolean titles) {
    out.append("<g class=\"grid\" stroke=\"").append(Style.GRID).append("\" stroke-width=\"1\">");
    for (double t : y.ticks()) {
      String py = Svg.coord(y.pixel(t));
      out.append("<line x1=\"")
          .append(Svg.coord(x0))
          .append("\" x2=\"")
          .append(Svg.coord(x1))
          .append("\" y1=\"")
          .append(py)
          .append("\" y2=\"")
          .append(py)
          .append("\"/>");
    }
    for (double t : x.ticks()) {
      String px = Svg.coord(x.pixel(t));
      out.append("<line x1=\"")
          .append(px)
          .append("\" x2=\"")
          .append(px)
          .append("\" y1=\"")
          .append(Svg.coord(y0))
          .append("\" y2=\"")
          .append(Svg.coord(y1))
          .append("\"/>");
    }
    out.append("</g>\n");
    out.append("<g class=\"axis x-axis\" fill=\"")
        .append(Style.TEXT)
        .append("\" text-anchor=\"middle\">");
    for (double t : x.ticks()) {
      Svg.text(out, x.pixel(t), y0 + 16, x.label(t));
    }
    out.append("</g>\n");
    out.append("<g class=\"axis y-axis\" fill=\"")
        .append(Style.TEXT)
        .append("\" text-anchor=\"end\">");
    for (double t : y.ticks()) {
      Svg.text(out, x0 - 6, y.pixel(t) + 4, y.label(t));
    }
    out.append("</g>\n");
    out.append("<path class=\"frame\" d=\"M")
        .append(Svg.coord(x0))
        .append(',')
        .append(Svg.coord(y1))
        .append("V")
        .append(Svg.coord(y0))
        .append("H")
        .append(Svg.coord(x1))
        .append("\" fill=\"none\" stroke=\"")
        .append(Style.AXIS)
        .append("\"/>\n");
    if (titles) {
      out.append("<text class=\"axis-label\" x=\"")
          .append(Svg.coord((x0 + x1) / 2))
          .append("\" y=\"")
          .append(Svg.coord(y0 + 36))
          .append("\" text-anchor=\"middle\" fill=\"")
          .append(Style.TEXT)
          .append("\">")
          .append(Svg.escape(xLabel))
          .append("</text>\n");
    }
    out.append("<text class=\"axis-label\" transform=\"translate(16,")
        .append(Svg.coord((y0 + y1) / 2))
        .append(") rotate(-90)\" text-anchor=\"middle\" fill=\"")
        .append(Style.TEXT)
        .append("\">")
        .append(Svg.escape(yLabel))
        .append("</text>\n");
  }

  /** Rows the legend needs for {@code entries}. */
  static int legendRows(List<Entry> entries) {
    return layout(entries, null, 0);
  }

  /** Draws the legend starting at {@code top}; returns its rows. */
  static int legend(StringBuilder out, List<Entry> entries, double top) {
    out.append("<g class=\"legend\" fill=\"").append(Style.TEXT).append("\">");
    int rows = layout(entries, out, top);
    out.append("</g>\n");
    return rows;
  }

  private static int layout(List<Entry> entries, StringBuilder out, double top) {
    double x = LEFT;
    int row = 0;
    for (Entry e : entries) {
      // System fonts vary; about 7 px per character at 12 px is a safe estimate.
      double width = 34 + 7.0 * e.name().length();
      if (x + width > WIDTH - RIGHT && x > LEFT) {
        x = LEFT;
        row++;
      }
      if (out != null) {
        double y = top + row * LEGEND_ROW + 12;
        out.append("<g class=\"legend-entry\">");
        if (e.filled()) {
          out.append("<rect x=\"")
              .append(Svg.coord(x))
              .append("\" y=\"")
              .append(Svg.coord(y - 10))
              .append("\" width=\"22\" height=\"12\" fill=\"")
              .append(e.color())
              .append("\" stroke=\"")
              .append(Style.AXIS)
              .append("\"/>");
        } else {
          out.append("<line x1=\"")
              .append(Svg.coord(x))
              .append("\" x2=\"")
              .append(Svg.coord(x + 22))
              .append("\" y1=\"")
              .append(Svg.coord(y - 4))
              .append("\" y2=\"")
              .append(Svg.coord(y - 4))
              .append("\" stroke=\"")
              .append(e.color())
              .append("\" stroke-width=\"2.5\"");
          if (!e.dash().isEmpty()) {
            out.append(" stroke-dasharray=\"").append(e.dash()).append('"');
          }
          out.append("/>");
        }
        Svg.text(out, x + 28, y, e.name());
        out.append("</g>");
      }
      x += width + 16;
    }
    return entries.isEmpty() ? 0 : row + 1;
  }
}
