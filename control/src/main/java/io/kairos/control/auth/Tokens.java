package io.kairos.control.auth;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;

/** Making, hashing and storing bearer tokens. */
public final class Tokens {
  private static final SecureRandom RANDOM = new SecureRandom();

  private Tokens() {}

  /** A new token: a prefix saying what it is for, then 256 random bits in hex. */
  public static String generate(String prefix) {
    byte[] bytes = new byte[32];
    RANDOM.nextBytes(bytes);
    return prefix + "_" + HexFormat.of().formatHex(bytes);
  }

  /**
   * SHA-256 of the token, in hex. Tokens are 256 random bits, so a fast hash is enough (no password
   * stretching needed): the stored hash does not let anyone present the token.
   */
  public static String hash(String token) {
    try {
      var digest = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(digest.digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JDK", e);
    }
  }

  /** Reads {@code file}, or writes a new token there (mode 0600) when it does not exist. */
  public static String readOrCreate(Path file, String prefix) throws IOException {
    if (Files.exists(file)) {
      String token = Files.readString(file, StandardCharsets.UTF_8).trim();
      if (token.isEmpty()) {
        throw new IOException(file + " is empty: delete it to make a new token");
      }
      return token;
    }
    String token = generate(prefix);
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.deleteIfExists(tmp);
    Files.createFile(
        tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(tmp, token + "\n", StandardCharsets.UTF_8, StandardOpenOption.WRITE);
    try (var ch = java.nio.channels.FileChannel.open(tmp, StandardOpenOption.WRITE)) {
      ch.force(true);
    }
    Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    return token;
  }
}
