package io.kairos.protocol.names;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Slurm's host lists: {@link #compress} writes names as Slurm writes {@code SLURM_JOB_NODELIST}
 * ({@code gpu[001-004]}), {@link #expand} reads them back as {@code scontrol show hostnames} does.
 *
 * <p>Compression keeps the order of the names (the first is the batch host, rank 0's node): names
 * next to each other that share a prefix and end in digits share one bracket, and numbers that
 * follow each other with the same zero padding make a range. So {@code n1,n2,n3,m1,n5} is {@code
 * n[1-3],m1,n5}, {@code n01,n02,n3} is {@code n[01-02,3]}, {@code n2,n1} is {@code n[2,1]}, and a
 * name without trailing digits stays as it is. Checked against Slurm 22.05's {@code scontrol show
 * hostlist} and {@code scontrol show hostnames}.
 */
public final class HostList {
  /** The most names a list may expand to. */
  public static final int MAX_HOSTS = 4096;

  private HostList() {}

  /** The names in Slurm's compressed form, in their order; "" for none. */
  public static String compress(List<String> names) {
    var out = new StringBuilder();
    int i = 0;
    while (i < names.size()) {
      String name = names.get(i);
      int digits = trailingDigits(name);
      if (digits == 0 || digits > 18) {
        append(out, name);
        i++;
        continue;
      }
      String prefix = name.substring(0, name.length() - digits);
      // The names after this one with the same prefix and trailing digits share its bracket.
      int end = i + 1;
      while (end < names.size() && sameBracket(names.get(end), prefix)) {
        end++;
      }
      if (end == i + 1) {
        append(out, name);
        i++;
        continue;
      }
      var ranges = new StringBuilder();
      int j = i;
      while (j < end) {
        String lo = names.get(j).substring(prefix.length());
        long first = Long.parseLong(lo);
        int k = j + 1;
        while (k < end && names.get(k).substring(prefix.length()).equals(pad(first + k - j, lo))) {
          k++;
        }
        if (!ranges.isEmpty()) {
          ranges.append(',');
        }
        ranges.append(lo);
        if (k - j > 1) {
          ranges.append('-').append(names.get(k - 1).substring(prefix.length()));
        }
        j = k;
      }
      append(out, prefix + "[" + ranges + "]");
      i = end;
    }
    return out.toString();
  }

  private static boolean sameBracket(String name, String prefix) {
    int digits = trailingDigits(name);
    return digits > 0
        && digits <= 18
        && name.length() - digits == prefix.length()
        && name.startsWith(prefix);
  }

  /** {@code n} written with the width of {@code like} when that is zero-padded. */
  private static String pad(long n, String like) {
    return String.format(Locale.ROOT, "%0" + like.length() + "d", n);
  }

  private static int trailingDigits(String name) {
    int i = name.length();
    while (i > 0 && Character.isDigit(name.charAt(i - 1)) && name.charAt(i - 1) < 128) {
      i--;
    }
    return name.length() - i;
  }

  private static void append(StringBuilder out, String part) {
    if (!out.isEmpty()) {
      out.append(',');
    }
    out.append(part);
  }

  /**
   * A host list expanded, in its order: {@code n[1-3,7],gpu[08-10]} is n1, n2, n3, n7, gpu08,
   * gpu09, gpu10. A range keeps the width of its first number ({@code n[01-3]} is n01, n02, n03),
   * and several brackets in one name multiply out ({@code r[1-2]n[1-2]} is r1n1, r1n2, r2n1, r2n2).
   *
   * @throws IllegalArgumentException naming the problem and the fix: an empty name, an unclosed
   *     bracket, a range that is not numbers or runs backwards, more than {@value #MAX_HOSTS} names
   */
  public static List<String> expand(String text) {
    var out = new ArrayList<String>();
    String t = text.strip();
    if (t.isEmpty()) {
      return out;
    }
    for (String part : splitTopLevel(t)) {
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
        throw bad(whole, "a ']' without its '['");
      }
      out.add(prefix + rest);
      if (out.size() > MAX_HOSTS) {
        throw tooMany(whole);
      }
      return;
    }
    int close = rest.indexOf(']', open);
    if (close < 0) {
      throw bad(whole, "a '[' without its ']'");
    }
    String head = prefix + rest.substring(0, open);
    String tail = rest.substring(close + 1);
    for (String range : rest.substring(open + 1, close).split(",", -1)) {
      int dash = range.indexOf('-');
      String lo = dash < 0 ? range : range.substring(0, dash);
      String hi = dash < 0 ? range : range.substring(dash + 1);
      if (!lo.matches("\\d{1,9}") || !hi.matches("\\d{1,9}")) {
        throw bad(whole, "'" + range + "' is not a number or a range such as 1-4");
      }
      long from = Long.parseLong(lo);
      long to = Long.parseLong(hi);
      if (to < from) {
        throw bad(whole, "the range " + range + " runs backwards");
      }
      if (to - from >= MAX_HOSTS) {
        throw tooMany(whole);
      }
      for (long n = from; n <= to; n++) {
        expand(tail, head + pad(n, lo), out, whole);
      }
    }
  }

  private static IllegalArgumentException tooMany(String whole) {
    return new IllegalArgumentException(
        "'" + whole + "' names more than " + MAX_HOSTS + " nodes; name fewer");
  }

  private static IllegalArgumentException bad(String whole, String problem) {
    return new IllegalArgumentException(
        "cannot read the node list '"
            + whole
            + "': "
            + problem
            + "; write names and ranges such as n1,n[3-5,8]");
  }
}
