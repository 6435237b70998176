package io.kairos.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.kairos.agent.ControllerClient.Outcome;
import io.kairos.protocol.agent.Registered;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Status codes to outcomes, and which replica the client talks to next. */
class ControllerClientTest {
  private final CountDownLatch release = new CountDownLatch(1);
  private volatile String lastAuthorization;
  private HttpServer server;
  private ControllerClient client;

  @AfterEach
  void stop() {
    release.countDown();
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.stop(0);
    }
  }

  /** A server that answers {@code status} with {@code body} and {@code headers}. */
  private String serve(int status, String body, Map<String, String> headers) throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(Executors.newCachedThreadPool());
    server.createContext(
        "/",
        exchange -> {
          try (exchange) {
            lastAuthorization = exchange.getRequestHeaders().getFirst("Authorization");
            if (exchange.getRequestURI().getPath().endsWith("/hold")) {
              await(release);
            }
            headers.forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
            reply(exchange, status, body);
          }
        });
    server.start();
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  private ControllerClient client(String... urls) {
    client = new ControllerClient(List.of(urls), "tok");
    return client;
  }

  private Outcome<Registered> register() throws Exception {
    return client.post("/register", Map.of(), Registered.class, 0).get(10, TimeUnit.SECONDS);
  }

  @Test
  void aSuccessDecodesTheBodyAndSendsTheToken() throws Exception {
    String url =
        serve(
            200,
            "{\"node\":\"n1\",\"epoch\":3,\"heartbeatIntervalMs\":1000,"
                + "\"leaseMs\":10000,\"futureField\":true}",
            Map.of());
    client(url);

    assertThat(register()).isEqualTo(new Outcome.Ok<>(new Registered("n1", 3, 1000, 10_000)));
    assertThat(lastAuthorization).isEqualTo("Bearer tok");
  }

  @Test
  void a421MovesToTheLeaderItNames() throws Exception {
    String url = serve(421, "", Map.of("Kairos-Leader", "http://10.0.0.2:7000/"));
    client(url, "http://10.0.0.3:7000");

    assertThat(register()).isEqualTo(new Outcome.Redirected<>("http://10.0.0.2:7000"));
    assertThat(client.current()).isEqualTo("http://10.0.0.2:7000");
  }

  @Test
  void a421WithoutALeaderMovesToTheNextReplica() throws Exception {
    String url = serve(421, "", Map.of());
    client(url, "http://10.0.0.3:7000");

    assertThat(register()).isInstanceOf(Outcome.Failed.class);
    assertThat(client.current()).isEqualTo("http://10.0.0.3:7000");
  }

  @Test
  void anUnreachableReplicaMovesToTheNextAndWrapsAround() throws Exception {
    String dead = deadUrl();
    String live = serve(200, "{}", Map.of());
    client(live, dead);
    client.post("/x", Map.of(), Registered.class, 0).get(10, TimeUnit.SECONDS);
    server.stop(0);

    assertThat(register()).isInstanceOf(Outcome.Unreachable.class);
    assertThat(client.current()).isEqualTo(dead);
    assertThat(register()).isInstanceOf(Outcome.Unreachable.class);
    assertThat(client.current()).isEqualTo(live);
  }

  @Test
  void a401Or403IsARejection() throws Exception {
    client(serve(403, "forbidden", Map.of()));

    assertThat(register()).isEqualTo(new Outcome.Rejected<>(403, "forbidden"));
  }

  @Test
  void aServerErrorOrABadBodyIsAFailure() throws Exception {
    client(serve(200, "not json", Map.of()));

    assertThat(register())
        .isInstanceOfSatisfying(Outcome.Failed.class, f -> assertThat(f.status()).isEqualTo(200));
  }

  @Test
  void aCancelledCallLeavesTheReplicaAsItWas() throws Exception {
    String url = serve(500, "", Map.of());
    client(url, "http://10.0.0.3:7000");
    var call = client.post("/hold", Map.of(), Registered.class, 60_000);

    call.cancel(true);
    release.countDown();

    assertThat(call.isCancelled()).isTrue();
    assertThat(client.current()).isEqualTo(url);
  }

  private static void reply(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static String deadUrl() throws IOException {
    try (var socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress("127.0.0.1", 0));
      return "http://127.0.0.1:" + socket.getLocalPort();
    }
  }
}
