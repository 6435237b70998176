package io.kairos.cli;

import io.kairos.protocol.slurm.HostList;
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
   * A Slurm host list, expanded: "n[1-3,7],gpu[08-10]" → n1, n2, n3, n7, gpu08, gpu09, gpu10
   * ({@link HostList#expand}).
   */
  static List<String> hostList(String text) {
    if (text.isBlank()) {
      throw new IllegalArgumentException("an empty node list; name nodes such as n1,n[3-5,8]");
    }
    List<String> nodes;
    try {
      nodes = HostList.expand(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          e.getMessage() + "; write a node list such as n1,n[3-5,8]", e);
    }
    if (nodes.size() > MAX_NODES) {
      throw new IllegalArgumentException(
          "the node list " + text + " names more than " + MAX_NODES + " nodes");
    }
    return nodes;
  }

  /** The most nodes a node list given to sbatch may name. */
  static final int MAX_NODES = 4096;

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
