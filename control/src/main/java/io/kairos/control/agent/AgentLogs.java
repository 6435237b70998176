package io.kairos.control.agent;

import io.kairos.control.auth.NodeCredentials;
import io.kairos.control.tls.ClusterTls;
import io.kairos.control.tls.Role;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Optional;
import javax.net.ssl.SSLPeerUnverifiedException;

/**
 * Fetches task output from the agent of the node a task ran on, over a channel authenticated both
 * ways; no credential of the controller's ever goes to an address a node chose.
 *
 * <ul>
 *   <li>A node with a certificate ({@code https://} address): the replica presents its own
 *       certificate as a TLS client certificate (the agent's log server takes only replicas of its
 *       cluster CA), and trusts only a server presenting a node certificate of the CA whose key is
 *       the one the node is bound to: anything else answering there is not relayed.
 *   <li>A node with a secret ({@code http://} address, on loopback or {@code --insecure}): the log
 *       secret the agent registered (its own, never a token of the cluster) as the bearer token.
 *       The address was checked at registration to be the host the node registered from.
 * </ul>
 */
public final class AgentLogs {
  static final Duration TIMEOUT = Duration.ofSeconds(10);

  private final HttpClient plain;
  private final Optional<HttpClient> mutualTls;

  /** Where a task's output is, and how its node proves itself. */
  public record Target(String node, String address, String logToken, String credential) {}

  /** What the agent answered. */
  public record Reply(int status, byte[] body, Optional<String> offset, Optional<String> done) {}

  /** The server that answered is not the node, or the node cannot be reached safely. */
  public static final class Unproven extends Exception {
    private static final long serialVersionUID = 1L;

    Unproven(String message) {
      super(message);
    }
  }

  public AgentLogs(Optional<ClusterTls> tls) {
    this.plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    this.mutualTls =
        tls.map(
            t ->
                HttpClient.newBuilder()
                    .connectTimeout(Duration.ofSeconds(2))
                    .sslContext(t.nodeClientContext())
                    .build());
  }

  /**
   * GETs {@code pathAndQuery} from the target's log server.
   *
   * @throws Unproven when the node cannot be asked without trusting an address it chose, or the
   *     server did not prove it is the node
   */
  public Reply fetch(Target target, String pathAndQuery)
      throws IOException, InterruptedException, Unproven {
    URI uri = URI.create(target.address() + pathAndQuery);
    var request = HttpRequest.newBuilder(uri).timeout(TIMEOUT).GET();
    HttpClient client;
    if ("https".equals(uri.getScheme())) {
      if (target.credential() == null || !target.credential().startsWith("key:")) {
        throw new Unproven("node " + target.node() + " has no certificate to check its server by");
      }
      client =
          mutualTls.orElseThrow(
              () -> new Unproven("this controller has no cluster CA to reach " + uri + " with"));
    } else {
      if (target.logToken() == null) {
        throw new Unproven(
            "node "
                + target.node()
                + " registered without a log secret (an older agent): restart its agent to fetch"
                + " logs");
      }
      client = plain;
      request.header("Authorization", "Bearer " + target.logToken());
    }
    HttpResponse<byte[]> response =
        client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    if (client != plain) {
      check(target, response);
    }
    return new Reply(
        response.statusCode(),
        response.body(),
        response.headers().firstValue("Kairos-Log-Offset"),
        response.headers().firstValue("Kairos-Log-Done"));
  }

  /** The server's certificate must be a node certificate of the key the node is bound to. */
  private static void check(Target target, HttpResponse<?> response) throws Unproven {
    Certificate[] chain;
    try {
      chain =
          response
              .sslSession()
              .orElseThrow(() -> new SSLPeerUnverifiedException("no TLS session"))
              .getPeerCertificates();
    } catch (SSLPeerUnverifiedException e) {
      throw new Unproven("the server at " + target.address() + " presented no certificate");
    }
    if (chain.length == 0
        || !(chain[0] instanceof X509Certificate leaf)
        || !Role.NODE.isIn(leaf)
        || !NodeCredentials.ofCertificate(leaf).equals(target.credential())) {
      throw new Unproven(
          "the server at "
              + target.address()
              + " is not node "
              + target.node()
              + " (its certificate is not the one the node is bound to): its answer is not relayed");
    }
  }
}
