package io.kairos.cli;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;

/**
 * How client commands show times: the API's ISO-8601 instants in the local zone, compact for tables
 * ({@code 14:03:07} today, {@code 03-28 14:03} otherwise), ages ({@code 5s}, {@code 3m}, {@code
 * 2h}, {@code 4d}) and elapsed times ({@code 1:02:03}, {@code 2-01:02:03} past a day).
 */
final class TimeFormat {
  private TimeFormat() {}

  private static final DateTimeFormatter TODAY = DateTimeFormatter.ofPattern("HH:mm:ss");
  private static final DateTimeFormatter OTHER_DAY = DateTimeFormatter.ofPattern("MM-dd HH:mm");
  private static final DateTimeFormatter FULL = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

  /** The instant, or null when {@code iso} is null or not an ISO-8601 instant. */
  static Instant parse(String iso) {
    if (iso == null || iso.isBlank()) {
      return null;
    }
    try {
      return Instant.parse(iso.strip());
    } catch (DateTimeException e) {
      return null;
    }
  }

  /** {@code HH:mm:ss} when on {@code now}'s local date, else {@code MM-dd HH:mm}; "-" if none. */
  static String compact(String iso, Instant now, ZoneId zone) {
    Instant t = parse(iso);
    if (t == null) {
      return "-";
    }
    ZonedDateTime local = t.atZone(zone);
    boolean today = local.toLocalDate().equals(now.atZone(zone).toLocalDate());
    return (today ? TODAY : OTHER_DAY).format(local);
  }

  /** {@code yyyy-MM-dd HH:mm:ss} in the local zone; "-" if none. */
  static String full(String iso, ZoneId zone) {
    Instant t = parse(iso);
    return t == null ? "-" : FULL.format(t.atZone(zone));
  }

  /** The largest whole unit: {@code 5s}, {@code 3m}, {@code 2h}, {@code 4d}; 0s if negative. */
  static String age(Duration d) {
    long s = Math.max(0, d.toSeconds());
    if (s < 60) {
      return s + "s";
    }
    if (s < 3600) {
      return s / 60 + "m";
    }
    if (s < 86_400) {
      return s / 3600 + "h";
    }
    return s / 86_400 + "d";
  }

  /** {@code H:MM:SS}, or {@code D-HH:MM:SS} from one day on (as Slurm's sacct shows it). */
  static String elapsed(Duration d) {
    long s = Math.max(0, d.toSeconds());
    long days = s / 86_400;
    long h = s / 3600 % 24;
    long m = s / 60 % 60;
    long sec = s % 60;
    return days > 0
        ? String.format("%d-%02d:%02d:%02d", days, h, m, sec)
        : String.format("%d:%02d:%02d", h, m, sec);
  }

  /** Elapsed time between two ISO instants, "-" when either is missing. */
  static String elapsed(String fromIso, String toIso) {
    Instant from = parse(fromIso);
    Instant to = parse(toIso);
    return from == null || to == null ? "-" : elapsed(Duration.between(from, to));
  }
}
