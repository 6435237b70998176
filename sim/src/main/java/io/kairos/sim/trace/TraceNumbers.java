package io.kairos.sim.trace;

/**
 * Strict number parsing for trace fields, without regular expressions and, for plain integers,
 * without allocation. Accepted: an optional sign, digits with an optional fraction, and an optional
 * exponent ({@code 12}, {@code -1}, {@code 1234.5}, {@code 1e3}). Rejected: anything else,
 * including {@code NaN}, {@code Infinity} and hexadecimal.
 */
final class TraceNumbers {
  /** Integers with at most this many digits are accumulated in a long without overflow. */
  private static final int FAST_DIGITS = 18;

  private TraceNumbers() {}

  /**
   * Parses {@code s[from, to)} as a decimal number.
   *
   * @return the value, or {@link Double#NaN} when the text is not a finite number
   */
  static double decimal(String s, int from, int to) {
    int i = from;
    boolean negative = false;
    if (i < to && (s.charAt(i) == '-' || s.charAt(i) == '+')) {
      negative = s.charAt(i) == '-';
      i++;
    }
    long value = 0;
    int digits = 0;
    while (i < to) {
      int d = s.charAt(i) - '0';
      if (d < 0 || d > 9) {
        break;
      }
      value = value * 10 + d;
      digits++;
      i++;
    }
    if (i == to && digits > 0 && digits <= FAST_DIGITS) {
      return negative ? -value : value;
    }
    return slowDecimal(s, from, to);
  }

  private static double slowDecimal(String s, int from, int to) {
    if (!isDecimalSyntax(s, from, to)) {
      return Double.NaN;
    }
    double value = Double.parseDouble(s.substring(from, to));
    return Double.isInfinite(value) ? Double.NaN : value;
  }

  private static boolean isDecimalSyntax(String s, int from, int to) {
    int i = from;
    if (i < to && (s.charAt(i) == '-' || s.charAt(i) == '+')) {
      i++;
    }
    int mantissaDigits = 0;
    while (i < to && isDigit(s.charAt(i))) {
      i++;
      mantissaDigits++;
    }
    if (i < to && s.charAt(i) == '.') {
      i++;
      while (i < to && isDigit(s.charAt(i))) {
        i++;
        mantissaDigits++;
      }
    }
    if (mantissaDigits == 0) {
      return false;
    }
    if (i < to && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
      i++;
      if (i < to && (s.charAt(i) == '-' || s.charAt(i) == '+')) {
        i++;
      }
      int exponentDigits = 0;
      while (i < to && isDigit(s.charAt(i))) {
        i++;
        exponentDigits++;
      }
      if (exponentDigits == 0) {
        return false;
      }
    }
    return i == to;
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  /** Whether {@code value} is a whole number that fits in a long. */
  static boolean isWhole(double value) {
    return value == Math.rint(value) && Math.abs(value) < 0x1p63;
  }

  /** Whether {@code value} is a whole number that fits in an int. */
  static boolean isInt(double value) {
    return value == Math.rint(value) && value >= Integer.MIN_VALUE && value <= Integer.MAX_VALUE;
  }

  /** Seconds rounded up to a whole number ({@code value} must be finite and not negative). */
  static long ceilSeconds(double value) {
    return (long) Math.ceil(value);
  }
}
