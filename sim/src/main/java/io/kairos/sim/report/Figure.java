package io.kairos.sim.report;

/**
 * One chart of a report, ready to place in a page or to write as a file.
 *
 * @param id unique in the page (also the stem of the standalone file name)
 * @param title the visible heading, also the SVG's {@code <title>}
 * @param definition what the chart shows and how it was measured, one paragraph of plain text
 * @param svg the chart, a complete {@code <svg>} element
 * @param table HTML: the chart's data as one or more tables (the accessible fallback)
 * @param tableSummary what the data table holds, for its {@code <summary>}
 */
public record Figure(
    String id, String title, String definition, String svg, String table, String tableSummary) {
  /** The chart as a standalone SVG file: an XML declaration and the {@code <svg>} element. */
  public String standaloneSvg() {
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + svg;
  }

  /** The standalone file's name: {@code <id>.svg}. */
  public String fileName() {
    return id + ".svg";
  }
}
