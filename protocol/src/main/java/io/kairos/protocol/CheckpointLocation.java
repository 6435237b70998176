package io.kairos.protocol;

import java.util.regex.Pattern;

/**
 * Where a job's checkpoints live ({@link JobSubmission#checkpointDir}): an absolute directory on a
 * local or shared file system, or a location in S3-compatible object storage, {@code
 * s3://bucket/prefix}.
 *
 * @param bucket the bucket of an {@code s3://} location; null for a directory
 * @param prefix the key prefix under the bucket, without leading or trailing '/' (empty for the
 *     whole bucket); for a directory, its absolute path
 */
public record CheckpointLocation(String bucket, String prefix) {
  /** The scheme of object-storage locations. */
  public static final String S3 = "s3://";

  private static final int MAX_PATH = 4096;
  private static final int MAX_PREFIX = 900;
  private static final Pattern BUCKET = Pattern.compile("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]");

  /** Whether {@code location} names object storage rather than a directory. */
  public static boolean isObjectStorage(String location) {
    return location != null && location.startsWith(S3);
  }

  /**
   * What is wrong with {@code location} as a checkpoint location, as the end of a sentence that
   * starts with the field's name ("must be ..."); null when it is valid or empty (none).
   */
  public static String problem(String location) {
    if (location == null || location.isEmpty()) {
      return null;
    }
    if (location.indexOf('\0') >= 0 || location.chars().anyMatch(Character::isISOControl)) {
      return "must not hold control characters";
    }
    if (!isObjectStorage(location)) {
      if (location.contains("://")) {
        return "must be an absolute path or an s3://bucket/prefix location (no other scheme)";
      }
      if (!location.startsWith("/")) {
        return "must be an absolute path or an s3://bucket/prefix location";
      }
      return location.length() <= MAX_PATH ? null : "must be at most " + MAX_PATH + " characters";
    }
    String rest = location.substring(S3.length());
    int slash = rest.indexOf('/');
    String bucket = slash < 0 ? rest : rest.substring(0, slash);
    if (!BUCKET.matcher(bucket).matches() || bucket.contains("..")) {
      return "must name an S3 bucket of 3 to 63 lower-case letters, digits, '.' and '-' (s3://bucket/prefix)";
    }
    String prefix = slash < 0 ? "" : strip(rest.substring(slash + 1));
    if (prefix.length() > MAX_PREFIX) {
      return "must have a key prefix of at most " + MAX_PREFIX + " characters";
    }
    if (!prefix.isEmpty()) {
      for (String part : prefix.split("/", -1)) {
        if (part.isEmpty() || part.equals(".") || part.equals("..")) {
          return "must have a key prefix without empty, '.' or '..' parts";
        }
      }
      if (prefix.indexOf('\\') >= 0) {
        return "must have a key prefix without '\\'";
      }
    }
    return null;
  }

  /**
   * The location {@code location} names.
   *
   * @throws IllegalArgumentException when it is not a valid location ({@link #problem})
   */
  public static CheckpointLocation parse(String location) {
    String problem =
        location == null || location.isEmpty() ? "must not be empty" : problem(location);
    if (problem != null) {
      throw new IllegalArgumentException("checkpoint location " + problem + ": " + location);
    }
    if (!isObjectStorage(location)) {
      return new CheckpointLocation(null, location);
    }
    String rest = location.substring(S3.length());
    int slash = rest.indexOf('/');
    return slash < 0
        ? new CheckpointLocation(rest, "")
        : new CheckpointLocation(rest.substring(0, slash), strip(rest.substring(slash + 1)));
  }

  /** Whether this is an object-storage location. */
  public boolean objectStorage() {
    return bucket != null;
  }

  /** The location as a URL: {@code s3://bucket/prefix}, or {@code file://} and the directory. */
  public String url() {
    if (bucket == null) {
      return "file://" + prefix;
    }
    return prefix.isEmpty() ? S3 + bucket : S3 + bucket + "/" + prefix;
  }

  /** {@code prefix} without its trailing '/'s. */
  private static String strip(String prefix) {
    int to = prefix.length();
    while (to > 0 && prefix.charAt(to - 1) == '/') {
      to--;
    }
    return prefix.substring(0, to);
  }
}
