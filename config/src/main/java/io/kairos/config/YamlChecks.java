package io.kairos.config;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Checks over a YAML tree that collect problems instead of stopping at the first: each problem one
 * line, {@code source: key.path: problem (fix: ...)}. A check that fails records its problem and
 * returns false or null, so the caller skips what depends on the value and goes on with the rest of
 * the document.
 *
 * <p>Key paths name list entries by their {@code name} where they have one ({@code
 * queues[vision].quotas}), else by position ({@code queues[#0]}); see {@link #entryPath}.
 */
final class YamlChecks {
  private final String source;
  private final List<String> problems = new ArrayList<>();

  /**
   * @param source how problems name the document, e.g. the file name
   */
  YamlChecks(String source) {
    this.source = source;
  }

  /** The problems so far, in the order found. */
  List<String> problems() {
    return problems;
  }

  boolean ok() {
    return problems.isEmpty();
  }

  /** Records {@code source: path: what (fix: fix)}. */
  void problem(String path, String what, String fix) {
    problems.add(source + ": " + path + ": " + what + " (fix: " + fix + ")");
  }

  /** Records {@code source: line}, a message that already names its key (the core's). */
  void line(String line) {
    problems.add(source + ": " + line);
  }

  /** Every key of {@code map} must be one of {@code allowed}; a near miss gets a suggestion. */
  void keys(JsonNode map, String path, List<String> allowed) {
    for (var it = map.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (allowed.contains(key)) {
        continue;
      }
      String kp = path.isEmpty() ? key : path + "." + key;
      String closest = DidYouMean.closest(key, allowed);
      if (closest != null) {
        problem(
            kp, "unknown key; did you mean '" + closest + "'?", "rename it to '" + closest + "'");
      } else {
        problem(kp, "unknown key", "remove it, or use one of " + String.join(", ", allowed));
      }
    }
  }

  boolean mapping(JsonNode node, String path) {
    if (node.isObject()) {
      return true;
    }
    problem(
        path,
        "must be a mapping (key: value), got " + kind(node),
        "see docs/examples/tenancy.yaml");
    return false;
  }

  boolean list(JsonNode node, String path) {
    if (node.isArray()) {
      return true;
    }
    problem(path, "must be a list (- ...), got " + kind(node), "see docs/examples/tenancy.yaml");
    return false;
  }

  /** The text at {@code parent.key}; null when absent or not text. */
  String text(JsonNode parent, String key, String path, boolean required) {
    JsonNode node = parent.get(key);
    String kp = path + "." + key;
    if (absent(node)) {
      if (required) {
        problem(kp, "missing", "add " + key + ": ...");
      }
      return null;
    }
    if (!node.isTextual()) {
      problem(
          kp, "must be text, got " + kind(node), "write a name, quoted if it looks like a number");
      return null;
    }
    return node.asText();
  }

  /** The whole number at {@code parent.key} in {@code [min, max]}; null when absent or wrong. */
  Long integer(JsonNode parent, String key, String path, boolean required, long min, long max) {
    JsonNode node = parent.get(key);
    String kp = path + "." + key;
    String fix = "write a whole number between " + min + " and " + max;
    if (absent(node)) {
      if (required) {
        problem(kp, "missing", fix);
      }
      return null;
    }
    if (!node.isIntegralNumber()) {
      problem(kp, "must be a whole number, got " + kind(node), fix);
      return null;
    }
    if (!node.canConvertToLong() || node.longValue() < min || node.longValue() > max) {
      problem(kp, "out of range: " + node.asText(), fix);
      return null;
    }
    return node.longValue();
  }

  /** The boolean at {@code parent.key}; null when absent or not a boolean. */
  Boolean bool(JsonNode parent, String key, String path) {
    JsonNode node = parent.get(key);
    if (absent(node)) {
      return null;
    }
    if (!node.isBoolean()) {
      problem(path + "." + key, "must be true or false, got " + kind(node), "write true or false");
      return null;
    }
    return node.booleanValue();
  }

  /**
   * The constant named at {@code parent.key}, as written ({@code LOWER_PRIORITY}) or in Kueue's
   * spelling ({@code LowerPriority}); {@code absentValue} when absent, null when wrong.
   */
  <E extends Enum<E>> E enumValue(
      JsonNode parent, String key, String path, Class<E> type, E absentValue) {
    JsonNode node = parent.get(key);
    if (absent(node)) {
      return absentValue;
    }
    List<String> names = Arrays.stream(type.getEnumConstants()).map(Enum::name).toList();
    String kp = path + "." + key;
    String fix = "use one of " + String.join(", ", names);
    if (!node.isTextual()) {
      problem(kp, "must be one of " + names + ", got " + kind(node), fix);
      return null;
    }
    // Kueue's spelling is accepted too: LowerPriority, Any, Never.
    String asConstant =
        node.asText().replaceAll("([a-z])([A-Z])", "$1_$2").toUpperCase(Locale.ROOT);
    for (E constant : type.getEnumConstants()) {
      if (constant.name().equals(node.asText()) || constant.name().equals(asConstant)) {
        return constant;
      }
    }
    String closest = DidYouMean.closest(node.asText(), names);
    problem(
        kp,
        "unknown value '"
            + node.asText()
            + "'"
            + (closest == null ? "" : "; did you mean '" + closest + "'?"),
        fix);
    return null;
  }

  /** {@code list[name]} for an entry with a non-blank text name, else {@code list[#i]}. */
  static String entryPath(String list, int i, JsonNode entry) {
    JsonNode name = entry.isObject() ? entry.get("name") : null;
    if (name != null && name.isTextual() && !name.asText().isBlank()) {
      return list + "[" + name.asText() + "]";
    }
    return list + "[#" + i + "]";
  }

  /** Not there, or written as null ({@code key:} or {@code key: ~}). */
  static boolean absent(JsonNode node) {
    return node == null || node.isNull() || node.isMissingNode();
  }

  /** What a node is, for "got ..." in a message; long text cut at 40 characters. */
  static String kind(JsonNode node) {
    if (node.isObject()) {
      return "a mapping";
    }
    if (node.isArray()) {
      return "a list";
    }
    if (node.isBoolean()) {
      return "a boolean";
    }
    if (node.isNumber()) {
      return "the number " + node.asText();
    }
    if (node.isTextual()) {
      String t = node.asText();
      return "'" + (t.length() > 40 ? t.substring(0, 40) + "..." : t) + "'";
    }
    return "nothing";
  }

  /** The first line of an exception's message, stripped; "unreadable" when there is none. */
  static String firstLine(String message) {
    if (message == null || message.isBlank()) {
      return "unreadable";
    }
    return message.strip().lines().findFirst().orElse("").strip();
  }

  /** A message's non-blank lines. */
  static List<String> lines(String message) {
    return message == null
        ? List.of("invalid")
        : message.lines().filter(l -> !l.isBlank()).toList();
  }
}
