package io.kairos.sim.trace;

import java.time.LocalDate;
import java.time.YearMonth;

/**
 * The two kinds of time {@code sacct} prints, parsed strictly and without regular expressions.
 *
 * <ul>
 *   <li>Instants ({@code Submit}, {@code Eligible}, {@code Start}, {@code End}): sacct's default
 *       {@code YYYY-MM-DDTHH:MM:SS}, local time without a zone. They become seconds since
 *       1970-01-01T00:00:00 as if the zone were UTC; only differences are used.
 *   <li>Lengths ({@code Elapsed}, {@code Timelimit}): Slurm's forms {@code MM}, {@code MM:SS},
 *       {@code HH:MM:SS}, {@code D-HH}, {@code D-HH:MM} and {@code D-HH:MM:SS}. A unit below a
 *       larger one is bounded (seconds and minutes below 60, hours below 24 after days); the
 *       leading unit is not, so {@code 90} is 90 minutes and {@code 36:00:00} 36 hours.
 * </ul>
 */
final class SacctTimes {
  /** Returned by {@link #epochSec} for text that is not an instant. */
  static final long NOT_A_TIME = Long.MIN_VALUE;

  private static final int INSTANT_LENGTH = "YYYY-MM-DDTHH:MM:SS".length();

  /** At most this many digits per part of a length: no overflow, even as days. */
  private static final int MAX_DIGITS = 9;

  private SacctTimes() {}

  /** Whether sacct printed "no time here": {@code Unknown}, {@code None} or nothing. */
  static boolean isNoTime(String text) {
    return text.isEmpty() || text.equals("Unknown") || text.equals("None");
  }

  /**
   * Parses {@code YYYY-MM-DDTHH:MM:SS} (a space instead of the {@code T} is accepted too).
   *
   * @return seconds since 1970-01-01T00:00:00 read as UTC, or {@link #NOT_A_TIME}
   */
  static long epochSec(String s) {
    if (s.length() != INSTANT_LENGTH
        || s.charAt(4) != '-'
        || s.charAt(7) != '-'
        || (s.charAt(10) != 'T' && s.charAt(10) != ' ')
        || s.charAt(13) != ':'
        || s.charAt(16) != ':') {
      return NOT_A_TIME;
    }
    int year = digits(s, 0, 4);
    int month = digits(s, 5, 2);
    int day = digits(s, 8, 2);
    int hour = digits(s, 11, 2);
    int minute = digits(s, 14, 2);
    int second = digits(s, 17, 2);
    if (year < 0
        || month < 1
        || month > 12
        || day < 1
        || day > YearMonth.of(year, month).lengthOfMonth()
        || hour < 0
        || hour > 23
        || minute < 0
        || minute > 59
        || second < 0
        || second > 59) {
      return NOT_A_TIME;
    }
    return LocalDate.of(year, month, day).toEpochDay() * 86_400L
        + hour * 3_600L
        + minute * 60L
        + second;
  }

  /**
   * Parses a Slurm length of time.
   *
   * <p>Worked examples: {@code 30} = 1,800 s; {@code 30:15} = 1,815 s; {@code 04:00:00} = 14,400 s;
   * {@code 2-12} = 216,000 s; {@code 1-00:30} = 88,200 s; {@code 7-00:00:00} = 604,800 s.
   *
   * @return seconds, or -1 when {@code s} is not a length
   */
  static long lengthSec(String s) {
    int dash = s.indexOf('-');
    long days = 0;
    int from = 0;
    if (dash >= 0) {
      days = number(s, 0, dash);
      if (days < 0) {
        return -1;
      }
      from = dash + 1;
    }
    // Up to three colon-separated parts after the optional days.
    long[] parts = new long[3];
    int count = 0;
    int i = from;
    while (true) {
      int colon = s.indexOf(':', i);
      int end = colon < 0 ? s.length() : colon;
      if (count == parts.length) {
        return -1;
      }
      parts[count] = number(s, i, end);
      if (parts[count] < 0) {
        return -1;
      }
      count++;
      if (colon < 0) {
        break;
      }
      i = colon + 1;
    }
    long hours;
    long minutes;
    long seconds;
    if (dash >= 0) {
      // D-HH, D-HH:MM, D-HH:MM:SS
      hours = parts[0];
      minutes = count > 1 ? parts[1] : 0;
      seconds = count > 2 ? parts[2] : 0;
      if (hours > 23) {
        return -1;
      }
    } else if (count == 1) {
      // MM
      hours = 0;
      minutes = parts[0];
      seconds = 0;
    } else if (count == 2) {
      // MM:SS
      hours = 0;
      minutes = parts[0];
      seconds = parts[1];
    } else {
      // HH:MM:SS
      hours = parts[0];
      minutes = parts[1];
      seconds = parts[2];
    }
    boolean minutesLead = dash < 0 && count <= 2;
    if (seconds > 59 || (!minutesLead && minutes > 59)) {
      return -1;
    }
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds;
  }

  /** The whole number in {@code s[from, to)}: 1 to {@link #MAX_DIGITS} digits, else -1. */
  private static long number(String s, int from, int to) {
    if (to <= from || to - from > MAX_DIGITS) {
      return -1;
    }
    long value = 0;
    for (int i = from; i < to; i++) {
      int d = s.charAt(i) - '0';
      if (d < 0 || d > 9) {
        return -1;
      }
      value = value * 10 + d;
    }
    return value;
  }

  /** The value of {@code n} decimal digits at {@code at}, or -1 when one is not a digit. */
  private static int digits(String s, int at, int n) {
    int value = 0;
    for (int i = at; i < at + n; i++) {
      int d = s.charAt(i) - '0';
      if (d < 0 || d > 9) {
        return -1;
      }
      value = value * 10 + d;
    }
    return value;
  }
}
