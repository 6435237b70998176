package io.kairos.control.raft;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlState;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The golden codec tests' shared handling of their files ({@code src/test/resources/codec}): a log
 * is one entry's JSON per line (the format byte left out), its results one answer per line, its
 * snapshot the state's image as JSON.
 */
final class GoldenLogs {
  private GoldenLogs() {}

  /** A log line as the log holds it: the format byte, then the JSON. */
  static byte[] withFormat(String json) {
    byte[] body = json.getBytes(StandardCharsets.UTF_8);
    byte[] out = new byte[body.length + 1];
    out[0] = CommandCodec.FORMAT_JSON;
    System.arraycopy(body, 0, out, 1, body.length);
    return out;
  }

  /** The JSON after the format byte. */
  static String json(byte[] withFormat) {
    assertThat(withFormat[0]).isEqualTo(CommandCodec.FORMAT_JSON);
    return new String(withFormat, 1, withFormat.length - 1, StandardCharsets.UTF_8);
  }

  /** The state's snapshot image as JSON. */
  static String snapshotJson(ControlState state) {
    var out = new ByteArrayOutputStream();
    try {
      CommandCodec.writeImage(state.image(), out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return json(out.toByteArray());
  }

  /** A resource's non-empty lines. */
  static List<String> lines(String resource) {
    return Arrays.stream(text(resource).split("\n")).filter(l -> !l.isEmpty()).toList();
  }

  static String text(String resource) {
    try (InputStream in =
        Objects.requireNonNull(GoldenLogs.class.getResourceAsStream(resource), resource)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * With {@code -Dkairos.codec.rewrite=true}: writes {@code NAME.log}, {@code NAME.results} and
   * {@code NAME.snapshot.json} from {@code commands} into the source tree, then fails so that the
   * run is repeated without the property.
   */
  static void rewriteIfAsked(String name, List<ControlCommand> commands) {
    if (!Boolean.getBoolean("kairos.codec.rewrite")) {
      return;
    }
    var state = new ControlState();
    var log = new StringBuilder();
    var results = new StringBuilder();
    for (ControlCommand c : commands) {
      log.append(json(CommandCodec.encode(c))).append('\n');
      results.append(json(CommandCodec.encodeResult(state.apply(c)))).append('\n');
    }
    Path dir = Path.of("src/test/resources/codec");
    try {
      Files.writeString(dir.resolve(name + ".log"), log);
      Files.writeString(dir.resolve(name + ".results"), results);
      Files.writeString(dir.resolve(name + ".snapshot.json"), snapshotJson(state) + "\n");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    throw new AssertionError(
        "rewrote the " + name + " golden files: run again without the property");
  }
}
