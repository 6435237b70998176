package io.kairos.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * A Slurm command line read as Slurm reads it (getopt_long): {@code --name=value}, {@code --name
 * value}, {@code -x value}, {@code -xvalue}, short flags together ({@code -hl}), any unambiguous
 * prefix of a long name, and {@code --} ending the options. Options before the first other word
 * unless {@code permute} (then anywhere, as squeue and sacct take them).
 *
 * @param options each option given, as (long name, value or null), in order
 * @param operands the other words, in order
 */
record SlurmArgs(List<Option> options, List<String> operands) {
  /** One option: its long name and its value (null for a flag). */
  record Option(String name, String value) {}

  /**
   * An option the command knows.
   *
   * @param name its long name
   * @param letter its short name, or 0
   * @param value whether it takes a value
   */
  record Spec(String name, char letter, boolean value) {}

  /**
   * Reads {@code words}.
   *
   * @param command the command's name, for messages
   * @param specs the command's options
   * @param permute true: options anywhere; false: the first other word ends them
   * @throws UsageException for an unknown or ambiguous option or a missing value
   */
  static SlurmArgs parse(String command, List<String> words, List<Spec> specs, boolean permute) {
    var options = new ArrayList<Option>();
    var operands = new ArrayList<String>();
    for (int i = 0; i < words.size(); i++) {
      String w = words.get(i);
      if (w.equals("--")) {
        operands.addAll(words.subList(i + 1, words.size()));
        break;
      }
      if (w.startsWith("--") && w.length() > 2) {
        int eq = w.indexOf('=');
        Spec s = longSpec(command, eq < 0 ? w.substring(2) : w.substring(2, eq), specs);
        String value = eq < 0 ? null : w.substring(eq + 1);
        if (s.value() && value == null) {
          if (i + 1 >= words.size()) {
            throw new UsageException("option '--" + s.name() + "' requires an argument");
          }
          value = words.get(++i);
        } else if (!s.value() && value != null) {
          throw new UsageException("option '--" + s.name() + "' doesn't allow an argument");
        }
        options.add(new Option(s.name(), value));
      } else if (w.startsWith("-") && w.length() > 1) {
        for (int j = 1; j < w.length(); j++) {
          Spec s = shortSpec(command, w.charAt(j), specs);
          if (!s.value()) {
            options.add(new Option(s.name(), null));
            continue;
          }
          String value = w.substring(j + 1);
          if (value.isEmpty()) {
            if (i + 1 >= words.size()) {
              throw new UsageException("option requires an argument -- '" + w.charAt(j) + "'");
            }
            value = words.get(++i);
          }
          options.add(new Option(s.name(), value));
          break;
        }
      } else if (permute) {
        operands.add(w);
      } else {
        operands.addAll(words.subList(i, words.size()));
        break;
      }
    }
    return new SlurmArgs(List.copyOf(options), List.copyOf(operands));
  }

  private static Spec longSpec(String command, String name, List<Spec> specs) {
    var matches = new ArrayList<Spec>();
    for (Spec s : specs) {
      if (s.name().equals(name)) {
        return s;
      }
      if (s.name().startsWith(name)) {
        matches.add(s);
      }
    }
    if (matches.size() == 1) {
      return matches.getFirst();
    }
    if (matches.isEmpty()) {
      throw new UsageException(
          "unrecognized option '--"
              + name
              + "' (see "
              + command
              + " --help for what Kairos takes)");
    }
    var names = new StringBuilder();
    for (Spec s : matches) {
      names.append(" '--").append(s.name()).append('\'');
    }
    throw new UsageException("option '--" + name + "' is ambiguous; possibilities:" + names);
  }

  private static Spec shortSpec(String command, char letter, List<Spec> specs) {
    for (Spec s : specs) {
      if (s.letter() == letter) {
        return s;
      }
    }
    throw new UsageException(
        "invalid option -- '" + letter + "' (see " + command + " --help for what Kairos takes)");
  }

  /** The last value given for {@code name}; null when not given. */
  String value(String name) {
    String v = null;
    for (Option o : options) {
      if (o.name().equals(name)) {
        v = o.value();
      }
    }
    return v;
  }

  /** Whether {@code name} was given. */
  boolean has(String name) {
    return options.stream().anyMatch(o -> o.name().equals(name));
  }

  /** Every value given for {@code name}, each split at commas. */
  List<String> list(String name) {
    var out = new ArrayList<String>();
    for (Option o : options) {
      if (o.name().equals(name) && o.value() != null) {
        for (String part : o.value().split(",")) {
          if (!part.isBlank()) {
            out.add(part.strip());
          }
        }
      }
    }
    return out;
  }

  /**
   * Specs from pairs of words: a long name, then its shape: {@code "x:"} (letter x, with a value),
   * {@code "x"} (letter x, a flag), {@code ":"} (no letter, a value) or {@code ""} (no letter, a
   * flag).
   */
  static List<Spec> specs(String... pairs) {
    var out = new ArrayList<Spec>();
    for (int i = 0; i + 1 < pairs.length; i += 2) {
      String shape = pairs[i + 1];
      boolean value = shape.endsWith(":");
      String letter = value ? shape.substring(0, shape.length() - 1) : shape;
      out.add(new Spec(pairs[i], letter.isEmpty() ? 0 : letter.charAt(0), value));
    }
    return List.copyOf(out);
  }
}
