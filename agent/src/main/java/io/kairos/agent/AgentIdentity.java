package io.kairos.agent;

import io.kairos.protocol.agent.NodeCredential;
import io.kairos.protocol.agent.Registered;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Which credential the agent presents, and its log server's side of it.
 *
 * <p>Against {@code https://} controllers the node's credential is a key pair ({@link NodeKeys}),
 * for which each registration's reply carries a certificate of the cluster CA: every later call
 * presents it as the TLS client certificate, and the log server serves HTTPS with it to controller
 * replicas only ({@link NodeTls}). Against {@code http://} controllers (loopback) it is a node
 * secret, sent as the bearer token, and the log server takes the log secret the agent registered.
 *
 * <p>A registration goes with the node's credential when the data directory holds one, else with
 * the join token; when the node's credential is refused (an admin reset the node), the next one
 * goes with the join token, if there is one. Not thread-safe: the agent's loop thread uses it.
 */
final class AgentIdentity {
  private static final org.slf4j.Logger log =
      org.slf4j.LoggerFactory.getLogger(AgentIdentity.class);

  private final AgentConfig config;
  private final boolean certificateMode;
  private final NodeKeys keys;
  private final NodeTls tls = new NodeTls();
  private NodeCredential credential;
  private boolean viaJoin;

  /** The secret a plain-HTTP log server takes from controllers, registered with the node. */
  private final String logToken = newLogToken();

  AgentIdentity(AgentConfig config) {
    this.config = config;
    this.certificateMode = config.controllers().getFirst().startsWith("https://");
    this.keys = NodeKeys.in(config.dataDir());
    if (config.joinToken() == null && !keys.exists(certificateMode)) {
      throw new IllegalArgumentException(
          "no join token, and "
              + config.dataDir()
              + " holds no credential of node "
              + config.nodeName()
              + ": give the join token (a node joins with it once)");
    }
  }

  /** The client's key manager: the node's certificate, once it has one. */
  Optional<javax.net.ssl.KeyManager> keyManager() {
    return certificateMode ? Optional.of(tls.keyManager()) : Optional.empty();
  }

  /**
   * Makes (or reads) the node's credential, and opens the log server on {@code host:port}: HTTPS
   * with the node's certificate (a stored one until the next registration brings a new one), or
   * plain HTTP taking {@code logToken}.
   */
  LogServer open(String host, int port, Path dataDir, TaskTable table) throws IOException {
    viaJoin = !keys.exists(certificateMode); // before the credential is made below
    credential = keys.credential(certificateMode, config.nodeName());
    if (!certificateMode) {
      return new LogServer(host, port, logToken, dataDir, table);
    }
    var stored = keys.certificate();
    if (stored.isPresent()) {
      tls.present(keys.keyPair().getPrivate(), stored.get());
    }
    return LogServer.https(host, port, tls.serverContext(), dataDir, table);
  }

  /**
   * The log server's base URL, as registered: its scheme, host (a name for a wildcard) and port.
   */
  String address(String listenHost, int port) {
    return (certificateMode ? "https" : "http") + "://" + urlHost(listenHost) + ":" + port;
  }

  /** The log secret a registration carries; null with a certificate, which replaces it. */
  String logToken() {
    return certificateMode ? null : logToken;
  }

  private static String newLogToken() {
    byte[] bytes = new byte[32];
    new java.security.SecureRandom().nextBytes(bytes);
    return "klog_" + java.util.HexFormat.of().formatHex(bytes);
  }

  /** The host as a URL writes it: the machine's name for a wildcard, brackets for IPv6. */
  private static String urlHost(String listenHost) {
    String host = listenHost;
    if (host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]")) {
      try {
        host = java.net.InetAddress.getLocalHost().getHostName();
      } catch (java.net.UnknownHostException e) {
        host = "127.0.0.1";
      }
    }
    return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
  }

  /** What a registration carries. */
  NodeCredential credential() {
    return credential;
  }

  /** Sets what the next call presents: the join token to join, else the node's own credential. */
  void authorize(ControllerClient client) {
    if (viaJoin) {
      client.authorize(config.joinToken());
    } else {
      client.authorize(certificateMode ? null : credential.secret());
    }
  }

  /**
   * A registration was refused (401, 403). When it went with the node's own credential (an admin
   * reset the node) and there is a join token, the next one goes with that.
   *
   * @return why the agent must stop, or empty to try again
   */
  Optional<String> refused(int status, String body) {
    if (!viaJoin && config.joinToken() != null) {
      log.warn(
          "agent {}: the controller refused this node's own credential ({}: {}); joining again"
              + " with the join token",
          config.nodeName(),
          status,
          body);
      viaJoin = true;
      return Optional.empty();
    }
    return Optional.of(
        "the controller refused "
            + (viaJoin ? "the join token" : "this node's credential, and there is no join token")
            + " (HTTP "
            + status
            + ": "
            + body
            + "); stopping");
  }

  /**
   * After a registration: from now on the node presents its own credential. With a certificate,
   * keeps it, presents it (to the controller and as the log server), lets in the cluster CA's
   * replicas, and makes the client handshake again.
   *
   * @return why that cannot be done, or empty
   */
  Optional<String> identify(Registered registered, ControllerClient client) {
    viaJoin = false;
    if (!certificateMode) {
      client.authorize(credential.secret());
      return Optional.empty();
    }
    if (registered.certificate() == null || registered.ca() == null) {
      return Optional.of("the controller answered without a certificate for this node");
    }
    try {
      var chain = keys.storeCertificate(registered.certificate());
      tls.present(keys.keyPair().getPrivate(), chain);
      tls.trust(ControllerTrust.certificates(registered.ca(), "the cluster CA"));
    } catch (IOException e) {
      return Optional.of("cannot keep this node's certificate: " + e.getMessage());
    }
    client.authorize(null);
    client.reconnect();
    return Optional.empty();
  }
}
