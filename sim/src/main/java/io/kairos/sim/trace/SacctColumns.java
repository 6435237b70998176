package io.kairos.sim.trace;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;

/**
 * The header of sacct's output, and how its lines split into values: where each column the {@link
 * SacctReader} uses is (-1 when the header lacks it), found by name in any order and any case, and
 * whether lines end with a '|' ({@code --parsable}) or not ({@code --parsable2}). The positions are
 * set once, by {@link #parse}.
 */
final class SacctColumns {
  static final String JOB_ID = "JobID";
  static final String JOB_ID_RAW = "JobIDRaw";
  static final String USER = "User";
  static final String PARTITION = "Partition";
  static final String SUBMIT = "Submit";
  static final String ELIGIBLE = "Eligible";
  static final String START = "Start";
  static final String END = "End";
  static final String ELAPSED = "Elapsed";
  static final String TIMELIMIT = "Timelimit";
  static final String NNODES = "NNodes";
  static final String NCPUS = "NCPUS";
  static final String REQ_TRES = "ReqTRES";
  static final String ALLOC_TRES = "AllocTRES";
  static final String STATE = "State";

  /** The columns the reader uses; any others in the header are ignored. */
  static final List<String> COLUMNS =
      List.of(
          JOB_ID,
          JOB_ID_RAW,
          USER,
          PARTITION,
          SUBMIT,
          ELIGIBLE,
          START,
          END,
          ELAPSED,
          TIMELIMIT,
          NNODES,
          NCPUS,
          REQ_TRES,
          ALLOC_TRES,
          STATE);

  int width;
  boolean trailingDelimiter;
  int jobId = -1;
  int jobIdRaw = -1;
  int user = -1;
  int partition = -1;
  int submit = -1;
  int eligible = -1;
  int start = -1;
  int end = -1;
  int elapsed = -1;
  int timelimit = -1;
  int nnodes = -1;
  int ncpus = -1;
  int reqTres = -1;
  int allocTres = -1;
  int state = -1;

  static SacctColumns parse(String line, String source, long lineNumber) {
    var c = new SacctColumns();
    var text = stripCr(line);
    // sacct --parsable ends every line with a '|'; --parsable2 does not.
    c.trailingDelimiter = text.endsWith("|");
    var names =
        (c.trailingDelimiter ? text.substring(0, text.length() - 1) : text).split("\\|", -1);
    c.width = names.length;
    var canonical = new HashMap<String, String>();
    for (var name : COLUMNS) {
      canonical.put(name.toLowerCase(Locale.ROOT), name);
    }
    var seen = new LinkedHashMap<String, Integer>();
    for (int i = 0; i < names.length; i++) {
      var name = names[i].strip();
      if (name.isEmpty()) {
        throw new TraceFormatException(
            source, lineNumber, "", "column " + (i + 1) + " of the header has no name");
      }
      var key = name.toLowerCase(Locale.ROOT);
      if (seen.putIfAbsent(key, i) != null) {
        throw new TraceFormatException(
            source, lineNumber, name, "the column appears twice in the header");
      }
      var known = canonical.get(key);
      if (known != null) {
        c.set(known, i);
      }
    }
    c.checkRequired(names, source, lineNumber);
    return c;
  }

  private void set(String name, int at) {
    switch (name) {
      case JOB_ID -> jobId = at;
      case JOB_ID_RAW -> jobIdRaw = at;
      case USER -> user = at;
      case PARTITION -> partition = at;
      case SUBMIT -> submit = at;
      case ELIGIBLE -> eligible = at;
      case START -> start = at;
      case END -> end = at;
      case ELAPSED -> elapsed = at;
      case TIMELIMIT -> timelimit = at;
      case NNODES -> nnodes = at;
      case NCPUS -> ncpus = at;
      case REQ_TRES -> reqTres = at;
      case ALLOC_TRES -> allocTres = at;
      case STATE -> state = at;
      default -> throw new IllegalStateException("column " + name + " has no field");
    }
  }

  private void checkRequired(String[] names, String source, long lineNumber) {
    var found = " (found: " + String.join(",", names) + ")";
    if (jobId < 0 && !names[0].isEmpty() && Character.isDigit(names[0].charAt(0))) {
      throw new TraceFormatException(
          source,
          lineNumber,
          JOB_ID,
          "the first line is not sacct's header (it starts with '"
              + names[0]
              + "'): run sacct without --noheader");
    }
    String[][] needs = {
      {JOB_ID}, {SUBMIT}, {START}, {END, ELAPSED}, {TIMELIMIT}, {ALLOC_TRES, REQ_TRES},
    };
    int[][] at = {
      {jobId}, {submit}, {start}, {end, elapsed}, {timelimit}, {allocTres, reqTres},
    };
    for (int i = 0; i < needs.length; i++) {
      if (at[i].length == 1 && at[i][0] < 0) {
        throw new TraceFormatException(
            source, lineNumber, needs[i][0], "required column is missing from the header" + found);
      }
      if (at[i].length == 2 && at[i][0] < 0 && at[i][1] < 0) {
        throw new TraceFormatException(
            source,
            lineNumber,
            needs[i][0],
            "the header needs " + needs[i][0] + " or " + needs[i][1] + found);
      }
    }
  }

  /** The line's values, trimmed; exactly {@link #width} of them. */
  String[] split(String line, String source, long lineNumber) {
    var text = stripCr(line);
    if (trailingDelimiter && text.endsWith("|")) {
      text = text.substring(0, text.length() - 1);
    }
    var values = text.split("\\|", -1);
    if (values.length != width) {
      throw new TraceFormatException(
          source,
          lineNumber,
          "",
          "expected "
              + width
              + " '|'-separated values (as in the header), got "
              + values.length
              + (values.length > width
                  ? " (a '|' inside a value such as JobName? leave that column out of --format)"
                  : ""));
    }
    for (int i = 0; i < values.length; i++) {
      values[i] = values[i].strip();
    }
    return values;
  }

  private static String stripCr(String line) {
    return line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
  }
}
