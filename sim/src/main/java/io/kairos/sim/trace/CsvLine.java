package io.kairos.sim.trace;

import java.util.Arrays;

/**
 * One line of a simple comma-separated file (no quoting), split in place: the field bounds are kept
 * as offsets, with surrounding spaces and tabs trimmed, so no substring is made until a field is
 * asked for as text. Reused from line to line.
 */
final class CsvLine {
  private String line = "";
  private int[] starts = new int[16];
  private int[] ends = new int[16];
  private int count;

  /** Splits {@code text} at every comma; returns the number of fields (at least 1). */
  int split(String text) {
    line = text;
    count = 0;
    int from = 0;
    int length = text.length();
    while (true) {
      int comma = text.indexOf(',', from);
      int to = comma < 0 ? length : comma;
      add(from, to);
      if (comma < 0) {
        return count;
      }
      from = comma + 1;
    }
  }

  private void add(int from, int to) {
    while (from < to && isBlank(line.charAt(from))) {
      from++;
    }
    while (to > from && isBlank(line.charAt(to - 1))) {
      to--;
    }
    if (count == starts.length) {
      starts = Arrays.copyOf(starts, count * 2);
      ends = Arrays.copyOf(ends, count * 2);
    }
    starts[count] = from;
    ends[count] = to;
    count++;
  }

  private static boolean isBlank(char c) {
    return c == ' ' || c == '\t' || c == '\r';
  }

  int count() {
    return count;
  }

  String line() {
    return line;
  }

  int start(int field) {
    return starts[field];
  }

  int end(int field) {
    return ends[field];
  }

  boolean isEmpty(int field) {
    return starts[field] == ends[field];
  }

  /** The field's text, trimmed. */
  String text(int field) {
    return line.substring(starts[field], ends[field]);
  }

  /** The field parsed as a decimal number; {@link Double#NaN} when it is not one. */
  double decimal(int field) {
    return TraceNumbers.decimal(line, starts[field], ends[field]);
  }
}
