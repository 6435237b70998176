package io.kairos.agent.gpu;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads nvidia-smi's value spellings: {@code "81559 MiB"}, {@code "45 C"}, {@code "Yes"}, and the
 * several ways of saying "no value" ({@code N/A}, {@code [N/A]}, {@code [Not Supported]}, {@code
 * [Unknown Error]}, {@code [GPU requires reset]}). Unknown numbers become {@link
 * GpuDetails#UNKNOWN}.
 */
final class SmiValues {
  private static final Pattern NUMBER = Pattern.compile("(-?\\d+)(?:\\.\\d+)?(?:\\s*(\\S+))?");

  private SmiValues() {}

  /** Whether nvidia-smi printed a placeholder instead of a value. */
  static boolean isMissing(String raw) {
    String v = raw.strip();
    return v.isEmpty()
        || v.equalsIgnoreCase("N/A")
        || v.startsWith("[")
        || v.equalsIgnoreCase("Not Supported")
        || v.equalsIgnoreCase("Unknown Error");
  }

  /** An integer with an optional unit suffix ({@code "45 C"}, {@code "3"}); -1 when missing. */
  static long number(String raw, String field) {
    if (isMissing(raw)) {
      return GpuDetails.UNKNOWN;
    }
    Matcher m = NUMBER.matcher(raw.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException(field + ": '" + raw.strip() + "' is not a number");
    }
    return Long.parseLong(m.group(1));
  }

  static int celsius(String raw, String field) {
    return (int) number(raw, field);
  }

  /** Memory in MiB ({@code "81559 MiB"} or, with {@code nounits}, {@code "81559"}) as bytes. */
  static long mibToBytes(String raw, String field) {
    long mib = number(raw, field);
    return mib < 0 ? GpuDetails.UNKNOWN : mib << 20;
  }

  /** {@code Yes} is true; {@code No} and missing are false. */
  static boolean yes(String raw) {
    return raw.strip().toLowerCase(Locale.ROOT).equals("yes");
  }
}
