package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Secrets at rest: after a controller ran, took jobs and wrote a snapshot, no file or directory
 * under its data directory has a group or other permission bit, even in a JVM whose umask is wide
 * (this test's) and a data directory an older Kairos left open.
 */
class PrivateDataDirTest {
  static final EnumSet<PosixFilePermission> OPEN =
      EnumSet.of(
          PosixFilePermission.GROUP_READ,
          PosixFilePermission.GROUP_WRITE,
          PosixFilePermission.GROUP_EXECUTE,
          PosixFilePermission.OTHERS_READ,
          PosixFilePermission.OTHERS_WRITE,
          PosixFilePermission.OTHERS_EXECUTE);

  @TempDir Path tmp;

  /** Paths under {@code dir} (itself included) with group or other bits, with their modes. */
  static List<String> open(Path dir) throws IOException {
    var out = new ArrayList<String>();
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.toList()) {
        try {
          var perms = Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS);
          if (perms.stream().anyMatch(OPEN::contains)) {
            out.add(dir.relativize(p) + " " + PosixFilePermissions.toString(perms));
          }
        } catch (java.nio.file.NoSuchFileException e) {
          // gone meanwhile
        }
      }
    }
    return out;
  }

  @Test
  void noFileUnderTheDataDirectoryIsReadableByOthersAfterASnapshot() throws Exception {
    Path data = tmp.resolve("data");
    // As an older Kairos left it: everything readable by all.
    Files.createDirectories(
        data.resolve("raft"),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
    Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path stale = data.resolve("raft/notes.txt");
    Files.writeString(stale, "HF_TOKEN=hf_s3cr3t");
    Files.setPosixFilePermissions(stale, PosixFilePermissions.fromString("rw-r--r--"));
    assertThat(open(data)).isNotEmpty();

    try (var controller =
        Controller.start(
            ControllerConfig.single(data, "127.0.0.1", 0).withRunAs(TestApi.SINGLE_USER))) {
      Leaders.awaitLeader(controller, Duration.ofSeconds(30));
      assertThat(open(data)).as("tightened at start").doesNotContain("raft/notes.txt rw-r--r--");
      var api = new TestApi(controller.url(), controller.adminToken());
      for (int i = 0; i < 20; i++) {
        var r =
            api.post(
                "/api/v1/jobs",
                "{\"command\":[\"true\"],\"env\":{\"HF_TOKEN\":\"hf_s3cr3t\"},\"cpus\":1}");
        assertThat(r.status()).as(r.body()).isEqualTo(201);
      }
      controller.replica().requestSnapshot(Duration.ofSeconds(10));
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (!(hasSnapshot(data) && open(data).isEmpty())) {
        assertThat(System.nanoTime())
            .as("a snapshot is written and every file is private; open: %s", open(data))
            .isLessThan(deadline);
        Thread.sleep(50);
      }
    }
    assertThat(open(data)).isEmpty();
    // A restart on the same data (token files, log and snapshot already there) keeps them private.
    Path token = data.resolve("admin.token");
    Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-r--r--"));
    try (var again =
        Controller.start(
            ControllerConfig.single(data, "127.0.0.1", 0).withRunAs(TestApi.SINGLE_USER))) {
      assertThat(again.adminToken()).isEqualTo(Files.readString(token).strip());
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(token)))
          .as("a token file opened up meanwhile is private again")
          .isEqualTo("rw-------");
    }
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(data)))
        .isEqualTo("rwx------");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(stale)))
        .isEqualTo("rw-------");
  }

  static boolean hasSnapshot(Path data) throws IOException {
    try (Stream<Path> walk = Files.walk(data)) {
      return walk.anyMatch(
          p -> p.getFileName().toString().startsWith("snapshot.") && p.toString().endsWith(".md5"));
    }
  }
}
