package io.kairos.sim.trace;

/**
 * A trace file that cannot be read: names the file, the line (1-based, 0 when the whole file is at
 * fault), the field and what is wrong, so the user can fix the input.
 */
public final class TraceFormatException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String file;
  private final long line;
  private final String field;

  public TraceFormatException(String file, long line, String field, String detail) {
    super(format(file, line, field, detail));
    this.file = file;
    this.line = line;
    this.field = field;
  }

  private static String format(String file, long line, String field, String detail) {
    var where = line > 0 ? file + ":" + line : file;
    return field.isEmpty() ? where + ": " + detail : where + ": field '" + field + "': " + detail;
  }

  public String file() {
    return file;
  }

  public long line() {
    return line;
  }

  public String field() {
    return field;
  }
}
