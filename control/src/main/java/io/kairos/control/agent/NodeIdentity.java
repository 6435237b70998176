package io.kairos.control.agent;

import io.kairos.control.api.ApiError;
import io.kairos.control.auth.NodeCredentials;
import io.kairos.control.auth.Principal;
import io.kairos.control.auth.Tokens;
import io.kairos.control.tls.ClusterTls;
import io.kairos.control.tls.Role;
import io.kairos.protocol.agent.NodeCredential;
import io.kairos.protocol.agent.Registration;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Who may register a node, and what the node is bound to from then on (kubeadm's bootstrap token
 * and NodeRestriction, Nomad's client secret).
 *
 * <ul>
 *   <li><b>Over HTTPS</b> with the cluster CA, the agent registers an EC key of its own, with a
 *       signature proving it holds it; the node is bound to that key, and the reply carries a
 *       certificate of the CA for it (role node, the node's name, its log server's host). Its
 *       address must be {@code https://}: its log server serves HTTPS with that certificate.
 *   <li><b>Over plain HTTP</b> (loopback, {@code kairos up}; or {@code --insecure}), the agent
 *       registers a node secret of its own; the node is bound to its hash. Its address must be
 *       {@code http://} on the host it registered from, with a log secret of its own (never a token
 *       the cluster knows), which the controller presents to its log server.
 * </ul>
 *
 * A join token registers a name that is not bound (new, reset by an admin, or from before node
 * credentials), or a bound one only with the very credential it is bound to (the agent lost the
 * reply to its first registration). The node's own credential registers its own name only. The
 * state machine enforces the binding once more when it applies the registration.
 */
public final class NodeIdentity {
  private final Optional<ClusterTls> tls;
  private final Predicate<String> isTokenHash;

  /** What a registration is admitted as. */
  public record Admission(
      String credential, Registration stored, Optional<X509Certificate> certificate) {}

  /**
   * @param tls the cluster CA, when this replica has one: nodes registering over HTTPS get
   *     certificates from it
   * @param isTokenHash whether a hash is a token the cluster knows (a log secret must not be one)
   */
  public NodeIdentity(Optional<ClusterTls> tls, Predicate<String> isTokenHash) {
    this.tls = tls;
    this.isTokenHash = isTokenHash;
  }

  /**
   * Admits a registration or refuses it with a 400 (naming the field) or 403.
   *
   * @param who the credential it came with: a join token, or a node's own
   * @param bound the credential the name is bound to now, or null
   * @param remoteAddress the address the request came from
   * @param overTls whether it came over HTTPS
   */
  public Admission admit(
      Registration r, Principal who, String bound, String remoteAddress, boolean overTls) {
    NodeCredential c = r.credential();
    if (c == null) {
      throw ApiError.invalid(
          "credential",
          "a registration carries the node's credential: a public key over HTTPS, a node secret"
              + " over plain HTTP",
          "run an agent of this release");
    }
    boolean certificate = overTls && tls.isPresent();
    URI address = URI.create(r.address());
    String credential;
    Optional<X509Certificate> issued = Optional.empty();
    Registration stored;
    if (certificate) {
      if (c.publicKey() == null) {
        throw ApiError.invalid(
            "credential.publicKey",
            "over HTTPS a node registers a public key of its own (it gets a certificate for it)",
            null);
      }
      NodeCredentials.Key key;
      try {
        key = NodeCredentials.checkKey(c, r.node());
      } catch (IllegalArgumentException e) {
        throw ApiError.invalid("credential.proof", e.getMessage(), null);
      }
      if (!"https".equals(address.getScheme())) {
        throw ApiError.invalid(
            "address",
            "a node with a certificate serves its logs over HTTPS: address must be https://",
            null);
      }
      credential = key.credential();
      authorize(r, who, bound, credential);
      issued =
          Optional.of(
              tls.get()
                  .certify(
                      r.node(),
                      Role.NODE,
                      List.of(bare(address.getHost())),
                      key.publicKey(),
                      ClusterTls.NODE_VALIDITY));
      stored = r.withCredential(null).withLogToken(null);
    } else {
      if (!NodeCredentials.isSecret(c.secret())) {
        throw ApiError.invalid(
            "credential.secret",
            "over plain HTTP a node registers a secret of its own: knode_ and 64 hex digits",
            null);
      }
      if (!"http".equals(address.getScheme())) {
        throw ApiError.invalid(
            "address", "over plain HTTP a node's log server is plain HTTP: http://", null);
      }
      if (!isFrom(bare(address.getHost()), remoteAddress)) {
        throw ApiError.invalid(
            "address",
            "address "
                + r.address()
                + " is not on the host this node registers from ("
                + remoteAddress
                + "): the controller fetches logs only from where a node is",
            "set the agent's --listen to this machine's address the controllers reach");
      }
      if (r.logToken() == null
          || r.logToken().length() < 32
          || r.logToken().length() > 256
          || isTokenHash.test(Tokens.hash(r.logToken()))) {
        throw ApiError.invalid(
            "logToken",
            "a node without a certificate registers a log secret of its own (32 to 256"
                + " characters, not a token of the cluster)",
            null);
      }
      credential = NodeCredentials.ofSecret(c.secret());
      authorize(r, who, bound, credential);
      stored = r.withCredential(null);
    }
    return new Admission(credential, stored, issued);
  }

  /** A certificate and the CA's, as PEM. */
  String chainPem(X509Certificate certificate) {
    return tls.orElseThrow().chainPem(certificate);
  }

  /** Every CA certificate the cluster trusts, as PEM. */
  String caPem() {
    return tls.orElseThrow().caPem();
  }

  private static void authorize(Registration r, Principal who, String bound, String credential) {
    if (who.isNode()) {
      if (!who.user().equals(r.node())) {
        throw ApiError.forbidden(
            "node " + who.user() + "'s credential registers node " + who.user() + " only");
      }
      if (!credential.equals(bound)) {
        throw ApiError.forbidden(
            "node " + r.node() + " registers again with the credential it is bound to");
      }
      return;
    }
    if (bound != null && !bound.equals(credential)) {
      throw ApiError.forbidden(
          "node "
              + r.node()
              + " is registered with a credential of its own: its agent must present it. If that"
              + " agent's data is lost, an admin runs `kairos nodes reset "
              + r.node()
              + "` and the new agent joins with a join token");
    }
  }

  private static String bare(String host) {
    return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
  }

  /** Whether {@code host} is (or resolves to) {@code remote}, or both are loopback. */
  static boolean isFrom(String host, String remote) {
    try {
      InetAddress from = InetAddress.getByName(bare(remote));
      for (InetAddress a : InetAddress.getAllByName(host)) {
        if (a.equals(from) || (a.isLoopbackAddress() && from.isLoopbackAddress())) {
          return true;
        }
      }
      return false;
    } catch (UnknownHostException e) {
      return false;
    }
  }
}
