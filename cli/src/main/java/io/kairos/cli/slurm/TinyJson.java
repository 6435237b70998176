package io.kairos.cli.slurm;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON srun and scontrol exchange with the controller, read and written without Jackson (whose
 * start-up alone would double srun's): objects as {@link Map}s, arrays as {@link List}s, numbers as
 * {@link Long} (or {@link Double} with a fraction or exponent), strings, booleans and null. Strict
 * enough for the controller's replies; not a general-purpose parser.
 */
final class TinyJson {
  private final String text;
  private int at;

  private TinyJson(String text) {
    this.text = text;
  }

  /**
   * The value {@code text} holds.
   *
   * @throws IllegalArgumentException at the first character that is not JSON
   */
  static Object parse(String text) {
    var p = new TinyJson(text);
    Object value = p.value();
    p.space();
    if (p.at != text.length()) {
      throw p.error("trailing characters");
    }
    return value;
  }

  /** {@code value} as JSON: maps, lists, strings, numbers, booleans and null. */
  static String write(Object value) {
    var out = new StringBuilder();
    write(value, out);
    return out.toString();
  }

  private static void write(Object value, StringBuilder out) {
    switch (value) {
      case null -> out.append("null");
      case String s -> string(s, out);
      case Number n -> out.append(n);
      case Boolean b -> out.append(b);
      case Map<?, ?> m -> {
        out.append('{');
        boolean first = true;
        for (var e : m.entrySet()) {
          if (!first) {
            out.append(',');
          }
          first = false;
          string(String.valueOf(e.getKey()), out);
          out.append(':');
          write(e.getValue(), out);
        }
        out.append('}');
      }
      case List<?> l -> {
        out.append('[');
        for (int i = 0; i < l.size(); i++) {
          if (i > 0) {
            out.append(',');
          }
          write(l.get(i), out);
        }
        out.append(']');
      }
      default -> throw new IllegalArgumentException("cannot write " + value.getClass());
    }
  }

  private static void string(String s, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }

  private Object value() {
    space();
    if (at >= text.length()) {
      throw error("unexpected end");
    }
    char c = text.charAt(at);
    return switch (c) {
      case '{' -> object();
      case '[' -> array();
      case '"' -> string();
      case 't' -> literal("true", Boolean.TRUE);
      case 'f' -> literal("false", Boolean.FALSE);
      case 'n' -> literal("null", null);
      default -> number();
    };
  }

  private Map<String, Object> object() {
    at++;
    var map = new LinkedHashMap<String, Object>();
    space();
    if (peek() == '}') {
      at++;
      return map;
    }
    while (true) {
      space();
      if (peek() != '"') {
        throw error("a member name");
      }
      String key = string();
      space();
      expect(':');
      map.put(key, value());
      space();
      char c = next();
      if (c == '}') {
        return map;
      }
      if (c != ',') {
        throw error("',' or '}'");
      }
    }
  }

  private List<Object> array() {
    at++;
    var list = new ArrayList<Object>();
    space();
    if (peek() == ']') {
      at++;
      return list;
    }
    while (true) {
      list.add(value());
      space();
      char c = next();
      if (c == ']') {
        return list;
      }
      if (c != ',') {
        throw error("',' or ']'");
      }
    }
  }

  private String string() {
    at++;
    var out = new StringBuilder();
    while (true) {
      char c = next();
      if (c == '"') {
        return out.toString();
      }
      if (c != '\\') {
        out.append(c);
        continue;
      }
      char e = next();
      switch (e) {
        case '"', '\\', '/' -> out.append(e);
        case 'b' -> out.append('\b');
        case 'f' -> out.append('\f');
        case 'n' -> out.append('\n');
        case 'r' -> out.append('\r');
        case 't' -> out.append('\t');
        case 'u' -> {
          if (at + 4 > text.length()) {
            throw error("four hex digits");
          }
          out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
          at += 4;
        }
        default -> throw error("an escape");
      }
    }
  }

  private Object number() {
    int start = at;
    while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
      at++;
    }
    String n = text.substring(start, at);
    if (n.isEmpty()) {
      throw error("a value");
    }
    try {
      return n.contains(".") || n.contains("e") || n.contains("E")
          ? (Object) Double.parseDouble(n)
          : (Object) Long.parseLong(n);
    } catch (NumberFormatException e) {
      throw error("a number");
    }
  }

  private Object literal(String word, Object value) {
    if (!text.startsWith(word, at)) {
      throw error(word);
    }
    at += word.length();
    return value;
  }

  private void space() {
    while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
      at++;
    }
  }

  private char peek() {
    return at < text.length() ? text.charAt(at) : '\0';
  }

  private char next() {
    if (at >= text.length()) {
      throw error("more input");
    }
    return text.charAt(at++);
  }

  private void expect(char c) {
    if (next() != c) {
      throw error("'" + c + "'");
    }
  }

  private IllegalArgumentException error(String expected) {
    return new IllegalArgumentException("bad JSON at " + at + ": expected " + expected);
  }
}
