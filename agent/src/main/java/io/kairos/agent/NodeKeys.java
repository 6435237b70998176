package io.kairos.agent;

import io.kairos.protocol.agent.NodeCredential;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * This node's own credential, made by the agent before its first registration and kept in {@code
 * DATA/identity/} (0700, files 0600), so that a registration whose reply was lost can be repeated
 * and a restarted agent proves it is the same node without a join token:
 *
 * <pre>
 * node.secret  knode_ and 64 hex digits: the node secret (controllers reached over plain HTTP)
 * node.key     an EC P-256 key pair, PEM (controllers reached over HTTPS)
 * node.pem     the certificate the controller issued for that key, and its CA's (PEM)
 * </pre>
 *
 * Removing the directory makes the node a stranger: it can join again only with a join token after
 * an admin's {@code kairos nodes reset NAME}.
 */
final class NodeKeys {
  static final String DIR = "identity";
  static final String SECRET_FILE = "node.secret";
  static final String KEY_FILE = "node.key";
  static final String CERT_FILE = "node.pem";

  private static final SecureRandom RANDOM = new SecureRandom();

  private final Path dir;
  private String secret;
  private KeyPair keys;

  private NodeKeys(Path dir) {
    this.dir = dir;
  }

  static NodeKeys in(Path dataDir) {
    return new NodeKeys(dataDir.resolve(DIR));
  }

  /** Whether {@code dataDir} holds a node credential of either kind (made before, maybe bound). */
  static boolean existIn(Path dataDir) {
    Path d = dataDir.resolve(DIR);
    return Files.exists(d.resolve(SECRET_FILE)) || Files.exists(d.resolve(CERT_FILE));
  }

  /** Whether a credential of the kind the controllers take is here (so it may be bound). */
  boolean exists(boolean certificate) {
    return Files.exists(dir.resolve(certificate ? CERT_FILE : SECRET_FILE));
  }

  /** The node secret, made (and written) the first time. */
  synchronized String secret() throws IOException {
    if (secret == null) {
      Path file = dir.resolve(SECRET_FILE);
      if (Files.exists(file)) {
        secret = Files.readString(file, StandardCharsets.US_ASCII).strip();
      } else {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        secret = NodeCredential.SECRET_PREFIX + HexFormat.of().formatHex(bytes);
        writePrivate(file, secret + "\n");
      }
    }
    return secret;
  }

  /** The node's key pair, made (and written) the first time. */
  synchronized KeyPair keyPair() throws IOException {
    if (keys == null) {
      Path file = dir.resolve(KEY_FILE);
      if (Files.exists(file)) {
        keys = readKeys(Files.readString(file, StandardCharsets.US_ASCII), file);
      } else {
        keys = newKeyPair();
        writePrivate(
            file,
            pem("PRIVATE KEY", keys.getPrivate().getEncoded())
                + pem("PUBLIC KEY", keys.getPublic().getEncoded()));
      }
    }
    return keys;
  }

  /** What a registration carries: the secret, or the public key and a proof of holding it. */
  NodeCredential credential(boolean certificate, String node) throws IOException {
    if (!certificate) {
      return NodeCredential.ofSecret(secret());
    }
    KeyPair pair = keyPair();
    try {
      var signer = Signature.getInstance("SHA256withECDSA");
      signer.initSign(pair.getPrivate(), RANDOM);
      signer.update(NodeCredential.proofText(node).getBytes(StandardCharsets.UTF_8));
      var b64 = Base64.getEncoder();
      return NodeCredential.ofKey(
          b64.encodeToString(pair.getPublic().getEncoded()), b64.encodeToString(signer.sign()));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot sign with the node's EC key", e);
    }
  }

  /** The certificate stored for this key (leaf first), if any and if it certifies this key. */
  Optional<List<X509Certificate>> certificate() throws IOException {
    Path file = dir.resolve(CERT_FILE);
    if (!Files.exists(file) || !Files.exists(dir.resolve(KEY_FILE))) {
      return Optional.empty();
    }
    List<X509Certificate> chain = ControllerTrust.readCertificates(file);
    boolean ours =
        Arrays.equals(
            chain.getFirst().getPublicKey().getEncoded(), keyPair().getPublic().getEncoded());
    return ours ? Optional.of(chain) : Optional.empty();
  }

  /** Keeps the certificate the controller issued (PEM, leaf first); returns it parsed. */
  List<X509Certificate> storeCertificate(String pem) throws IOException {
    List<X509Certificate> chain = ControllerTrust.certificates(pem, "the node certificate");
    writePrivate(dir.resolve(CERT_FILE), pem);
    return chain;
  }

  private void writePrivate(Path file, String text) throws IOException {
    Files.createDirectories(dir);
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.deleteIfExists(tmp);
    Files.createFile(
        tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(tmp, text, StandardCharsets.US_ASCII, StandardOpenOption.WRITE);
    try (var ch = java.nio.channels.FileChannel.open(tmp, StandardOpenOption.WRITE)) {
      ch.force(true);
    }
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }

  private static byte[] block(String text, String type, Path file) throws IOException {
    String begin = "-----BEGIN " + type + "-----";
    String end = "-----END " + type + "-----";
    int b = text.indexOf(begin);
    int e = text.indexOf(end);
    if (b < 0 || e < b) {
      throw new IOException(
          file + " holds no " + type + ": remove " + file.getParent() + " and reset the node");
    }
    return Base64.getMimeDecoder().decode(text.substring(b + begin.length(), e));
  }

  private static KeyPair readKeys(String text, Path file) throws IOException {
    try {
      var factory = KeyFactory.getInstance("EC");
      PrivateKey privateKey =
          factory.generatePrivate(new PKCS8EncodedKeySpec(block(text, "PRIVATE KEY", file)));
      PublicKey publicKey =
          factory.generatePublic(new X509EncodedKeySpec(block(text, "PUBLIC KEY", file)));
      return new KeyPair(publicKey, privateKey);
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      throw new IOException(file + " does not hold an EC key pair: " + e.getMessage(), e);
    }
  }

  private static KeyPair newKeyPair() {
    try {
      var generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
      return generator.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("ECDSA P-256 is missing from this JDK", e);
    }
  }
}
