package io.kairos.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Slurm's value formats, read into what the Kairos API takes: time limits, host lists and signals.
 * Each method throws {@link IllegalArgumentException} whose message is the problem, a semicolon,
 * and the fix; the caller adds where the value came from.
 */
final class SlurmSyntax {
  private SlurmSyntax() {}

  /** The most names a host list may expand to (the controller's limit on excluded nodes). */
  static final int MAX_HOSTS = 4096;

  private static final long MAX_TIME_LIMIT_SEC = 365L * 24 * 3600;

  /** Slurm's six time formats; the groups are days, then up to three clock fields. */
  private static final Pattern MINUTES = Pattern.compile("(\\d{1,9})");

  private static final Pattern CLOCK = Pattern.compile("(\\d{1,9}):(\\d{1,9})(?::(\\d{1,9}))?");
  private static final Pattern DAYS =
      Pattern.compile("(\\d{1,9})-(\\d{1,9})(?::(\\d{1,9})(?::(\\d{1,9}))?)?");

  private static final Map<String, String> SIGNAL_NUMBERS =
      Map.of("1", "HUP", "2", "INT", "3", "QUIT", "10", "USR1", "12", "USR2", "15", "TERM");

  /**
   * Slurm's {@code --time} as seconds: "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S". Unlike
   * Kairos' own "90" (seconds), a bare number is minutes here.
   */
  static long timeLimitSec(String text) {
    String t = text.strip();
    String fix = "write minutes, M:S, H:M:S, D-H, D-H:M or D-H:M:S, e.g. 90 or 2-00:00:00";
    if (t.equalsIgnoreCase("UNLIMITED") || t.equalsIgnoreCase("INFINITE")) {
      throw new IllegalArgumentException(
          "Kairos needs a time limit; give one of at most 365 days, e.g. 7-00:00:00");
    }
    long seconds;
    Matcher m;
    if ((m = MINUTES.matcher(t)).matches()) {
      seconds = Long.parseLong(m.group(1)) * 60;
    } else if ((m = CLOCK.matcher(t)).matches()) {
      seconds =
          m.group(3) == null
              ? Long.parseLong(m.group(1)) * 60 + Long.parseLong(m.group(2))
              : Long.parseLong(m.group(1)) * 3600
                  + Long.parseLong(m.group(2)) * 60
                  + Long.parseLong(m.group(3));
    } else if ((m = DAYS.matcher(t)).matches()) {
      seconds =
          Long.parseLong(m.group(1)) * 86400
              + Long.parseLong(m.group(2)) * 3600
              + (m.group(3) == null ? 0 : Long.parseLong(m.group(3)) * 60)
              + (m.group(4) == null ? 0 : Long.parseLong(m.group(4)));
    } else {
      throw new IllegalArgumentException("cannot read the time '" + t + "'; " + fix);
    }
    if (seconds == 0) {
      throw new IllegalArgumentException(
          "a time limit of 0 means none in Slurm, and Kairos needs one; give one of at most"
              + " 365 days, e.g. 7-00:00:00");
    }
    if (seconds > MAX_TIME_LIMIT_SEC) {
      throw new IllegalArgumentException(
          "the time limit is over 365 days; give at most 365-00:00:00");
    }
    return seconds;
  }

  /** Seconds as the controller's "H:MM:SS" (hours may pass 24): 5400 → "1:30:00". */
  static String clock(long seconds) {
    return String.format(
        Locale.ROOT, "%d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60);
  }

  /**
   * A Slurm host list, expanded: "n[1-3,7],gpu[08-10]" → n1, n2, n3, n7, gpu08, gpu09, gpu10.
   * Zero-padded ranges keep their width; several brackets in one name multiply out.
   */
  static List<String> hostList(String text) {
    var out = new ArrayList<String>();
    for (String part : splitTopLevel(text.strip())) {
      if (part.isEmpty()) {
        throw new IllegalArgumentException(
            "an empty node name in '" + text + "'; separate node names with one comma");
      }
      expand(part, "", out, text);
    }
    return out;
  }

  private static List<String> splitTopLevel(String text) {
    var parts = new ArrayList<String>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '[') {
        depth++;
      } else if (c == ']') {
        depth--;
      } else if (c == ',' && depth == 0) {
        parts.add(text.substring(start, i));
        start = i + 1;
      }
    }
    parts.add(text.substring(start));
    return parts;
  }

  private static void expand(String rest, String prefix, List<String> out, String whole) {
    int open = rest.indexOf('[');
    if (open < 0) {
      if (rest.indexOf(']') >= 0) {
        throw badHostList(whole, "a ']' without its '['");
      }
      out.add(prefix + rest);
      if (out.size() > MAX_HOSTS) {
        throw new IllegalArgumentException(
            "'" + whole + "' names more than " + MAX_HOSTS + " nodes; exclude fewer");
      }
      return;
    }
    int close = rest.indexOf(']', open);
    if (close < 0) {
      throw badHostList(whole, "a '[' without its ']'");
    }
    String head = prefix + rest.substring(0, open);
    String tail = rest.substring(close + 1);
    for (String range : rest.substring(open + 1, close).split(",", -1)) {
      int dash = range.indexOf('-');
      String lo = dash < 0 ? range : range.substring(0, dash);
      String hi = dash < 0 ? range : range.substring(dash + 1);
      if (!lo.matches("\\d{1,9}") || !hi.matches("\\d{1,9}")) {
        throw badHostList(whole, "'" + range + "' is not a number or a range such as 1-4");
      }
      long from = Long.parseLong(lo);
      long to = Long.parseLong(hi);
      if (to < from) {
        throw badHostList(whole, "the range " + range + " runs backwards");
      }
      if (to - from >= MAX_HOSTS) {
        throw new IllegalArgumentException(
            "'" + whole + "' names more than " + MAX_HOSTS + " nodes; exclude fewer");
      }
      int width = lo.length();
      for (long n = from; n <= to; n++) {
        String number = String.format(Locale.ROOT, "%0" + width + "d", n);
        expand(tail, head + number, out, whole);
      }
    }
  }

  private static IllegalArgumentException badHostList(String whole, String problem) {
    return new IllegalArgumentException(
        "cannot read the node list '"
            + whole
            + "': "
            + problem
            + "; write names and ranges such as n1,n[3-5,8]");
  }

  /** A signal by name (USR1, SIGUSR1) or by Linux number (10), as its name without SIG. */
  static String signal(String text) {
    String t = text.strip().toUpperCase(Locale.ROOT);
    if (SIGNAL_NUMBERS.containsKey(t)) {
      return SIGNAL_NUMBERS.get(t);
    }
    String name = t.startsWith("SIG") ? t.substring(3) : t;
    if (!SIGNAL_NUMBERS.containsValue(name)) {
      throw new IllegalArgumentException(
          "'"
              + text
              + "' is not a signal a job may ask for; use one of TERM, INT, HUP, QUIT,"
              + " USR1 or USR2");
    }
    return name;
  }
}
