package io.kairos.control.raft;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller's files are its owner's alone: its data directory and every directory under it
 * 0700, every file 0600. The Raft log holds job env values and the snapshots the whole state, so
 * another account on the host must not read them.
 *
 * <p>Ratis creates its files with the process umask ({@code ./kairos} runs services with {@code
 * umask 077}); {@link #tighten} corrects what a wider umask, or an older Kairos, left behind: the
 * controller calls it at start (and warns when it had to) and after each snapshot. Symbolic links
 * are not followed. On a file system without POSIX permissions it does nothing.
 */
public final class PrivateFiles {
  private static final Logger LOG = LoggerFactory.getLogger(PrivateFiles.class);
  public static final Set<PosixFilePermission> DIRECTORY =
      PosixFilePermissions.fromString("rwx------");
  public static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");

  private PrivateFiles() {}

  /** Whether this file system has POSIX permissions. */
  public static boolean supported() {
    return FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
  }

  /**
   * A controller's data directory: creates it when missing, sets it to 0700, and everything under
   * the entries it names ({@code raft}, the token files) to 0700 and 0600. Other entries (an
   * agent's directory that {@code kairos up} keeps there) are left to their owner: the agent sets
   * its own.
   *
   * @return the paths that had more than their owner's permissions, with what they had
   */
  public static List<String> tightenDataDir(Path dataDir, List<String> entries) throws IOException {
    Files.createDirectories(dataDir);
    var widened = new ArrayList<String>();
    if (!supported()) {
      return widened;
    }
    restrict(dataDir, widened);
    for (String entry : entries) {
      Path p = dataDir.resolve(entry);
      if (Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
        widened.addAll(tighten(p));
      }
    }
    return widened;
  }

  /**
   * Creates {@code dir} (and its parents) when missing, then sets {@code dir} and everything under
   * it to 0700 (directories) and 0600 (files). {@code dir} may be a file: then only it is set.
   *
   * @return the paths that had more than their owner's permissions, with what they had
   */
  public static List<String> tighten(Path dir) throws IOException {
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      Files.createDirectories(dir);
    }
    var widened = new ArrayList<String>();
    if (!supported()) {
      return widened;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      walk.forEach(
          p -> {
            try {
              restrict(p, widened);
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          });
    } catch (UncheckedIOException e) {
      if (!(e.getCause() instanceof NoSuchFileException)) {
        throw e.getCause();
      }
      // a directory went away during the walk (Ratis' temp files): the rest is for the next call
    }
    return widened;
  }

  private static void restrict(Path p, List<String> widened) throws IOException {
    if (Files.isSymbolicLink(p)) {
      return; // a link is left as it is (and not followed)
    }
    Set<PosixFilePermission> has;
    boolean directory;
    try {
      has = Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS);
      directory = Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS);
    } catch (NoSuchFileException e) {
      return; // gone meanwhile (a rolled log segment): nothing to do
    }
    Set<PosixFilePermission> want = directory ? DIRECTORY : FILE;
    if (has.equals(want)) {
      return;
    }
    var others = EnumSet.copyOf(has);
    others.retainAll(GROUP_AND_OTHERS);
    if (!others.isEmpty()) {
      widened.add(p + " (" + PosixFilePermissions.toString(has) + ")");
    }
    try {
      Files.setPosixFilePermissions(p, want);
    } catch (NoSuchFileException e) {
      // gone meanwhile
    }
  }

  private static final Set<PosixFilePermission> GROUP_AND_OTHERS =
      EnumSet.of(
          PosixFilePermission.GROUP_READ,
          PosixFilePermission.GROUP_WRITE,
          PosixFilePermission.GROUP_EXECUTE,
          PosixFilePermission.OTHERS_READ,
          PosixFilePermission.OTHERS_WRITE,
          PosixFilePermission.OTHERS_EXECUTE);

  /**
   * The data directory and the controller's files in it become the owner's alone (0700 directories,
   * 0600 files): the log holds job env values, the snapshots the whole state, and the token files
   * the tokens. Warns once when something was open to others (an older Kairos, or a wide umask). An
   * agent's directory kept there ({@code kairos up}) is the agent's to set.
   */
  public static void keepDataPrivate(Path dataDir) throws IOException {
    List<String> widened =
        PrivateFiles.tightenDataDir(
            dataDir,
            List.of(
                "raft",
                "admin.token",
                "join.token",
                io.kairos.control.accounting.AccountingSettings.SQLITE_FILE,
                io.kairos.control.accounting.AccountingSettings.SQLITE_FILE + "-wal",
                io.kairos.control.accounting.AccountingSettings.SQLITE_FILE + "-shm"));
    if (!widened.isEmpty()) {
      LOG.warn(
          "data directory {}: {} path(s) could be read by other accounts, e.g. {}; they are now"
              + " 0700 (directories) and 0600 (files). Run the controller with umask 077"
              + " (./kairos does) so new files are too",
          dataDir,
          widened.size(),
          widened.get(0));
    }
  }
}
