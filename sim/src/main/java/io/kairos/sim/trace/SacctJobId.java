package io.kairos.sim.trace;

/**
 * A JobID as sacct prints it: what kind of line it is (a job, an array task, a pending array
 * record, a heterogeneous job's component, or a step), and the job's number.
 */
record SacctJobId(Kind kind, long base) {
  enum Kind {
    /** {@code 123} */
    JOB,
    /** {@code 123_4} */
    ARRAY_TASK,
    /** {@code 123_[5-10]} or {@code 123_[5,7%2]}: array tasks still pending when sacct ran */
    PENDING_ARRAY,
    /** {@code 123+0} */
    HET_COMPONENT,
    /** {@code 123.batch}, {@code 123.extern}, {@code 123.0}, {@code 123_4.0}, {@code 123+1.0} */
    STEP
  }

  /** At most this many digits: the id fits in a long. */
  private static final int MAX_DIGITS = 18;

  static SacctJobId parse(String s, String source, long lineNumber) {
    int i = digitsEnd(s, 0);
    if (i == 0 || i > MAX_DIGITS || Long.parseLong(s, 0, i, 10) == 0) {
      throw bad(s, source, lineNumber);
    }
    long base = Long.parseLong(s, 0, i, 10);
    if (i == s.length()) {
      return new SacctJobId(Kind.JOB, base);
    }
    char c = s.charAt(i);
    if (c == '.' && i + 1 < s.length()) {
      return new SacctJobId(Kind.STEP, base);
    }
    if (c == '_' && i + 1 < s.length() && s.charAt(i + 1) == '[') {
      if (s.endsWith("]") && s.length() > i + 3) {
        return new SacctJobId(Kind.PENDING_ARRAY, base);
      }
      throw bad(s, source, lineNumber);
    }
    if (c == '_' || c == '+') {
      int j = digitsEnd(s, i + 1);
      if (j > i + 1 && j == s.length()) {
        return new SacctJobId(c == '_' ? Kind.ARRAY_TASK : Kind.HET_COMPONENT, base);
      }
      if (j > i + 1 && s.charAt(j) == '.' && j + 1 < s.length()) {
        return new SacctJobId(Kind.STEP, base);
      }
    }
    throw bad(s, source, lineNumber);
  }

  private static int digitsEnd(String s, int from) {
    int i = from;
    while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
      i++;
    }
    return i;
  }

  private static TraceFormatException bad(String s, String source, long lineNumber) {
    return new TraceFormatException(
        source,
        lineNumber,
        SacctColumns.JOB_ID,
        "expected a job id like 123, 123_4, 123_[1-5], 123+0 or 123.batch, got '" + s + "'");
  }
}
