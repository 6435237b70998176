package io.kairos.sim.report;

import java.util.Locale;

/**
 * Text helpers shared by the SVG and HTML writers: escaping and deterministic number formats. SVG
 * is written as text into a {@link StringBuilder}; the few element shapes the charts use do not
 * need a DOM.
 */
public final class Svg {
  private Svg() {}

  /** The SVG namespace, needed by standalone {@code .svg} files (harmless inline in HTML). */
  public static final String NS = "http://www.w3.org/2000/svg";

  /**
   * Escapes text for XML and HTML, in element content and in double-quoted attributes: {@code & < >
   * " '}; control characters other than tab and newline (not allowed in XML 1.0) become U+FFFD.
   */
  public static String escape(String text) {
    StringBuilder out = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      String replacement =
          switch (c) {
            case '&' -> "&amp;";
            case '<' -> "&lt;";
            case '>' -> "&gt;";
            case '"' -> "&quot;";
            case '\'' -> "&#39;";
            default ->
                c < 0x20 && c != '\t' && c != '\n' || c == 0xFFFE || c == 0xFFFF ? "\uFFFD" : null;
          };
      if (replacement != null && out == null) {
        out = new StringBuilder(text.length() + 16).append(text, 0, i);
      }
      if (out != null) {
        if (replacement != null) {
          out.append(replacement);
        } else {
          out.append(c);
        }
      }
    }
    return out == null ? text : out.toString();
  }

  /** Appends {@code <text x=".." y="..">label</text>}, the label escaped. */
  public static void text(StringBuilder out, double x, double y, String label) {
    out.append("<text x=\"")
        .append(coord(x))
        .append("\" y=\"")
        .append(coord(y))
        .append("\">")
        .append(escape(label))
        .append("</text>");
  }

  /** A coordinate: one decimal, no trailing ".0", never "-0". */
  public static String coord(double value) {
    if (!Double.isFinite(value)) {
      throw new IllegalArgumentException("svg: coordinate " + value + " is not finite");
    }
    long tenths = Math.round(value * 10);
    if (tenths % 10 == 0) {
      return Long.toString(tenths / 10);
    }
    return (tenths < 0 ? "-" : "") + Math.abs(tenths) / 10 + "." + Math.abs(tenths) % 10;
  }

  /** A number with {@code decimals} decimals, Locale.ROOT, never "-0". */
  public static String fixed(double value, int decimals) {
    String s = String.format(Locale.ROOT, "%." + decimals + "f", value);
    return s.matches("-0(\\.0*)?") ? s.substring(1) : s;
  }

  /** A whole number with thousands separators: 12,345. */
  public static String grouped(long value) {
    return String.format(Locale.ROOT, "%,d", value);
  }

  /** A fraction as a percentage with one decimal: 0.4567 is "45.7%". */
  public static String percent(double fraction) {
    return fixed(fraction * 100, 1) + "%";
  }

  /** An id-safe form of {@code name}: lower-case letters, digits and dashes. */
  public static String slug(String name) {
    String s = name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-");
    s = s.replaceAll("^-+|-+$", "");
    return s.isEmpty() ? "x" : s;
  }
}
