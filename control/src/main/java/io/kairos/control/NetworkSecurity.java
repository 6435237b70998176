package io.kairos.control;

import io.kairos.control.raft.PeerAddress;
import io.kairos.control.tls.CertificateAuthority;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * How a replica shows itself on the network: TLS or plain text, where its Raft transport binds,
 * which extra names its certificate carries, where its cluster CA comes from, and whether to
 * re-issue its certificate now.
 *
 * @param mode {@link Mode#AUTO} unless told otherwise
 * @param raftListen {@code HOST:PORT} for the Raft transport ({@code --raft-listen}); empty binds
 *     the {@code --listen} host on the replica's Raft port
 * @param extraHosts names and addresses the replica certificate carries besides the listen host
 *     ({@code --tls-san})
 * @param caFrom a directory with the group's CA to copy into the data directory ({@code --ca-from})
 * @param rotateCerts re-issue the replica certificate at start ({@code --rotate-certs})
 */
public record NetworkSecurity(
    Mode mode,
    Optional<String> raftListen,
    List<String> extraHosts,
    Optional<Path> caFrom,
    boolean rotateCerts) {

  /** TLS or not. */
  public enum Mode {
    /**
     * The default: HTTPS on a non-loopback address and plain HTTP on loopback ({@code kairos up});
     * the Raft transport always speaks mutual TLS.
     */
    AUTO,
    /** HTTPS and mutual-TLS Raft on any address, loopback included ({@code --tls}). */
    TLS,
    /** Plain text for the API and Raft, even on the network ({@code --insecure}); warned about. */
    INSECURE
  }

  public static final NetworkSecurity DEFAULT =
      new NetworkSecurity(Mode.AUTO, Optional.empty(), List.of(), Optional.empty(), false);

  public NetworkSecurity {
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(raftListen, "raftListen");
    extraHosts = List.copyOf(extraHosts);
    Objects.requireNonNull(caFrom, "caFrom");
  }

  public NetworkSecurity withMode(Mode m) {
    return new NetworkSecurity(m, raftListen, extraHosts, caFrom, rotateCerts);
  }

  /** Whether the API serves HTTPS with the replica certificate on {@code listenHost}. */
  boolean https(String listenHost) {
    return switch (mode) {
      case AUTO -> !CertificateAuthority.isLoopback(listenHost);
      case TLS -> true;
      case INSECURE -> false;
    };
  }

  /** Whether the Raft transport speaks mutual TLS. */
  boolean raftTls() {
    return mode != Mode.INSECURE;
  }

  /** Where the Raft port binds, and how this replica is dialled for Raft. */
  record RaftBinding(PeerAddress self, String bindHost) {}

  /**
   * Resolves {@code --raft-listen} against this replica's address: by default the Raft port binds
   * the {@code --listen} host. A single replica may move it anywhere; in a group the port must be
   * the one {@code --peers} gives this replica (peers dial that), and only the bind host changes.
   */
  RaftBinding raftBinding(PeerAddress self, boolean group) {
    if (raftListen.isEmpty()) {
      return new RaftBinding(self, self.host());
    }
    String text = raftListen.get();
    int colon = text.lastIndexOf(':');
    if (colon <= 0) {
      throw new IllegalArgumentException(
          "--raft-listen " + text + " must be HOST:PORT, e.g. 10.0.0.5:9080");
    }
    String host = text.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(text.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--raft-listen " + text + ": the port is not a number");
    }
    if (port < 0 || port > 65535 || host.isBlank()) {
      throw new IllegalArgumentException(
          "--raft-listen " + text + " must be HOST:PORT with a port 0-65535");
    }
    if (group) {
      if (port != self.raftPort()) {
        throw new IllegalArgumentException(
            "--raft-listen "
                + text
                + ": the port must be this replica's Raft port in --peers ("
                + self.raftPort()
                + "), which the other replicas dial; write it there as HOST:HTTP:RAFT");
      }
      return new RaftBinding(self, host);
    }
    String dial = isWildcard(host) ? "127.0.0.1" : host;
    return new RaftBinding(self.withRaft(dial, port), host);
  }

  static boolean isWildcard(String host) {
    return host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]");
  }

  /** What runs in plain text on a non-loopback address: one warning line each; empty if none. */
  List<String> plainTextWarnings(String url, boolean https, String raftBindHost, int raftPort) {
    var out = new ArrayList<String>();
    java.net.URI uri = java.net.URI.create(url);
    if (!https && !CertificateAuthority.isLoopback(uri.getHost())) {
      out.add(
          "the API "
              + url
              + " serves plain HTTP on a non-loopback address (--insecure): tokens, job commands"
              + " and environments cross the network readable by anyone on it");
    }
    if (!raftTls() && !CertificateAuthority.isLoopback(raftBindHost)) {
      out.add(
          "the Raft transport "
              + raftBindHost
              + ":"
              + raftPort
              + " runs without TLS on a non-loopback address (--insecure): anyone who reaches"
              + " it can append commands to the log, such as an admin token of their own");
    }
    return out;
  }
}
