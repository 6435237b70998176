package io.kairos.control.raft;

import java.util.Objects;
import java.util.Optional;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * How a replica's Raft transport (Ratis over gRPC) is exposed: the one address it binds, and the
 * mutual TLS its server and its client use, if any.
 *
 * @param bindHost the host or address the Raft port binds (never every interface unless told {@code
 *     0.0.0.0})
 * @param tls the replica's key and certificate and the trust in its peers; empty for plain text
 */
public record RaftTransport(String bindHost, Optional<MutualTls> tls) {
  public RaftTransport {
    if (bindHost == null || bindHost.isBlank()) {
      throw new IllegalArgumentException("the Raft bind host must not be blank");
    }
    Objects.requireNonNull(tls, "tls");
  }

  /** The key a replica presents and the trust it places in peers, both ways. */
  public record MutualTls(X509ExtendedKeyManager keys, X509ExtendedTrustManager trust) {
    public MutualTls {
      Objects.requireNonNull(keys, "keys");
      Objects.requireNonNull(trust, "trust");
    }
  }

  /** Plain text on {@code bindHost} (loopback tests, or {@code --insecure}). */
  public static RaftTransport plain(String bindHost) {
    return new RaftTransport(bindHost, Optional.empty());
  }

  public static RaftTransport mutualTls(String bindHost, MutualTls tls) {
    return new RaftTransport(bindHost, Optional.of(tls));
  }
}
