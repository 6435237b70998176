package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.kairos.agent.Agent;
import io.kairos.agent.AgentConfig;
import io.kairos.agent.ControllerTrust;
import io.kairos.control.Controller;
import io.kairos.control.ControllerConfig;
import io.kairos.control.NetworkSecurity;
import io.kairos.control.tls.CertificateAuthority;
import io.kairos.control.tls.Role;
import io.kairos.protocol.JobState;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 14's downgrade and man-in-the-middle attacks against a controller serving HTTPS with its
 * cluster CA ({@code --tls} on loopback), and certificate rotation:
 *
 * <ul>
 *   <li>an agent or the CLI that verifies against the CA, pointed at {@code http://}, refuses with
 *       a message before opening a connection;
 *   <li>a server with another CA's certificate (even one that serves the real CA's certificate as
 *       its {@code ca.pem}) gets no token from the CLI, from an agent pinning on first contact, or
 *       from an agent that pinned before;
 *   <li>after {@code --rotate-certs} an agent pinned to the same CA carries on: it gets work.
 * </ul>
 */
class TlsAttackTest {
  @TempDir Path dir;
  Controller controller;
  int port;
  Agent agent;
  HttpsServer mitm;
  final ConcurrentLinkedQueue<String> mitmSaw = new ConcurrentLinkedQueue<>();

  @BeforeEach
  void start() throws Exception {
    port = freePortPair();
    controller = Controller.start(config(false));
    await("the controller leads", Duration.ofSeconds(30), controller.replica()::isLeaderReady);
  }

  @AfterEach
  void stop() throws Exception {
    if (agent != null) {
      agent.close();
    }
    if (mitm != null) {
      mitm.stop(0);
    }
    controller.close();
    Environment.reset();
  }

  private ControllerConfig config(boolean rotate) {
    // One root user, as the tests run: the admin's jobs run as root.
    return ControllerConfig.single(dir.resolve("ctl"), "127.0.0.1", port)
        .withRunAs(
            new io.kairos.control.auth.RunAsPolicy(io.kairos.control.auth.RunAsPolicy.ROOT, true))
        .withSecurity(
            new NetworkSecurity(
                NetworkSecurity.Mode.TLS,
                java.util.Optional.empty(),
                List.of(),
                java.util.Optional.empty(),
                rotate));
  }

  private Path caPem() {
    return dir.resolve("ctl/ca.pem");
  }

  @Test
  void theControllerServesHttpsAndTheCaThatVerifiesIt() throws Exception {
    assertThat(controller.url()).isEqualTo("https://127.0.0.1:" + port);
    var r =
        kairos(
            "whoami",
            "--server",
            controller.url(),
            "--ca",
            caPem().toString(),
            "--token",
            controller.adminToken());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("admin");
    assertThat(controller.caHash()).contains(CertificateAuthority.load(dir.resolve("ctl")).hash());
  }

  @Test
  void theCliWithACaRefusesPlainHttpBeforeConnecting() throws Exception {
    try (var listener = new Listener()) {
      var r =
          kairos(
              "whoami",
              "--server",
              "http://127.0.0.1:" + listener.port(),
              "--ca",
              caPem().toString());
      assertThat(r.code()).isEqualTo(2);
      assertThat(r.err()).contains("is plain HTTP").contains("refusing to send the token");
      assertThat(listener.connections()).as("connections to the plain port").isZero();
    }
  }

