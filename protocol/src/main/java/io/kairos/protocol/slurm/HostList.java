package io.kairos.protocol.slurm;

import java.util.ArrayList;
import java.util.List;

/**
 * Slurm's host lists: {@code gpu[001-004]}, {@code a[1-2,5],b3}, {@code rack[1-2]-n[01-02]}.
 *
 * <p>{@link #expand} reads one as {@code scontrol show hostnames} does: entries separated by commas
 * outside brackets (or by spaces), each a name with bracketed ranges; a range {@code lo-hi} counts
 * up with {@code lo}'s width when {@code lo} is zero-padded ({@code n[01-3]} is n01 n02 n03), every
 * bracket multiplies out ({@code rack[1-2]-n[01-02]} is four names), and the order is the order
 * written ({@code n[3,1]} is n3 n1). Text after the last bracket is refused, as Slurm refuses
 * {@code x[1-2]y}.
 *
 * <p>{@link #compress} writes one as {@code scontrol show hostlist} does, keeping the order:
 * neighbours that share a prefix share a bracket and ascending runs become ranges, so n3,n1,n2 is
 * {@code n[3,1-2]} and expands back to the same order. That order matters: a job's node list is in
 * rank order, and scripts take the first name as the rank-0 host.
 */
public final class HostList {
  /** The most names one list may expand to: a bound on what a typo such as n[1-999999999] costs. */
  public static final int MAX_HOSTS = 100_000;

  private HostList() {}

