package io.kairos.control.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.raft.StateWatch;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class EventStreamTest {
  /** Reads one event frame (lines up to a blank line). */
  static List<String> frame(BufferedReader in) throws IOException {
    var lines = new ArrayList<String>();
    for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
      lines.add(line);
    }
    return lines;
  }

  @Test
  void opensWithTheVersionThenSendsOneChangedEventPerChange() throws Exception {
    var watch = new StateWatch();
    watch.poke();
    var pipe = new PipedInputStream(1 << 16);
    var out = new PipedOutputStream(pipe);
    var stream = new EventStream(watch, Duration.ofHours(1), Duration.ZERO);
    Thread server = Thread.ofVirtual().start(() -> serveQuietly(stream, out));
    try (var in = new BufferedReader(new InputStreamReader(pipe, StandardCharsets.UTF_8))) {
      assertThat(frame(in)).containsExactly("retry: 3000");
      assertThat(frame(in)).containsExactly("id: 1", "event: changed", "data: {\"version\":1}");
      watch.poke();
      assertThat(frame(in)).containsExactly("id: 2", "event: changed", "data: {\"version\":2}");
    } finally {
      server.interrupt();
      server.join(5_000);
    }
    assertThat(server.isAlive()).as("an interrupt ends the stream").isFalse();
  }

  @Test
  void sendsAKeepAliveCommentWhenNothingChanges() throws Exception {
    var watch = new StateWatch();
    var pipe = new PipedInputStream(1 << 16);
    var out = new PipedOutputStream(pipe);
    var stream = new EventStream(watch, Duration.ofMillis(50), Duration.ZERO);
    Thread server = Thread.ofVirtual().start(() -> serveQuietly(stream, out));
    try (var in = new BufferedReader(new InputStreamReader(pipe, StandardCharsets.UTF_8))) {
      frame(in);
      frame(in);
      assertThat(frame(in)).containsExactly(": keep-alive");
    } finally {
      server.interrupt();
      server.join(5_000);
    }
  }

  @Test
  void returnsWhenTheClientIsGone() throws Exception {
    var watch = new StateWatch();
    var closed =
        new OutputStream() {
          @Override
          public void write(int b) throws IOException {
            throw new IOException("client gone");
          }
        };
    var stream = new EventStream(watch, Duration.ofMillis(10), Duration.ZERO);
    Thread server = Thread.ofVirtual().start(() -> serveQuietly(stream, closed));
    server.join(5_000);
    assertThat(server.isAlive()).isFalse();
  }

  private static void serveQuietly(EventStream stream, OutputStream out) {
    try {
      stream.serve(out);
    } catch (IOException e) {
      // the reader closed the pipe: the stream is over
    }
  }
}
