package io.kairos.cli.ckpt;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.stream.Stream;

/**
 * Checkpoints in a directory of a local or shared file system: a file is written to a temporary
 * name, forced to disk and renamed, then its directory is forced, as {@code kairos_ckpt.py} does. A
 * path whose real location (symbolic links followed) leaves the directory is refused.
 */
public final class DirStore implements CheckpointStore {
  private final Path root;

  public DirStore(String root) {
    this.root = Path.of(root).toAbsolutePath().normalize();
  }

  @Override
  public String url() {
    return "file://" + root;
  }

  @Override
  public List<String> steps() throws IOException {
    return list(root, true);
  }

  @Override
  public List<String> names(String step) throws IOException {
    return list(resolve(step), false);
  }

  private static List<String> list(Path dir, boolean steps) throws IOException {
    List<String> names = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path p : entries) {
        String name = p.getFileName().toString();
        if (!steps || STEP.matcher(name).matches()) {
          names.add(name);
        }
      }
    } catch (NoSuchFileException e) {
      return List.of();
    }
    return names;
  }

  @Override
  public Optional<byte[]> get(String path) throws IOException {
    Path p = inside(path);
    try {
      return Optional.of(Files.readAllBytes(p));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    }
  }

  @Override
  public OptionalLong size(String path) throws IOException {
    Path p = inside(path);
    return Files.isRegularFile(p) ? OptionalLong.of(Files.size(p)) : OptionalLong.empty();
  }

  @Override
  public void put(String path, byte[] data) throws IOException {
    Path p = resolve(path);
    Files.createDirectories(p.getParent());
    Path tmp = p.resolveSibling(p.getFileName() + ".tmp-" + ProcessHandle.current().pid());
    try (FileChannel ch =
        FileChannel.open(
            tmp,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE)) {
      var buf = java.nio.ByteBuffer.wrap(data);
      while (buf.hasRemaining()) {
        ch.write(buf);
      }
      ch.force(true);
    }
    Files.move(tmp, p, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    try (FileChannel dir = FileChannel.open(p.getParent(), StandardOpenOption.READ)) {
      dir.force(true);
    }
  }

  @Override
  public void deleteStep(String step) throws IOException {
    Path dir = resolve(step);
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private Path resolve(String path) {
    return root.resolve(CheckpointStore.checkRelative(path));
  }

  /** {@code path} under the root, refused when its real location (links followed) is not. */
  private Path inside(String path) throws IOException {
    Path p = resolve(path);
    if (Files.exists(p)) {
      Path real = p.toRealPath();
      if (!real.startsWith(root.toRealPath())) {
        throw new IllegalArgumentException("path '" + path + "' leaves the checkpoint location");
      }
    }
    return p;
  }
}
