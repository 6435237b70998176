package io.kairos.agent.account;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.agent.account.OwnerReads.Result;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The log server's reading rules: a window of the file, never through a symbolic link in its name,
 * never anything but a regular file, and, for a task of another account, only what that account may
 * read (real users; skipped unless root).
 */
class OwnerReadsTest {
  @TempDir Path dir;

  static String text(Result r) {
    assertThat(r).isInstanceOf(Result.Bytes.class);
    return new String(((Result.Bytes) r).data(), StandardCharsets.UTF_8);
  }

  static boolean atEnd(Result r) {
    return ((Result.Bytes) r).atEnd();
  }

  @Test
  void aWindowTellsTheEndFromPastTheEndWithoutTheSize() {
    byte[] file = "hello world\n".getBytes(StandardCharsets.UTF_8);
    // From 0, asking 5: read 6 (one more says more follows).
    assertThat(text(OwnerReads.window("hello ".getBytes(StandardCharsets.UTF_8), 0, 5)))
        .isEqualTo("hello");
    assertThat(atEnd(OwnerReads.window("hello ".getBytes(StandardCharsets.UTF_8), 0, 5))).isFalse();
    // From 6, asking 10: read from 5, the byte before the offset proves the offset is inside.
    Result rest = OwnerReads.window(" world\n".getBytes(StandardCharsets.UTF_8), 6, 10);
    assertThat(text(rest)).isEqualTo("world\n");
    assertThat(atEnd(rest)).isTrue();
    // At the end exactly: the byte before is there, nothing after.
    Result end = OwnerReads.window(new byte[] {'\n'}, file.length, 10);
    assertThat(text(end)).isEmpty();
    assertThat(atEnd(end)).isTrue();
    // Past it: not even the byte before.
    assertThat(OwnerReads.window(new byte[0], file.length + 1, 10))
        .isInstanceOf(Result.PastEnd.class);
  }

  @Test
  void theAgentReadsItsOwnTasksFilesButNoLinkAndNoFifo() throws Exception {
    Path out = Files.writeString(dir.resolve("out.log"), "hello world\n");
    assertThat(text(OwnerReads.here(out, 0, 5))).isEqualTo("hello");
    assertThat(text(OwnerReads.here(out, 6, 100))).isEqualTo("world\n");
    assertThat(text(OwnerReads.here(out, 12, 100))).isEmpty();
    assertThat(OwnerReads.here(out, 13, 100)).isInstanceOf(Result.PastEnd.class);
    assertThat(OwnerReads.here(dir.resolve("none.log"), 0, 100)).isInstanceOf(Result.Missing.class);

    Path secret = Files.writeString(dir.resolve("secret"), "s3cret");
    Path link = Files.createSymbolicLink(dir.resolve("link.log"), secret);
    assertThat(OwnerReads.here(link, 0, 100))
        .isEqualTo(new Result.Refused(link + " is a symbolic link: not served"));
    Path fifo = dir.resolve("fifo.log");
    new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor();
    assertThat(OwnerReads.here(fifo, 0, 100)).isInstanceOf(Result.Refused.class);
    assertThat(OwnerReads.here(dir, 0, 100)).isInstanceOf(Result.Refused.class);
  }

  @Test
  void anotherAccountsTaskIsReadWithItsRights() throws Exception {
    UnixUsers.assumeRoot();
    Account alice = UnixUsers.alice();
    // A directory alice may enter, holding her file, a root-only file and links to both.
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
    Path hers = Files.writeString(dir.resolve("hers.log"), "hello world\n");
    Files.setAttribute(hers, "unix:uid", alice.uid());
    Files.setPosixFilePermissions(hers, PosixFilePermissions.fromString("rw-------"));
    Path rootOnly = Files.writeString(dir.resolve("admin.token"), "kadm_secret\n");
    Files.setPosixFilePermissions(rootOnly, PosixFilePermissions.fromString("rw-------"));
    Path toRoot = Files.createSymbolicLink(dir.resolve("planted.log"), rootOnly);
    Path toHers = Files.createSymbolicLink(dir.resolve("hers-link.log"), hers);

    assertThat(text(OwnerReads.asOwner(alice, hers, 0, 5))).isEqualTo("hello");
    assertThat(atEnd(OwnerReads.asOwner(alice, hers, 0, 5))).isFalse();
    assertThat(text(OwnerReads.asOwner(alice, hers, 6, 100))).isEqualTo("world\n");
    assertThat(atEnd(OwnerReads.asOwner(alice, hers, 6, 100))).isTrue();
    assertThat(text(OwnerReads.asOwner(alice, hers, 12, 100))).isEmpty();
    assertThat(OwnerReads.asOwner(alice, hers, 13, 100)).isInstanceOf(Result.PastEnd.class);
    assertThat(OwnerReads.asOwner(alice, dir.resolve("none"), 0, 9))
        .isInstanceOf(Result.Missing.class);

    assertThat(OwnerReads.asOwner(alice, rootOnly, 0, 100))
        .isEqualTo(new Result.Refused("kairos-alice may not read " + rootOnly + ": not served"));
    assertThat(OwnerReads.asOwner(alice, rootOnly, 5, 100)).isInstanceOf(Result.Refused.class);
    assertThat(OwnerReads.asOwner(alice, toRoot, 0, 100))
        .isEqualTo(new Result.Refused(toRoot + " is a symbolic link: not served"));
    assertThat(OwnerReads.asOwner(alice, toHers, 0, 100))
        .as("a link is refused even to a file she may read")
        .isInstanceOf(Result.Refused.class);
    // And root itself would have read it: the refusal is alice's rights, not the file's absence.
    assertThat(text(OwnerReads.here(rootOnly, 0, 100))).isEqualTo("kadm_secret\n");
  }

  @Test
  void aFifoOfAnotherAccountDoesNotHangTheReader() throws IOException, InterruptedException {
    UnixUsers.assumeRoot();
    Account alice = UnixUsers.alice();
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
    Path fifo = dir.resolve("fifo.log");
    new ProcessBuilder("mkfifo", "-m", "666", fifo.toString()).start().waitFor();
    long t0 = System.nanoTime();
    Result r = OwnerReads.asOwner(alice, fifo, 0, 100);
    assertThat((System.nanoTime() - t0) / 1_000_000).isLessThan(5_000);
    assertThat(r).isInstanceOf(Result.Bytes.class);
    assertThat(text(r)).isEmpty();
  }
}
