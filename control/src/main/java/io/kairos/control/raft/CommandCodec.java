package io.kairos.control.raft;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlResult;
import io.kairos.control.state.StateImage;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;

/**
 * Bytes for the log, replies and snapshots: a leading format byte, then JSON. The byte is there
 * from the first entry so that the format can change while old log entries still decode.
 */
public final class CommandCodec {
  /** Format 1: JSON of the sealed command hierarchy, with an {@code op} type tag. */
  static final byte FORMAT_JSON = 1;

  private static final ObjectMapper JSON =
      JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();

  private CommandCodec() {}

  public static byte[] encode(ControlCommand command) {
    return withFormat(write(command));
  }

  public static ControlCommand decode(byte[] bytes) {
    return read(checkFormat(bytes), ControlCommand.class);
  }

  public static byte[] encodeResult(ControlResult result) {
    return withFormat(write(result));
  }

  public static ControlResult decodeResult(byte[] bytes) {
    return read(checkFormat(bytes), ControlResult.class);
  }

  public static void writeImage(StateImage image, OutputStream out) throws IOException {
    writeImage(image, out, () -> {});
  }

  /**
   * Writes the image as one JSON object, job by job, calling {@code pace} every {@link #PACE_EVERY}
   * jobs: the snapshot writer uses it to yield the CPU, so that encoding a large state does not
   * starve the API on a small machine.
   */
  static void writeImage(StateImage image, OutputStream out, Runnable pace) throws IOException {
    out.write(FORMAT_JSON);
    try (var g = JSON.createGenerator(out)) {
      g.writeStartObject();
      g.writeNumberField("version", image.version());
      g.writeNumberField("nextJobId", image.nextJobId());
      g.writeNumberField("nextEpoch", image.nextEpoch());
      g.writeArrayFieldStart("jobs");
      int n = 0;
      for (var job : image.jobs()) {
        JSON.writeValue(g, job);
        if (++n % PACE_EVERY == 0) {
          g.flush();
          pace.run();
        }
      }
      g.writeEndArray();
      g.writeFieldName("nodes");
      JSON.writeValue(g, image.nodes());
      g.writeFieldName("tokens");
      JSON.writeValue(g, image.tokens());
      if (!image.users().isEmpty()) {
        // Only when there is a table: snapshots without one keep the bytes they had before it.
        g.writeFieldName("users");
        JSON.writeValue(g, image.users());
      }
      if (image.limits() != null) {
        g.writeFieldName("limits");
        JSON.writeValue(g, image.limits());
      }
      if (!image.configs().isEmpty()) {
        g.writeFieldName("configs");
        JSON.writeValue(g, image.configs());
      }
      g.writeEndObject();
    }
  }

  static final int PACE_EVERY = 2_000;

  public static StateImage readImage(InputStream in) throws IOException {
    int format = in.read();
    if (format != FORMAT_JSON) {
      throw new IOException("unknown snapshot format " + format);
    }
    return JSON.readValue(in, StateImage.class);
  }

  private static byte[] withFormat(byte[] json) {
    byte[] out = new byte[json.length + 1];
    out[0] = FORMAT_JSON;
    System.arraycopy(json, 0, out, 1, json.length);
    return out;
  }

  /** {@code bytes}, once its format byte is known (the JSON follows it; no copy is made). */
  private static byte[] checkFormat(byte[] bytes) {
    if (bytes.length == 0 || bytes[0] != FORMAT_JSON) {
      throw new IllegalArgumentException(
          "unknown log entry format " + (bytes.length == 0 ? "(empty)" : bytes[0]));
    }
    return bytes;
  }

  private static byte[] write(Object value) {
    try {
      return JSON.writeValueAsBytes(value);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The JSON after the format byte of {@code bytes}. */
  private static <T> T read(byte[] bytes, Class<T> type) {
    try {
      return JSON.readValue(bytes, 1, bytes.length - 1, type);
    } catch (IOException e) {
      throw new IllegalArgumentException("undecodable log entry: " + e.getMessage(), e);
    }
  }
}
