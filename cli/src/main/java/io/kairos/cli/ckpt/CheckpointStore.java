package io.kairos.cli.ckpt;

import io.kairos.protocol.CheckpointLocation;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * Where a job's checkpoints live: a directory ({@link DirStore}) or an S3 location ({@link
 * S3Store}). Paths are relative to the location ({@code step-0000000042/MANIFEST.json}); one that
 * would leave it is refused ({@link #checkRelative}).
 */
public interface CheckpointStore extends AutoCloseable {
  /** A step's directory (or key prefix) name: {@code step-} and ten digits. */
  Pattern STEP = Pattern.compile("step-(\\d{10})");

  /** The location, as a URL. */
  String url();

  /** The names of the step directories (or prefixes) present, in no particular order. */
  List<String> steps() throws IOException;

  /** The names of the objects in one step's directory. */
  List<String> names(String step) throws IOException;

  /** The bytes of {@code path}; empty when it is not there. */
  Optional<byte[]> get(String path) throws IOException;

  /** The size of {@code path}; empty when it is not there. */
  OptionalLong size(String path) throws IOException;

  /** Writes {@code path} whole or not at all (rename, or one PUT). */
  void put(String path, byte[] data) throws IOException;

  /** Deletes a step's directory and everything in it. */
  void deleteStep(String step) throws IOException;

  @Override
  default void close() {}

  /** The store of {@code location} (a directory or {@code s3://bucket/prefix}). */
  static CheckpointStore open(String location, S3Store.Settings s3) throws IOException {
    CheckpointLocation where = CheckpointLocation.parse(location);
    return where.objectStorage() ? S3Store.open(where, s3) : new DirStore(where.prefix());
  }

  /**
   * {@code path} when it is a plain relative path ({@code a/b}: no leading '/', no empty, '.' or
   * '..' part, no '\'); else {@link IllegalArgumentException} naming it.
   */
  static String checkRelative(String path) {
    if (path == null || path.isEmpty() || path.startsWith("/") || path.indexOf('\\') >= 0) {
      throw new IllegalArgumentException(
          "path '" + path + "' is not relative to the checkpoint location");
    }
    for (String part : path.split("/", -1)) {
      if (part.isEmpty() || part.equals(".") || part.equals("..")) {
        throw new IllegalArgumentException("path '" + path + "' leaves the checkpoint location");
      }
    }
    return path;
  }
}
