package io.kairos.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A plain text table for people: a header row, then rows, columns left-aligned and two spaces
 * apart, no trailing blanks. Cells are {@code String.valueOf} of what is given; null prints as
 * empty.
 */
final class Table {
  private final List<String> header;
  private final List<List<String>> rows = new ArrayList<>();

  Table(String... header) {
    this.header = List.of(header);
  }

  Table row(Object... cells) {
    if (cells.length != header.size()) {
      throw new IllegalArgumentException(
          "row has " + cells.length + " cells, header has " + header.size());
    }
    rows.add(Arrays.stream(cells).map(c -> c == null ? "" : String.valueOf(c)).toList());
    return this;
  }

  /** The rows as CSV (RFC 4180: a cell with a comma, quote or line break is quoted). */
  void printCsv(PrintWriter out) {
    csvLine(out, header);
    rows.forEach(row -> csvLine(out, row));
    out.flush();
  }

  private static void csvLine(PrintWriter out, List<String> cells) {
    var sb = new StringBuilder();
    for (int i = 0; i < cells.size(); i++) {
      String c = cells.get(i);
      if (i > 0) {
        sb.append(',');
      }
      if (c.indexOf(',') >= 0
          || c.indexOf('"') >= 0
          || c.indexOf('\n') >= 0
          || c.indexOf('\r') >= 0) {
        sb.append('"').append(c.replace("\"", "\"\"")).append('"');
      } else {
        sb.append(c);
      }
    }
    out.println(sb);
  }

  void print(PrintWriter out) {
    int[] width = new int[header.size()];
    for (int c = 0; c < width.length; c++) {
      width[c] = header.get(c).length();
      for (List<String> row : rows) {
        width[c] = Math.max(width[c], row.get(c).length());
      }
    }
    line(out, header, width);
    rows.forEach(row -> line(out, row, width));
    out.flush();
  }

  private static void line(PrintWriter out, List<String> cells, int[] width) {
    var sb = new StringBuilder();
    for (int c = 0; c < cells.size(); c++) {
      if (c > 0) {
        sb.append("  ");
      }
      sb.append(cells.get(c));
      if (c < cells.size() - 1) {
        sb.append(" ".repeat(width[c] - cells.get(c).length()));
      }
    }
    out.println(sb.toString().stripTrailing());
  }
}
