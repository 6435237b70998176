package io.kairos.config;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.file.Path;

/**
 * The one way Kairos reads a configuration document (the tenancy file, a job file, a cluster file):
 * strictly, so that a mistake is an error rather than a silently dropped setting. A key given twice
 * is an error (Jackson's duplicate detection), and so is, when the document is bound to a record, a
 * key the record does not have or a null for a primitive. YAML by default; JSON for documents that
 * say they are JSON, so that its syntax errors read as JSON's.
 *
 * <p>Also the two pieces of Jackson's errors that messages quote: where in the text ({@link
 * #location}) and at which key ({@link #keyPath}).
 */
public final class StrictYaml {
  private StrictYaml() {}

  /** How a document is written. */
  public enum Syntax {
    YAML,
    JSON
  }

  private static final ObjectMapper YAML =
      YAMLMapper.builder()
          .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
          .build();

  private static final ObjectMapper JSON =
      JsonMapper.builder()
          .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
          .build();

  /**
   * The document as a tree; an empty document is a missing node (or null), as Jackson gives it.
   *
   * @throws JsonProcessingException on a syntax error or a duplicate key
   */
  public static JsonNode readTree(String text, Syntax syntax) throws JsonProcessingException {
    return (syntax == Syntax.JSON ? JSON : YAML).readTree(text);
  }

  /**
   * A tree bound to {@code type}; unknown keys and nulls for primitives are errors.
   *
   * @throws JsonProcessingException naming the key ({@link #keyPath}) where binding failed
   */
  public static <T> T treeToValue(JsonNode tree, Class<T> type) throws JsonProcessingException {
    return YAML.treeToValue(tree, type);
  }

  /**
   * A YAML file bound to {@code type}, with the checks of {@link #treeToValue}.
   *
   * @throws JsonMappingException when the document does not fit {@code type} (also when empty)
   * @throws JacksonException on a syntax error or a duplicate key
   * @throws IOException when the file cannot be read
   */
  public static <T> T readValue(Path file, Class<T> type) throws IOException {
    return YAML.readValue(file.toFile(), type);
  }

  /** Where in the text Jackson stopped, {@code line L, column C}; null when it does not say. */
  public static String location(JacksonException e) {
    JsonLocation at = e.getLocation();
    return at != null && at.getLineNr() > 0
        ? "line " + at.getLineNr() + ", column " + at.getColumnNr()
        : null;
  }

  /**
   * The key at which binding failed, as a key path: {@code nodes[0].count}; empty at the top of the
   * document.
   */
  public static String keyPath(JsonMappingException e) {
    var sb = new StringBuilder();
    for (var ref : e.getPath()) {
      if (ref.getFieldName() != null) {
        if (!sb.isEmpty()) {
          sb.append('.');
        }
        sb.append(ref.getFieldName());
      } else if (ref.getIndex() >= 0) {
        sb.append('[').append(ref.getIndex()).append(']');
      }
    }
    return sb.toString();
  }
}
