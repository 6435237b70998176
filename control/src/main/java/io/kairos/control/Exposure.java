package io.kairos.control;

import io.kairos.control.raft.PeerAddress;
import io.kairos.control.raft.RaftTransport;
import io.kairos.control.tls.ClusterTls;
import java.io.IOException;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * One replica's exposure to the network, decided at start from its {@link NetworkSecurity}: where
 * the Raft port binds and whether it speaks mutual TLS, whether the API serves HTTPS and with which
 * certificate, and the cluster CA agents fetch.
 *
 * <p>The Raft transport speaks mutual TLS unless {@code --insecure}; so no replica opens Raft in
 * plain text on a non-loopback address without being told. The API serves HTTPS with the replica
 * certificate on a non-loopback address (or with {@code --tls}), with a site's certificate when
 * given {@code --tls-keystore}, and plain HTTP on loopback ({@code kairos up}) or with {@code
 * --insecure}.
 */
final class Exposure implements AutoCloseable {
  private final String raftBindHost;
  private final Optional<ClusterTls> tls;
  private final Optional<SslContextFactory.Server> https;

  private Exposure(
      String raftBindHost, Optional<ClusterTls> tls, Optional<SslContextFactory.Server> https) {
    this.raftBindHost = raftBindHost;
    this.tls = tls;
    this.https = https;
  }

  /**
   * Opens (and on first start makes) the replica's TLS identity where it needs one.
   *
   * @param self this replica, ports resolved
   * @param raftBindHost where its Raft port binds
   * @param group whether it is one of a group (which must share a CA)
   */
  static Exposure open(
      ControllerConfig config,
      PeerAddress self,
      String raftBindHost,
      boolean group,
      InstantSource clock)
      throws IOException {
    NetworkSecurity security = config.security();
    boolean clusterHttps = config.tls().isEmpty() && security.https(self.host());
    Optional<ClusterTls> tls = Optional.empty();
    if (security.raftTls() || clusterHttps) {
      var hosts = new java.util.ArrayList<>(security.extraHosts());
      if (!raftBindHost.equals(self.host()) && !NetworkSecurity.isWildcard(raftBindHost)) {
        hosts.add(raftBindHost);
      }
      tls =
          Optional.of(
              ClusterTls.open(
                  config.dataDir(),
                  self.id(),
                  ClusterTls.hostsFor(self.host(), hosts),
                  security.caFrom(),
                  group,
                  security.rotateCerts(),
                  clock));
      tls.get().startRenewal();
    }
    Optional<SslContextFactory.Server> https =
        config.tls().isPresent()
            ? Optional.of(
                Https.fromKeystore(
                    config.tls().get(), tls.map(t -> t.ca().trusted()).orElse(java.util.List.of())))
            : clusterHttps ? tls.map(t -> Https.fromContext(t.httpsContext())) : Optional.empty();
    return new Exposure(raftBindHost, tls, https);
  }

  String scheme() {
    return https.isPresent() ? "https" : "http";
  }

  /** The Raft transport: this bind host, mutual TLS with the replica certificate unless plain. */
  RaftTransport raftTransport(boolean raftTls) {
    if (!raftTls) {
      return RaftTransport.plain(raftBindHost);
    }
    ClusterTls t = tls.orElseThrow();
    return RaftTransport.mutualTls(
        raftBindHost, new RaftTransport.MutualTls(t.keyManager(), t.replicaTrust()));
  }

  /** Adds the HTTPS connector when the API serves HTTPS. */
  void configure(io.javalin.config.JavalinConfig config, String host, int port) {
    https.ifPresent(ssl -> Https.configure(config, ssl, host, port));
  }

  boolean isHttps() {
    return https.isPresent();
  }

  /** The cluster CA's certificates (PEM), served at {@code GET /api/v1/ca.pem}. */
  Optional<String> caPem() {
    return tls.map(ClusterTls::caPem);
  }

  /** The pin agents check ({@code sha256:...}). */
  Optional<String> caHash() {
    return tls.map(t -> t.ca().hash());
  }

  Optional<ClusterTls> clusterTls() {
    return tls;
  }

  String raftBindHost() {
    return raftBindHost;
  }

  List<String> warnings(NetworkSecurity security, String url, int raftPort) {
    return security.plainTextWarnings(url, isHttps(), raftBindHost, raftPort);
  }

  @Override
  public void close() {
    tls.ifPresent(ClusterTls::close);
  }
}
