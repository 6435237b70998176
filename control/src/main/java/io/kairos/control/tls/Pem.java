package io.kairos.control.tls;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.cert.CertificateEncodingException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;

/**
 * PEM files: certificates ({@code CERTIFICATE} blocks, several to a file) and unencrypted PKCS#8
 * private keys ({@code PRIVATE KEY}), read and written with the JDK alone, and the SHA-256 pin of a
 * certificate's public key. Private keys are written mode 0600 by an atomic rename, so no reader
 * ever sees a half-written or world-readable key.
 */
public final class Pem {
  private Pem() {}

  /** The certificates of a PEM text, in order; an {@link IOException} names what is wrong. */
  public static List<X509Certificate> certificates(String pem, String source) throws IOException {
    var out = new ArrayList<X509Certificate>();
    for (byte[] der : blocks(pem, "CERTIFICATE")) {
      try {
        out.add(
            (X509Certificate)
                CertificateFactory.getInstance("X.509")
                    .generateCertificate(new ByteArrayInputStream(der)));
      } catch (CertificateException e) {
        throw new IOException(source + ": a CERTIFICATE block does not parse: " + e.getMessage());
      }
    }
    if (out.isEmpty()) {
      throw new IOException(source + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
    }
    return out;
  }

  public static List<X509Certificate> readCertificates(Path file) throws IOException {
    return certificates(Files.readString(file, StandardCharsets.US_ASCII), file.toString());
  }

  /** The private key of a PEM {@code PRIVATE KEY} (PKCS#8) block: EC or RSA. */
  public static PrivateKey readPrivateKey(Path file) throws IOException {
    List<byte[]> keys = blocks(Files.readString(file, StandardCharsets.US_ASCII), "PRIVATE KEY");
    if (keys.size() != 1) {
      throw new IOException(
          file + " must hold one unencrypted PKCS#8 key (-----BEGIN PRIVATE KEY-----)");
    }
    var spec = new PKCS8EncodedKeySpec(keys.getFirst());
    for (String algorithm : List.of("EC", "RSA")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(spec);
      } catch (InvalidKeySpecException e) {
        // not this algorithm: try the next
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException(algorithm + " is missing from this JDK", e);
      }
    }
    throw new IOException(file + ": the key is neither EC nor RSA");
  }

  public static String encode(X509Certificate certificate) {
    try {
      return block("CERTIFICATE", certificate.getEncoded());
    } catch (CertificateEncodingException e) {
      throw new IllegalStateException("cannot encode " + certificate.getSubjectX500Principal(), e);
    }
  }

  public static String encode(List<X509Certificate> certificates) {
    var sb = new StringBuilder();
    certificates.forEach(c -> sb.append(encode(c)));
    return sb.toString();
  }

  public static String encode(PrivateKey key) {
    return block("PRIVATE KEY", key.getEncoded());
  }

  /**
   * {@code sha256:} and the hex SHA-256 of the certificate's SubjectPublicKeyInfo, as kubeadm's
   * {@code --discovery-token-ca-cert-hash}: it names the key, so a CA certificate re-issued for the
   * same key keeps its pin.
   */
  public static String spkiSha256(X509Certificate certificate) {
    try {
      byte[] spki = certificate.getPublicKey().getEncoded();
      return "sha256:"
          + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(spki));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JDK", e);
    }
  }

  /** Writes a public file (a certificate) by an atomic rename. */
  public static void writePublic(Path file, String text) throws IOException {
    write(file, text, "rw-r--r--");
  }

  /** Writes a secret file (a private key) mode 0600 by an atomic rename. */
  public static void writeSecret(Path file, String text) throws IOException {
    write(file, text, "rw-------");
  }

  private static void write(Path file, String text, String mode) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.deleteIfExists(tmp);
    try {
      Files.createFile(
          tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(mode)));
    } catch (UnsupportedOperationException e) {
      Files.createFile(tmp); // not a POSIX file system: the directory's rights apply
    }
    Files.writeString(tmp, text, StandardCharsets.US_ASCII, StandardOpenOption.WRITE);
    try (var ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
      ch.force(true);
    }
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  /** Checks that {@code key} is the private half of {@code certificate}'s public key. */
  static boolean matches(PrivateKey key, X509Certificate certificate) {
    try {
      String algorithm = key.getAlgorithm().equals("EC") ? "SHA256withECDSA" : "SHA256withRSA";
      byte[] probe = "kairos key check".getBytes(StandardCharsets.US_ASCII);
      var signer = java.security.Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      byte[] signature = signer.sign();
      var verifier = java.security.Signature.getInstance(algorithm);
      verifier.initVerify(certificate.getPublicKey());
      verifier.update(probe);
      return verifier.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static String block(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }

  private static List<byte[]> blocks(String pem, String type) throws IOException {
    String begin = "-----BEGIN " + type + "-----";
    String end = "-----END " + type + "-----";
    var out = new ArrayList<byte[]>();
    int from = 0;
    while (true) {
      int b = pem.indexOf(begin, from);
      if (b < 0) {
        return out;
      }
      int e = pem.indexOf(end, b);
      if (e < 0) {
        throw new IOException("a PEM " + type + " block has no END line");
      }
      String body = pem.substring(b + begin.length(), e).replaceAll("\\s", "");
      try {
        out.add(Base64.getDecoder().decode(body));
      } catch (IllegalArgumentException ex) {
        throw new IOException("a PEM " + type + " block is not base64: " + ex.getMessage());
      }
      from = e + end.length();
    }
  }
}
