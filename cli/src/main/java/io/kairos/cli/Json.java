package io.kairos.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * The client's one JSON mapper. Replies are read leniently (a newer server may add fields), and
 * {@code --output json} prints the server's reply as it came, pretty-printed.
 */
final class Json {
  private Json() {}

  static final ObjectMapper MAPPER =
      JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();

  static <T> T convert(JsonNode node, Class<T> type) {
    try {
      return MAPPER.treeToValue(node, type);
    } catch (JsonProcessingException | IllegalArgumentException e) {
      throw ApiException.unexpected(
          "unexpected reply from the controller: not a "
              + type.getSimpleName()
              + ": "
              + firstLine(e.getMessage()));
    }
  }

  /** A JSON array as a list of records; anything else is an unexpected reply. */
  static <T> List<T> list(JsonNode node, Class<T> type) {
    if (node == null || !node.isArray()) {
      throw ApiException.unexpected(
          "unexpected reply from the controller: expected a JSON array of " + type.getSimpleName());
    }
    var out = new ArrayList<T>(node.size());
    node.forEach(n -> out.add(convert(n, type)));
    return out;
  }

  static byte[] bytes(Object value) {
    try {
      return MAPPER.writeValueAsBytes(value);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write " + value + " as JSON", e);
    }
  }

  static void print(PrintWriter out, JsonNode node) {
    try {
      out.println(MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(node));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot print JSON", e);
    }
    out.flush();
  }

  static String firstLine(String message) {
    return message == null ? "" : message.lines().findFirst().orElse("");
  }
}
