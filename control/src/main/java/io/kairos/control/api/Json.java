package io.kairos.control.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.util.stream.Collectors;

/**
 * The API's JSON: strict on the way in (unknown fields, wrong types, fractions where integers
 * belong, trailing garbage are errors naming the field), plain on the way out.
 */
public final class Json {
  public static final ObjectMapper MAPPER =
      JsonMapper.builder(
              JsonFactory.builder()
                  .streamReadConstraints(
                      StreamReadConstraints.builder()
                          .maxNestingDepth(64)
                          // As long as a body may be: the fields' own limits (a batch script's
                          // 4 MiB among them) then refuse what is too long, naming the field.
                          .maxStringLength((int) Api.MAX_BODY_BYTES)
                          .maxNumberLength(40)
                          .build())
                  .build())
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
          .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
          .build();

  private Json() {}

  /** Parses {@code body} as {@code type}, or throws an {@link ApiError} naming the field. */
  public static <T> T read(byte[] body, Class<T> type) {
    return read(body, () -> MAPPER.readValue(body, type));
  }

  /** {@link #read(byte[], Class)} with another mapper (the extender's, for one). */
  public static <T> T read(ObjectMapper mapper, byte[] body, Class<T> type) {
    return read(body, () -> mapper.readValue(body, type));
  }

  public static <T> T read(byte[] body, com.fasterxml.jackson.core.type.TypeReference<T> type) {
    return read(body, () -> MAPPER.readValue(body, type));
  }

  private interface Reader<T> {
    T read() throws IOException;
  }

  private static <T> T read(byte[] body, Reader<T> reader) {
    if (body.length == 0) {
      throw ApiError.invalid(null, "the request body is empty", "send JSON");
    }
    try {
      return reader.read();
    } catch (IOException e) {
      throw toApiError(e);
    }
  }

  /** Serializes a reply body. */
  public static String write(Object value) {
    try {
      return MAPPER.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialize " + value.getClass(), e);
    }
  }

  static ApiError toApiError(IOException e) {
    if (e instanceof UnrecognizedPropertyException u) {
      String valid =
          u.getKnownPropertyIds() == null
              ? ""
              : u.getKnownPropertyIds().stream()
                  .map(Object::toString)
                  .sorted()
                  .collect(Collectors.joining(", "));
      return ApiError.invalid(
          path(u), "unknown field '" + u.getPropertyName() + "'", "valid fields are: " + valid);
    }
    if (e instanceof InvalidFormatException f) {
      return ApiError.invalid(
          path(f),
          "'" + f.getValue() + "' is not a valid " + simple(f.getTargetType()),
          "send a " + simple(f.getTargetType()));
    }
    if (e instanceof MismatchedInputException m) {
      String field = path(m);
      String expected = m.getTargetType() == null ? "value" : simple(m.getTargetType());
      return ApiError.invalid(
          field,
          (field == null ? "the body" : "'" + field + "'")
              + " has the wrong type: expected "
              + article(expected)
              + " "
              + expected,
          "send " + article(expected) + " " + expected);
    }
    if (e instanceof JsonParseException p) {
      var loc = p.getLocation();
      String where =
          loc == null ? "" : " at line " + loc.getLineNr() + ", column " + loc.getColumnNr();
      return ApiError.invalid(
          null, "malformed JSON" + where + ": " + p.getOriginalMessage(), "send valid UTF-8 JSON");
    }
    if (e instanceof JsonMappingException m) {
      return ApiError.invalid(path(m), "invalid value: " + m.getOriginalMessage(), null);
    }
    if (e instanceof JsonProcessingException p) {
      return ApiError.invalid(null, "malformed JSON: " + p.getOriginalMessage(), "send valid JSON");
    }
    return ApiError.invalid(null, "unreadable body: " + e.getMessage(), "send valid JSON");
  }

  private static String path(JsonMappingException e) {
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
    return sb.isEmpty() ? null : sb.toString();
  }

  private static String simple(Class<?> type) {
    if (type == null) {
      return "value";
    }
    if (type == Integer.class || type == int.class || type == Long.class || type == long.class) {
      return "integer";
    }
    if (type == String.class) {
      return "string";
    }
    if (type == Boolean.class || type == boolean.class) {
      return "boolean";
    }
    if (java.util.List.class.isAssignableFrom(type) || type.isArray()) {
      return "array";
    }
    if (java.util.Map.class.isAssignableFrom(type) || type.isRecord()) {
      return "object";
    }
    if (type.isEnum()) {
      return "one of " + java.util.Arrays.toString(type.getEnumConstants());
    }
    return type.getSimpleName();
  }

  private static String article(String noun) {
    return noun.startsWith("a") || noun.startsWith("i") || noun.startsWith("o") ? "an" : "a";
  }
}
