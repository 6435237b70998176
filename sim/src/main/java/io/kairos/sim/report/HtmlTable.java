package io.kairos.sim.report;

import java.util.ArrayList;
import java.util.List;

/**
 * Builds an HTML {@code <table>} with a caption, a header row of {@code <th scope="col">}, and rows
 * whose first cell is a {@code <th scope="row">}. Every cell is escaped; cells marked numeric are
 * right-aligned.
 */
final class HtmlTable {
  private final String caption;
  private final List<String> header;
  private final boolean[] numeric;
  private final List<List<String>> rows = new ArrayList<>();

  HtmlTable(String caption, List<String> header, boolean... numeric) {
    this.caption = caption;
    this.header = List.copyOf(header);
    this.numeric = new boolean[header.size()];
    for (int i = 0; i < numeric.length && i < header.size(); i++) {
      this.numeric[i] = numeric[i];
    }
  }

  HtmlTable row(List<String> cells) {
    if (cells.size() != header.size()) {
      throw new IllegalArgumentException(
          "table "
              + caption
              + ": row of "
              + cells.size()
              + " cells for "
              + header.size()
              + " columns");
    }
    rows.add(List.copyOf(cells));
    return this;
  }

  String html() {
    var out = new StringBuilder(256 + rows.size() * 64);
    out.append("<table>\n<caption>").append(Svg.escape(caption)).append("</caption>\n<thead><tr>");
    for (int c = 0; c < header.size(); c++) {
      out.append("<th scope=\"col\"")
          .append(numeric[c] ? " class=\"num\"" : "")
          .append('>')
          .append(Svg.escape(header.get(c)))
          .append("</th>");
    }
    out.append("</tr></thead>\n<tbody>\n");
    for (List<String> row : rows) {
      out.append("<tr>");
      for (int c = 0; c < row.size(); c++) {
        String tag = c == 0 ? "th" : "td";
        out.append('<')
            .append(tag)
            .append(c == 0 ? " scope=\"row\"" : "")
            .append(numeric[c] ? " class=\"num\"" : "")
            .append('>')
            .append(Svg.escape(row.get(c)))
            .append("</")
            .append(tag)
            .append('>');
      }
      out.append("</tr>\n");
    }
    out.append("</tbody>\n</table>\n");
    return out.toString();
  }
}
