package io.kairos.agent.isolate;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

/**
 * The agent's own small state files and directories, written on every task's launch: a record
 * through a temp file and a rename, a directory made sure of. Both take the few system calls the
 * result needs and no more: {@link Files#createDirectories} on a directory that exists builds and
 * catches an exception (its stack trace included), and a temp file deleted, created and opened
 * again to write costs three calls where one {@code open(O_CREAT|O_EXCL)} does. At hundreds of
 * launches a second on a node, these were a fifth of the agent's launch path.
 */
public final class PrivateFiles {
  /** rw------- */
  public static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");

  /** rwx------ */
  public static final Set<PosixFilePermission> DIR = PosixFilePermissions.fromString("rwx------");

  /** rwx--x--x: entered by name, never listed by others. */
  public static final Set<PosixFilePermission> ENTER_ONLY =
      PosixFilePermissions.fromString("rwx--x--x");

  private static final FileAttribute<Set<PosixFilePermission>> FILE_ATTR =
      PosixFilePermissions.asFileAttribute(FILE);

  private static final FileAttribute<Set<PosixFilePermission>> DIR_ATTR =
      PosixFilePermissions.asFileAttribute(DIR);

  private static final Set<StandardOpenOption> CREATE_NEW =
      EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);

  private PrivateFiles() {}

  /**
   * Creates {@code dir} and its missing parents (new ones 0700) unless it is a directory already,
   * then sets its mode to {@code mode} (whatever made it, or changed it since).
   */
  public static void directory(Path dir, Set<PosixFilePermission> mode) throws IOException {
    if (!Files.isDirectory(dir)) {
      Files.createDirectories(dir, DIR_ATTR);
    }
    Files.setPosixFilePermissions(dir, mode);
  }

  /** Creates {@code dir}'s missing parents and itself (0700) unless it is a directory already. */
  public static void directory(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      Files.createDirectories(dir, DIR_ATTR);
    }
  }

  /**
   * Creates the directory {@code dir} (its parent exists) with one {@code mkdir}, the usual case on
   * a launch: asking first whether it exists builds and catches an exception when it does not.
   *
   * @return true when it was created now, false when it was a directory already
   * @throws FileAlreadyExistsException when something else (a file, a link) has that name
   */
  public static boolean createDirectory(Path dir) throws IOException {
    try {
      Files.createDirectory(dir);
      return true;
    } catch (FileAlreadyExistsException e) {
      if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
        return false;
      }
      throw e;
    }
  }

  /**
   * Replaces {@code file} with {@code bytes} at once (readers see the old file or the whole new
   * one): written to {@code <file>.tmp}, created 0600 (a leftover one, from a crash, is deleted
   * first), then renamed over {@code file}.
   */
  public static void writeAtomically(Path file, byte[] bytes) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try (SeekableByteChannel out = createNew(tmp)) {
      ByteBuffer buffer = ByteBuffer.wrap(bytes);
      while (buffer.hasRemaining()) {
        out.write(buffer);
      }
    }
    try {
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  private static SeekableByteChannel createNew(Path tmp) throws IOException {
    try {
      return Files.newByteChannel(tmp, CREATE_NEW, FILE_ATTR);
    } catch (FileAlreadyExistsException e) {
      Files.deleteIfExists(tmp);
      return Files.newByteChannel(tmp, CREATE_NEW, FILE_ATTR);
    }
  }
}