  /**
   * The names of {@code list}, in the order written; empty for a blank list.
   *
   * @throws IllegalArgumentException naming the list, for a bracket that does not close, a range
   *     that counts down, text after a bracket, or more than {@value #MAX_HOSTS} names
   */
  public static List<String> expand(String list) {
    var out = new ArrayList<String>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i <= list.length(); i++) {
      char c = i < list.length() ? list.charAt(i) : ',';
      if (c == '[') {
        depth++;
      } else if (c == ']') {
        depth--;
        if (depth < 0) {
          throw invalid(list);
        }
      } else if (depth == 0 && (c == ',' || Character.isWhitespace(c))) {
        String entry = list.substring(start, i);
        if (!entry.isEmpty()) {
          expandEntry(entry, list, out);
        }
        start = i + 1;
      }
    }
    if (depth != 0) {
      throw invalid(list);
    }
    return List.copyOf(out);
  }

  /** One entry: a prefix, then brackets each followed by more text, the last by nothing. */
  private static void expandEntry(String entry, String list, List<String> out) {
    int open = entry.indexOf('[');
    if (open < 0) {
      add(out, entry, list);
      return;
    }
    int close = entry.indexOf(']', open);
    if (close < 0 || entry.indexOf('[', open + 1) >= 0 && entry.indexOf('[', open + 1) < close) {
      throw invalid(list);
    }
    String prefix = entry.substring(0, open);
    String rest = entry.substring(close + 1);
    if (!rest.isEmpty() && rest.indexOf('[') < 0) {
      throw invalid(list); // Slurm refuses x[1-2]y
    }
    for (String number : numbers(entry.substring(open + 1, close), list)) {
      if (rest.isEmpty()) {
        add(out, prefix + number, list);
      } else {
        expandEntry(prefix + number + rest, list, out);
      }
    }
  }

  /** {@code 1-3,7,09-10}: every number, each as wide as its range's first when that is padded. */
  private static List<String> numbers(String ranges, String list) {
    var out = new ArrayList<String>();
    for (String part : ranges.split(",", -1)) {
      int dash = part.indexOf('-');
      String lo = dash < 0 ? part : part.substring(0, dash);
      String hi = dash < 0 ? part : part.substring(dash + 1);
      if (!isDigits(lo) || !isDigits(hi)) {
        throw invalid(list);
      }
      long from = Long.parseLong(lo);
      long to = Long.parseLong(hi);
      if (to < from) {
        throw new IllegalArgumentException(
            "Invalid hostlist: " + list + " (the range " + part + " counts down)");
      }
      if (to - from >= MAX_HOSTS) {
        throw tooMany(list);
      }
      int width = lo.length() > 1 && lo.charAt(0) == '0' ? lo.length() : 0;
      for (long n = from; n <= to; n++) {
        out.add(pad(n, width));
        if (out.size() > MAX_HOSTS) {
          throw tooMany(list);
        }
      }
    }
    return out;
  }

  private static void add(List<String> out, String name, String list) {
    if (out.size() >= MAX_HOSTS) {
      throw tooMany(list);
    }
    out.add(name);
  }

  /**
   * {@code hosts} in Slurm's compressed form, in their order: n1,n2,n3,n5 is {@code n[1-3,5]};
   * n3,n1,n2 is {@code n[3,1-2]}; a1,b1,a2 stays {@code a1,b1,a2}. Empty for no hosts.
   */
  public static String compress(List<String> hosts) {
    var out = new StringBuilder();
    int i = 0;
    while (i < hosts.size()) {
      Name first = Name.of(hosts.get(i));
      int j = i + 1;
      while (j < hosts.size()
          && first.number() != null
          && Name.of(hosts.get(j)).number() != null
          && Name.of(hosts.get(j)).prefix().equals(first.prefix())) {
        j++;
      }
      if (out.length() > 0) {
        out.append(',');
      }
      if (j == i + 1) {
        out.append(hosts.get(i));
      } else {
        out.append(first.prefix()).append('[');
        appendRanges(hosts.subList(i, j), out);
        out.append(']');
      }
      i = j;
    }
    return out.toString();
  }

  /** Names sharing one prefix, as ranges of their numbers: 1-3,5 (ascending runs only). */
  private static void appendRanges(List<String> group, StringBuilder out) {
    int k = 0;
    while (k < group.size()) {
      Name start = Name.of(group.get(k));
      int end = k;
      while (end + 1 < group.size() && continues(Name.of(group.get(end)), group.get(end + 1))) {
        end++;
      }
      if (k > 0) {
        out.append(',');
      }
      out.append(start.number());
      if (end > k) {
        out.append('-').append(Name.of(group.get(end)).number());
      }
      k = end + 1;
    }
  }

  /** Whether {@code next} is {@code previous} plus one, written as wide. */
  private static boolean continues(Name previous, String next) {
    String digits = previous.number();
    int width = digits.length() > 1 && digits.charAt(0) == '0' ? digits.length() : 0;
    Name n = Name.of(next);
    if (digits.length() > 18 || n.number().length() > 18) {
      return false;
    }
    return pad(Long.parseLong(digits) + 1, width).equals(n.number())
        && (width == 0 || n.number().length() == width);
  }

  /** A host name as its text before the trailing digits, and those digits (null: none). */
  private record Name(String prefix, String number) {
    static Name of(String host) {
      int end = host.length();
      int start = end;
      while (start > 0 && Character.isDigit(host.charAt(start - 1))) {
        start--;
      }
      return start == end
          ? new Name(host, null)
          : new Name(host.substring(0, start), host.substring(start));
    }
  }

  private static String pad(long n, int width) {
    String digits = Long.toString(n);
    return digits.length() >= width ? digits : "0".repeat(width - digits.length()) + digits;
  }

  private static boolean isDigits(String s) {
    if (s.isEmpty() || s.length() > 18) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) < '0' || s.charAt(i) > '9') {
        return false;
      }
    }
    return true;
  }

  private static IllegalArgumentException invalid(String list) {
    return new IllegalArgumentException("Invalid hostlist: " + list);
  }

  private static IllegalArgumentException tooMany(String list) {
    return new IllegalArgumentException(
        "Invalid hostlist: " + list + " (more than " + MAX_HOSTS + " names)");
  }
}
