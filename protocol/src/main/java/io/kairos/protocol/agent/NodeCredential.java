package io.kairos.protocol.agent;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * What a node proves itself with from its first registration on: made by its agent before that
 * registration and kept in the agent's data directory, so a registration whose reply was lost can
 * be repeated. One of two forms, by how the agent reaches the controller:
 *
 * <ul>
 *   <li>over HTTPS, an EC P-256 key of the agent's own: {@code publicKey} (its X.509
 *       SubjectPublicKeyInfo, base64) and {@code proof} (base64 SHA256withECDSA signature of {@link
 *       #proofText} by that key). The controller answers with a certificate of the cluster CA for
 *       that key, role node, naming the node; every later call presents it as a TLS client
 *       certificate, and the agent's log server serves HTTPS with it.
 *   <li>over plain HTTP (on loopback, {@code kairos up}), {@code secret}: {@code knode_} and 64 hex
 *       digits. Later calls send it as the bearer token.
 * </ul>
 *
 * The controller keeps only a hash (of the secret, or of the public key) with the node's record;
 * the secret itself is never written to the log.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record NodeCredential(String secret, String publicKey, String proof) {
  /** The prefix of a node secret. */
  public static final String SECRET_PREFIX = "knode_";

  /** A node secret. */
  public static NodeCredential ofSecret(String secret) {
    return new NodeCredential(secret, null, null);
  }

  /** A public key and the proof that the sender holds its private key. */
  public static NodeCredential ofKey(String publicKey, String proof) {
    return new NodeCredential(null, publicKey, proof);
  }

  /** What the agent signs to prove it holds the key it registers for {@code node}. */
  public static String proofText(String node) {
    return "kairos-node-key:" + node;
  }
}
