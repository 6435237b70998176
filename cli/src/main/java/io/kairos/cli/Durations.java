package io.kairos.cli;

import java.util.regex.Pattern;

/** Durations on the command line: "500ms", "30s", "2m", "1h", or a bare number of seconds. */
final class Durations {
  private static final Pattern FORM = Pattern.compile("(\\d{1,9})(ms|s|m|h)?");

  private Durations() {}

  /**
   * @throws UsageException naming {@code option} when {@code text} is not a duration
   */
  static long millis(String text, String option) {
    var m = FORM.matcher(text == null ? "" : text.strip());
    if (!m.matches()) {
      throw new UsageException(
          option + " " + text + " is not a duration: write 500ms, 30s, 2m or 1h");
    }
    long n = Long.parseLong(m.group(1));
    String unit = m.group(2) == null ? "s" : m.group(2);
    return switch (unit) {
      case "ms" -> n;
      case "m" -> n * 60_000;
      case "h" -> n * 3_600_000;
      default -> n * 1_000;
    };
  }
}