  @Test
  void theCliOnHttpOfTheHttpsControllerSaysToUseHttps() {
    var r = kairos("whoami", "--server", "http://127.0.0.1:" + port);
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.err()).contains("does it serve HTTPS? then use https://127.0.0.1:" + port);
  }

  @Test
  void anAgentThatPinsRefusesPlainHttpBeforeConnecting() throws Exception {
    try (var listener = new Listener()) {
      String url = "http://127.0.0.1:" + listener.port();
      assertThatThrownBy(() -> ControllerTrust.pin(List.of(url), hash(), dir.resolve("agent")))
          .isInstanceOf(ControllerTrust.PinMismatchException.class)
          .hasMessageContaining("plain HTTP");
      var pinned =
          AgentConfig.builder(List.of(url), "kjoin_secret", "n1", dir.resolve("a1"))
              .caFile(caPem())
              .build();
      assertThatThrownBy(() -> ControllerTrust.of(pinned))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("is plain HTTP, but this agent verifies its controller");
      assertThat(listener.connections()).isZero();
    }
  }

  @Test
  void aManInTheMiddleServingTheRealCaButItsOwnCertificateGetsNoToken() throws Exception {
    String url = startMitm(Files.readString(caPem()));
    assertThatThrownBy(() -> ControllerTrust.pin(List.of(url), hash(), dir.resolve("agent")))
        .isInstanceOf(ControllerTrust.PinMismatchException.class)
        .hasMessageContaining("presents a certificate it did not sign");
    assertThat(mitmSaw).containsExactly("GET /api/v1/ca.pem authorization=null");
    assertThat(dir.resolve("agent/ca.pem")).doesNotExist();
  }

  @Test
  void aManInTheMiddleWithItsOwnCaFailsThePin() throws Exception {
    String url = startMitm(null);
    assertThatThrownBy(() -> ControllerTrust.pin(List.of(url), hash(), dir.resolve("agent")))
        .isInstanceOf(ControllerTrust.PinMismatchException.class)
        .hasMessageContaining("serves no CA with the hash " + hash());
    assertThat(mitmSaw).allMatch(s -> s.endsWith("authorization=null"));
  }

  @Test
  void aPinnedAgentAndTheCliSendNothingToAManInTheMiddle() throws Exception {
    String url = startMitm(Files.readString(caPem()));
    agent = agent(url, caPem());
    var r = kairos("whoami", "--server", url, "--ca", caPem().toString(), "--token", "kadm_x");
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.err()).contains("TLS with " + url + " failed, nothing was sent");
    Thread.sleep(2_000); // the agent has tried to register a few times by now
    assertThat(mitmSaw).as("requests the man in the middle received").isEmpty();
  }

  @Test
  void aRotatedCertificateIsAcceptedByAnAgentPinnedToTheSameCa() throws Exception {
    Path pinned = ControllerTrust.pin(List.of(controller.url()), hash(), dir.resolve("agent"));
    agent = agent(controller.url(), pinned);
    var admin =
        new ApiClient(List.of(URI.create(controller.url())), controller.adminToken(), tls());
    await("the node is up", Duration.ofSeconds(30), () -> nodeUp(admin));
    X509Certificate before = presented();

    controller.close();
    controller = Controller.start(config(true));
    await(
        "the controller leads again", Duration.ofSeconds(30), controller.replica()::isLeaderReady);
    X509Certificate after = presented();
    assertThat(after.getSerialNumber()).isNotEqualTo(before.getSerialNumber());
    after.verify(CertificateAuthority.load(dir.resolve("ctl")).certificate().getPublicKey());

    var submitted = admin.post("/api/v1/jobs", Map.of("command", List.of("true"), "gpus", 1));
    long id = submitted.get("id").asLong();
    await(
        "the pinned agent runs a job after the rotation",
        Duration.ofSeconds(60),
        () ->
            JobState.SUCCEEDED
                .name()
                .equals(admin.get("/api/v1/jobs/" + id).get("state").asText()));
    // A new agent pins the same hash against the rotated certificate.
    ControllerTrust.pin(List.of(controller.url()), hash(), dir.resolve("agent2"));
  }

  /**
   * Over HTTPS a job's output comes from its node's log server over mutual TLS (the replica's
   * certificate one way, the node's the other). A rogue with the join token that registers a node
   * whose address is the real agent's gets nothing relayed: the server there does not hold the
   * rogue's key, so the controller answers 502 and never shows what it said.
   */
  @Test
  void logsComeOverMutualTlsFromTheNodeItselfAndNotFromAnAddressARogueNamed() throws Exception {
    agent = agent(controller.url(), caPem());
    var admin =
        new ApiClient(List.of(URI.create(controller.url())), controller.adminToken(), tls());
    await("the node is up", Duration.ofSeconds(30), () -> nodeUp(admin));
    assertThat(agent.address()).startsWith("https://");
    long id =
        admin
            .post(
                "/api/v1/jobs", Map.of("command", List.of("echo", "from the real node"), "gpus", 1))
            .get("id")
            .asLong();
    await(
        "the job succeeds",
        Duration.ofSeconds(60),
        () ->
            JobState.SUCCEEDED
                .name()
                .equals(admin.get("/api/v1/jobs/" + id).get("state").asText()));
    var logs =
        kairos(
            "logs",
            String.valueOf(id),
            "--server",
            controller.url(),
            "--ca",
            caPem().toString(),
            "--token",
            controller.adminToken());
    assertThat(logs.code()).as(logs.err()).isZero();
    assertThat(logs.out()).contains("from the real node");

    // The rogue: its own key (so it gets a certificate), the real agent's address.
    var rogue = new BenchNodes("rogue", 1, true);
    var gpus = new java.util.ArrayList<io.kairos.protocol.GpuDevice>();
    for (int i = 0; i < 4; i++) {
      gpus.add(new io.kairos.protocol.GpuDevice(i, "GPU-rogue-" + i, "H100", 80L << 30));
    }
    var keyed =
        rogue.withCredential(
            0,
            new io.kairos.protocol.agent.Registration(
                "rogue0",
                "https://127.0.0.1:1",
                gpus,
                8,
                1L << 34,
                Map.of(),
                "z",
                "b",
                "r",
                4,
                null,
                null));
    var pointing =
        new io.kairos.protocol.agent.Registration(
            "rogue0",
            agent.address(),
            gpus,
            8,
            1L << 34,
            Map.of(),
            "z",
            "b",
            "r",
            4,
            null,
            null,
            keyed.credential());
    var trusting = ControllerTrust.trusting(ControllerTrust.readCertificates(caPem()));
    try (var http = java.net.http.HttpClient.newBuilder().sslContext(trusting).build()) {
      var registered =
          http.send(
              java.net.http.HttpRequest.newBuilder(
                      URI.create(controller.url() + "/api/v1/agents/register"))
                  .header("Authorization", "Bearer " + controller.joinToken())
                  .header("Content-Type", "application/json")
                  .POST(
                      java.net.http.HttpRequest.BodyPublishers.ofString(
                          new com.fasterxml.jackson.databind.ObjectMapper()
                              .writeValueAsString(pointing)))
                  .build(),
              java.net.http.HttpResponse.BodyHandlers.ofString());
      assertThat(registered.statusCode()).as(registered.body()).isEqualTo(200);
      long onRogue =
          admin
              .post("/api/v1/jobs", Map.of("command", List.of("echo", "secret"), "gpus", 4))
              .get("id")
              .asLong();
      await(
          "the job is placed on the rogue's node",
          Duration.ofSeconds(30),
          () ->
              JobState.RUNNING
                  .name()
                  .equals(admin.get("/api/v1/jobs/" + onRogue).get("state").asText()));
      var relayed =
          http.send(
              java.net.http.HttpRequest.newBuilder(
                      URI.create(controller.url() + "/api/v1/jobs/" + onRogue + "/logs"))
                  .header("Authorization", "Bearer " + controller.adminToken())
                  .build(),
              java.net.http.HttpResponse.BodyHandlers.ofString());
      assertThat(relayed.statusCode()).as(relayed.body()).isEqualTo(502);
      assertThat(relayed.body()).contains("is not node rogue0");
    }
  }

  // --- helpers -------------------------------------------------------------------------------

  private String hash() {
    return controller.caHash().orElseThrow();
  }

  private ClientTls tls() {
    Environment.variables = Map.of("KAIROS_CA", caPem().toString())::get;
    return ClientTls.resolve(null, false);
  }

  private static boolean nodeUp(ApiClient admin) {
    var nodes = admin.get("/api/v1/nodes");
    return nodes.size() == 1 && "UP".equals(nodes.get(0).get("state").asText());
  }

  /** The certificate the controller presents to a new connection. */
  private X509Certificate presented() throws Exception {
    var context = ControllerTrust.trusting(ControllerTrust.readCertificates(caPem()));
    try (var socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
      socket.startHandshake();
      return (X509Certificate) socket.getSession().getPeerCertificates()[0];
    }
  }

  private Agent agent(String url, Path ca) throws IOException {
    var config =
        AgentConfig.builder(List.of(url), controller.joinToken(), "n1", dir.resolve("agent-n1"))
            .gpus("1")
            .cgroups(false)
            .fenceWatchdog(false)
            .allowRootJobs(true)
            .caFile(ca)
            .build();
    var a = new Agent(config, InstantSource.system(), new Random(1));
    a.start();
    return a;
  }

  /**
   * An HTTPS server on loopback with a certificate of another CA, naming 127.0.0.1 as the real one
   * does. It serves {@code caPem} (the real CA's, which is public) or its own CA's at {@code
   * /api/v1/ca.pem}, and notes every request it gets with its Authorization header.
   */
  private String startMitm(String caPemToServe) throws Exception {
    var other = CertificateAuthority.create(dir.resolve("mitm-ca"), Instant.now());
    var issued =
        other.issue(
            new CertificateAuthority.Request(
                "127_0_0_1_" + port, Role.REPLICA, List.of("127.0.0.1"), Duration.ofDays(1)),
            Instant.now());
    var store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    store.setKeyEntry(
        "mitm",
        issued.key(),
        new char[0],
        new X509Certificate[] {issued.certificate(), other.certificate()});
    var kmf = KeyManagerFactory.getInstance("PKIX");
    kmf.init(store, new char[0]);
    var context = SSLContext.getInstance("TLS");
    context.init(kmf.getKeyManagers(), null, null);
    mitm = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    mitm.setHttpsConfigurator(new HttpsConfigurator(context));
    String served =
        caPemToServe != null ? caPemToServe : Files.readString(dir.resolve("mitm-ca/ca.pem"));
    mitm.createContext(
        "/",
        exchange -> {
          try (exchange) {
            mitmSaw.add(
                exchange.getRequestMethod()
                    + " "
                    + exchange.getRequestURI().getPath()
                    + " authorization="
                    + exchange.getRequestHeaders().getFirst("Authorization"));
            byte[] body = served.getBytes(StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
          }
        });
    mitm.start();
    return "https://127.0.0.1:" + mitm.getAddress().getPort();
  }

  private record Run(int code, String out, String err) {}

  private Run kairos(String... args) {
    var out = new StringWriter();
    var err = new StringWriter();
    Environment.variables = Map.of("KAIROS_DATA", dir.resolve("cli-data").toString())::get;
    Environment.home = dir.resolve("home");
    int code = Main.run(new PrintWriter(out), new PrintWriter(err), args);
    return new Run(code, out.toString(), err.toString());
  }

  private static void await(String what, Duration limit, BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    while (true) {
      boolean ok;
      try {
        ok = condition.getAsBoolean();
      } catch (RuntimeException e) {
        ok = false;
      }
      if (ok) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(what + ": not within " + limit);
      }
      Thread.sleep(50);
    }
  }

  /** A plain TCP listener that counts the connections made to it. */
  private static final class Listener implements AutoCloseable {
    private final ServerSocket socket =
        new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
    private final AtomicInteger accepted = new AtomicInteger();
    private final Thread acceptor;

    Listener() throws IOException {
      acceptor =
          Thread.ofVirtual()
              .start(
                  () -> {
                    while (!socket.isClosed()) {
                      try {
                        socket.accept().close();
                        accepted.incrementAndGet();
                      } catch (IOException e) {
                        return;
                      }
                    }
                  });
    }

    int port() {
      return socket.getLocalPort();
    }

    int connections() {
      return accepted.get();
    }

    @Override
    public void close() throws IOException {
      socket.close();
      acceptor.interrupt();
    }
  }

  /** A port P with P and P+1000 free (the API and Raft ports of a restartable controller). */
  private static int freePortPair() {
    var rnd = new Random();
    for (int i = 0; i < 200; i++) {
      int p = 20_000 + rnd.nextInt(9_000);
      if (free(p) && free(p + 1000)) {
        return p;
      }
    }
    throw new AssertionError("no free port pair");
  }

  private static boolean free(int port) {
    try (var s = new ServerSocket()) {
      s.bind(new InetSocketAddress("127.0.0.1", port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
