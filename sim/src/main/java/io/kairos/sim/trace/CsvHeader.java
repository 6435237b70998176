package io.kairos.sim.trace;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The header line of a CSV trace: column names to positions, checked against what is needed. */
final class CsvHeader {
  private final Map<String, Integer> positions;
  private final int width;

  private CsvHeader(Map<String, Integer> positions, int width) {
    this.positions = positions;
    this.width = width;
  }

  /**
   * Reads the header from a split line.
   *
   * @param required columns that must be present
   * @param allowed every column that may appear, or {@code null} to accept (and ignore) others
   * @throws TraceFormatException naming the column that is missing, repeated or unknown
   */
  static CsvHeader parse(
      CsvLine header, String source, long lineNumber, List<String> required, List<String> allowed) {
    var positions = new HashMap<String, Integer>();
    var names = new ArrayList<String>();
    for (int i = 0; i < header.count(); i++) {
      var name = header.text(i);
      if (name.isEmpty()) {
        throw new TraceFormatException(
            source, lineNumber, "", "column " + (i + 1) + " of the header has no name");
      }
      if (positions.putIfAbsent(name, i) != null) {
        throw new TraceFormatException(
            source, lineNumber, name, "the column appears twice in the header");
      }
      if (allowed != null && !allowed.contains(name)) {
        throw new TraceFormatException(
            source,
            lineNumber,
            name,
            "unknown column; the columns are " + String.join(",", allowed));
      }
      names.add(name);
    }
    for (var name : required) {
      if (!positions.containsKey(name)) {
        throw new TraceFormatException(
            source,
            lineNumber,
            name,
            "required column is missing from the header (found: " + String.join(",", names) + ")");
      }
    }
    return new CsvHeader(positions, header.count());
  }

  /** The column's position, or -1 when the header does not have it. */
  int position(String name) {
    return positions.getOrDefault(name, -1);
  }

  /** The number of columns. */
  int width() {
    return width;
  }
}
