package io.kairos.control.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.JobRequest;
import io.kairos.control.state.StateImage;
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Snapshots come from a copy of the state kept off the apply thread ({@link ShadowState}): at each
 * point of the log, its image encodes to the very bytes the live state's would, it loads back to
 * the same bytes, and it is never touched by entries applied after it was asked for.
 */
class ShadowStateTest {
  @TempDir Path dir;

  /** The golden logs (every exit reason, requeues, the user table): each prefix, to the byte. */
  @Test
  void theCopysImageIsTheLiveStatesToTheByteAtEveryPointOfTheLog() throws Exception {
    for (String log : List.of("/codec/exit-reasons.log", "/codec/run-as.log")) {
      var live = new ControlState();
      try (var shadow = new ShadowState()) {
        for (String line : lines(log)) {
          byte[] entry = withFormat(line);
          live.apply(CommandCodec.decode(entry));
          shadow.apply(ByteString.copyFrom(entry));
          assertThat(encode(shadow.image().get(10, TimeUnit.SECONDS)))
              .as("%s after %s", log, line)
              .isEqualTo(encode(live.image()));
        }
      }
    }
    // and the whole log's is the golden snapshot a replay writes
    var live = new ControlState();
    try (var shadow = new ShadowState()) {
      for (String line : lines("/codec/exit-reasons.log")) {
        live.apply(CommandCodec.decode(withFormat(line)));
        shadow.apply(ByteString.copyFrom(withFormat(line)));
      }
      byte[] bytes = encode(shadow.image().get(10, TimeUnit.SECONDS));
      assertThat(new String(bytes, 1, bytes.length - 1, StandardCharsets.UTF_8))
          .isEqualTo(text("/codec/exit-reasons.replayed.snapshot.json").strip());
      // round trip: loaded back, it writes the same bytes
      assertThat(encode(CommandCodec.readImage(new ByteArrayInputStream(bytes)))).isEqualTo(bytes);
    }
  }

  /** An image asked for is the state at that point: entries handed over after it do not show. */
  @Test
  void anImageIsNotTouchedByLaterEntries() throws Exception {
    var live = new ControlState();
    try (var shadow = new ShadowState()) {
      byte[] first = submit(0, "alice");
      live.apply(CommandCodec.decode(first));
      shadow.apply(ByteString.copyFrom(first));
      var asked = shadow.image();
      byte[] expected = encode(live.image());
      for (int i = 1; i < 200; i++) {
        shadow.apply(ByteString.copyFrom(submit(i, "bob")));
      }
      StateImage image = asked.get(10, TimeUnit.SECONDS);
      assertThat(encode(image)).isEqualTo(expected);
      assertThat(image.jobs()).hasSize(1);
      assertThat(shadow.image().get(10, TimeUnit.SECONDS).jobs()).hasSize(200);
    }
  }

  /** A snapshot loaded replaces the copy: what follows applies to it, as to the live state. */
  @Test
  void aResetStartsFromTheLoadedSnapshot() throws Exception {
    var live = new ControlState();
    for (int i = 0; i < 5; i++) {
      live.apply(CommandCodec.decode(submit(i, "alice")));
    }
    byte[] snapshot = encode(live.image());
    try (var shadow = new ShadowState()) {
      shadow.apply(ByteString.copyFrom(submit(99, "mallory"))); // before the load: dropped by it
      shadow.reset(ControlState.of(CommandCodec.readImage(new ByteArrayInputStream(snapshot))));
      byte[] next = submit(5, "bob");
      live.apply(CommandCodec.decode(next));
      shadow.apply(ByteString.copyFrom(next));
      assertThat(encode(shadow.image().get(10, TimeUnit.SECONDS))).isEqualTo(encode(live.image()));
    }
  }

  /** An entry the copy cannot apply (a bug): no snapshot is taken from it any more. */
  @Test
  void aCopyThatFailedGivesNoImage() throws Exception {
    try (var shadow = new ShadowState()) {
      shadow.apply(ByteString.copyFrom(new byte[] {CommandCodec.FORMAT_JSON, '{'}));
      shadow.apply(ByteString.copyFrom(submit(0, "alice")));
      var image = shadow.image();
      await().atMost(Duration.ofSeconds(10)).until(image::isDone);
      assertThat(image).isCompletedExceptionally();
    }
  }

  /**
   * A real replica: the snapshot it writes (taken from the copy, off the apply thread) holds the
   * state to the byte, and a restart from it gives that state back.
   */
  @Test
  void aReplicasSnapshotLoadsBackToTheSameBytes() throws Exception {
    var self = new PeerAddress("127.0.0.1", freePort(), freePort());
    Path data = dir.resolve("r");
    byte[] before;
    try (var replica = new RaftReplica(self, List.of(self), data)) {
      replica.start();
      await().atMost(Duration.ofSeconds(30)).until(replica::isLeaderReady);
      for (int i = 0; i < 50; i++) {
        replica
            .propose(CommandCodec.decode(submit(i, i % 2 == 0 ? "alice" : "bob")))
            .get(30, TimeUnit.SECONDS);
      }
      before = encode(replica.stateMachine().read(ControlState::image));
      replica.requestSnapshot(Duration.ofSeconds(10));
      await().atMost(Duration.ofSeconds(30)).until(() -> snapshot(data) != null);
      Path file = snapshot(data);
      try (InputStream in = new BufferedInputStream(Files.newInputStream(file))) {
        assertThat(in.readAllBytes()).isEqualTo(before);
      }
    }
    try (var again = new RaftReplica(self, List.of(self), data)) {
      again.start();
      assertThat(encode(again.stateMachine().read(ControlState::image))).isEqualTo(before);
    }
  }

  // --- helpers ---

  /** The snapshot file under {@code data}, once it and its checksum are written. */
  private static Path snapshot(Path data) throws IOException {
    try (Stream<Path> files = Files.walk(data)) {
      return files
          .filter(p -> p.getFileName().toString().matches("snapshot\\.\\d+_\\d+"))
          .filter(p -> Files.exists(Path.of(p + ".md5")))
          .max(Comparator.naturalOrder())
          .orElse(null);
    }
  }

  private static byte[] submit(int i, String user) {
    var request =
        new JobRequest(
            "job-" + i,
            List.of("true"),
            Map.of(),
            "/tmp",
            1,
            0,
            0,
            0,
            3600,
            "default",
            0,
            "",
            user);
    return CommandCodec.encode(new ControlCommand.SubmitJobs(1_000L + i, List.of(request)));
  }

  private static byte[] encode(StateImage image) {
    var out = new ByteArrayOutputStream();
    try {
      CommandCodec.writeImage(image, out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  static int freePort() throws Exception {
    try (var s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static byte[] withFormat(String json) {
    byte[] body = json.getBytes(StandardCharsets.UTF_8);
    byte[] out = new byte[body.length + 1];
    out[0] = CommandCodec.FORMAT_JSON;
    System.arraycopy(body, 0, out, 1, body.length);
    return out;
  }

  private static List<String> lines(String resource) {
    return Arrays.stream(text(resource).split("\n")).filter(l -> !l.isEmpty()).toList();
  }

  private static String text(String resource) {
    try (InputStream in =
        Objects.requireNonNull(ShadowStateTest.class.getResourceAsStream(resource), resource)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
