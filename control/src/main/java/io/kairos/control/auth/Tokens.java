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
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

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

  /**
   * The stored key of a certificate credential (an extender's): a hash of its public key, in a
   * space no bearer token can reach (the authenticator never matches a bearer token against a
   * certificate's record).
   */
  public static String certificateKey(X509Certificate certificate) {
    return certificateKey(certificate.getPublicKey().getEncoded());
  }

  /** As above, from the key's SubjectPublicKeyInfo. */
  public static String certificateKey(byte[] spki) {
    return hash("x509-spki:" + Base64.getEncoder().encodeToString(spki));
  }

  /**
   * A lifetime: a number and {@code s}, {@code m}, {@code h} or {@code d} ({@code 24h}, {@code
   * 90d}); empty for {@code never}.
   *
   * @throws IllegalArgumentException when it is neither, or not positive, or over ten years
   */
  public static Optional<Duration> parseTtl(String text) {
    String t = text.strip().toLowerCase(Locale.ROOT);
    if (t.equals("never")) {
      return Optional.empty();
    }
    var m = Pattern.compile("(\\d{1,9})([smhd])").matcher(t);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'" + text + "' is not a lifetime: use a number and s, m, h or d (24h, 90d), or never");
    }
    long n = Long.parseLong(m.group(1));
    Duration d =
        switch (m.group(2)) {
          case "s" -> Duration.ofSeconds(n);
          case "m" -> Duration.ofMinutes(n);
          case "h" -> Duration.ofHours(n);
          default -> Duration.ofDays(n);
        };
    if (d.isZero() || d.compareTo(Duration.ofDays(3650)) > 0) {
      throw new IllegalArgumentException(
          "'" + text + "': a lifetime is more than 0 and at most 3650d (or never)");
    }
    return Optional.of(d);
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
