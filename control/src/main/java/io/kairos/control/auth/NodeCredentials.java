package io.kairos.control.auth;

import io.kairos.protocol.agent.NodeCredential;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * What a node's record keeps of its credential ({@code NodeRecord.credential}): {@code secret:} and
 * the SHA-256 of its node secret, or {@code key:} and the SHA-256 of its public key (its X.509
 * SubjectPublicKeyInfo, as its certificate carries it). So a node certificate is matched by its
 * key, and a certificate re-issued for the same key (at every registration) matches too; forgetting
 * the binding ({@code kairos nodes reset}) makes every certificate of that key worthless.
 */
public final class NodeCredentials {
  private static final Pattern SECRET = Pattern.compile("knode_[0-9a-f]{64}");

  private NodeCredentials() {}

  /** A key a node registered, checked: its binding and the key itself. */
  public record Key(String credential, PublicKey publicKey) {}

  /** Whether {@code text} has the form of a node secret. */
  public static boolean isSecret(String text) {
    return text != null && SECRET.matcher(text).matches();
  }

  /** The binding of a node secret. */
  public static String ofSecret(String secret) {
    return "secret:" + Tokens.hash(secret);
  }

  /** The binding of a public key, from its SubjectPublicKeyInfo. */
  public static String ofKey(byte[] spki) {
    return "key:" + sha256(spki);
  }

  /** The binding of the key {@code certificate} certifies. */
  public static String ofCertificate(X509Certificate certificate) {
    return ofKey(certificate.getPublicKey().getEncoded());
  }

  /**
   * Checks a registered key: an EC P-256 public key, and a proof that the sender holds its private
   * key (a signature of {@link NodeCredential#proofText} for {@code node}).
   *
   * @throws IllegalArgumentException naming what is wrong
   */
  public static Key checkKey(NodeCredential c, String node) {
    byte[] spki;
    byte[] proof;
    try {
      spki = Base64.getDecoder().decode(c.publicKey());
      proof = Base64.getDecoder().decode(c.proof() == null ? "" : c.proof());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("publicKey and proof must be base64");
    }
    PublicKey key;
    try {
      key = KeyFactory.getInstance("EC").generatePublic(new X509EncodedKeySpec(spki));
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("publicKey is not an EC public key (X.509, base64)");
    }
    if (!(key instanceof ECPublicKey ec)
        || ec.getParams().getCurve().getField().getFieldSize() != 256) {
      throw new IllegalArgumentException("publicKey must be an EC P-256 key");
    }
    try {
      var verifier = Signature.getInstance("SHA256withECDSA");
      verifier.initVerify(key);
      verifier.update(NodeCredential.proofText(node).getBytes(StandardCharsets.UTF_8));
      if (!verifier.verify(proof)) {
        throw new IllegalArgumentException(
            "proof is not a signature of '" + NodeCredential.proofText(node) + "' by publicKey");
      }
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("proof is not a SHA256withECDSA signature by publicKey");
    }
    return new Key(ofKey(spki), key);
  }

  private static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JDK", e);
    }
  }
}
