package io.kairos.agent.isolate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's state files: replaced whole, private, whatever was left at the temp file's name; a
 * directory made and given its mode whether or not it was there, and a file in its place refused.
 */
class PrivateFilesTest {
  @TempDir Path dir;

  @Test
  void writesAPrivateFileAndReplacesItWhole() throws Exception {
    Path file = dir.resolve("task.json");
    PrivateFiles.writeAtomically(file, "first".getBytes(StandardCharsets.UTF_8));
    PrivateFiles.writeAtomically(file, "second, longer".getBytes(StandardCharsets.UTF_8));

    assertThat(Files.readString(file)).isEqualTo("second, longer");
    assertThat(Files.getPosixFilePermissions(file)).isEqualTo(PrivateFiles.FILE);
    assertThat(dir.resolve("task.json.tmp")).doesNotExist();
  }

  @Test
  void aLeftoverTempFileIsReplacedNotReused() throws Exception {
    Path file = dir.resolve("lease");
    Path tmp = dir.resolve("lease.tmp");
    // Left by a crash, readable by others and longer than the new text.
    Files.writeString(tmp, "stale text that is longer than the record");
    Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-r--r--"));

    PrivateFiles.writeAtomically(file, "pid=1\n".getBytes(StandardCharsets.UTF_8));

    assertThat(Files.readString(file)).isEqualTo("pid=1\n");
    assertThat(Files.getPosixFilePermissions(file)).isEqualTo(PrivateFiles.FILE);
  }

  @Test
  void aLinkAtTheTempNameIsNotFollowed() throws Exception {
    Path target = dir.resolve("elsewhere");
    Files.writeString(target, "untouched");
    Files.createSymbolicLink(dir.resolve("rec.tmp"), target);

    PrivateFiles.writeAtomically(dir.resolve("rec"), "new".getBytes(StandardCharsets.UTF_8));

    assertThat(Files.readString(target)).isEqualTo("untouched");
    assertThat(Files.readString(dir.resolve("rec"))).isEqualTo("new");
    assertThat(Files.isSymbolicLink(dir.resolve("rec"))).isFalse();
  }

  @Test
  void makesDirectoriesAndSetsTheirModeEveryTime() throws Exception {
    Path tasks = dir.resolve("a/b/tasks");
    PrivateFiles.directory(tasks, PrivateFiles.ENTER_ONLY);
    assertThat(Files.getPosixFilePermissions(tasks)).isEqualTo(PrivateFiles.ENTER_ONLY);
    assertThat(Files.getPosixFilePermissions(dir.resolve("a"))).isEqualTo(PrivateFiles.DIR);

    Files.setPosixFilePermissions(tasks, PosixFilePermissions.fromString("rwxrwxrwx"));
    PrivateFiles.directory(tasks, PrivateFiles.ENTER_ONLY);
    assertThat(Files.getPosixFilePermissions(tasks)).isEqualTo(PrivateFiles.ENTER_ONLY);

    PrivateFiles.directory(dir.resolve("plain"));
    assertThat(Files.isDirectory(dir.resolve("plain"), LinkOption.NOFOLLOW_LINKS)).isTrue();
  }

  @Test
  void aFileWhereTheDirectoryShouldBeIsAnError() throws Exception {
    Path file = Files.writeString(dir.resolve("run"), "not a directory");
    assertThatThrownBy(() -> PrivateFiles.directory(file, PrivateFiles.DIR))
        .isInstanceOf(FileAlreadyExistsException.class);
  }

  @Test
  void createsADirectoryOnceAndRefusesALinkInItsPlace() throws Exception {
    Path run = dir.resolve("run");
    assertThat(PrivateFiles.createDirectory(run)).isTrue();
    assertThat(Files.isDirectory(run, LinkOption.NOFOLLOW_LINKS)).isTrue();
    assertThat(PrivateFiles.createDirectory(run)).isFalse();

    Path elsewhere = Files.createDirectory(dir.resolve("elsewhere"));
    Path link = Files.createSymbolicLink(dir.resolve("planted"), elsewhere);
    assertThatThrownBy(() -> PrivateFiles.createDirectory(link))
        .isInstanceOf(FileAlreadyExistsException.class);
    Path file = Files.writeString(dir.resolve("file"), "not a directory");
    assertThatThrownBy(() -> PrivateFiles.createDirectory(file))
        .isInstanceOf(FileAlreadyExistsException.class);
  }
}
