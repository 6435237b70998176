package io.kairos.control.k8s;

import static io.kairos.control.k8s.KubeFixtures.argsByName;
import static io.kairos.control.k8s.KubeFixtures.binding;
import static io.kairos.control.k8s.KubeFixtures.dgx;
import static io.kairos.control.k8s.KubeFixtures.names;
import static io.kairos.control.k8s.KubeFixtures.pod;
import static io.kairos.control.k8s.KubeFixtures.tree;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import io.kairos.control.Controller;
import io.kairos.control.ControllerConfig;
import io.kairos.control.Leaders;
import io.kairos.control.TestApi;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The extender with an API server: a small real HTTP server (the JDK's) that lists two DGX nodes
 * and one running 8-GPU pod, records bindings, and refuses the binding of one pod with a 409.
 */
class K8sExtenderKubeApiTest {
  static final String BASE = "/api/v1/k8s-extender/";

  record Call(String method, String path, String authorization, String body) {}

  @TempDir static Path dir;
  static HttpServer apiServer;
  static final List<Call> calls = new CopyOnWriteArrayList<>();
  static Controller controller;
  static TestApi scheduler;

  @BeforeAll
  static void start() throws Exception {
    var running = pod("k-running", 8, 100);
    ((ObjectNode) running.get("spec")).put("nodeName", "k-dgx2");
    ((ObjectNode) running.get("status")).put("phase", "Running");
    var finished = pod("k-finished", 8, 100);
    ((ObjectNode) finished.get("spec")).put("nodeName", "k-dgx1");
    ((ObjectNode) finished.get("status")).put("phase", "Succeeded");
    String nodes =
        "{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"1\"},"
            + "\"items\":["
            + dgx("k-dgx1")
            + ","
            + dgx("k-dgx2")
            + "]}";
    String pods =
        "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":["
            + running
            + ","
            + finished
            + "]}";

    apiServer = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    apiServer.createContext(
        "/",
        exchange -> {
          String body =
              new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
          String path = exchange.getRequestURI().getPath();
          calls.add(
              new Call(
                  exchange.getRequestMethod(),
                  exchange.getRequestURI().toString(),
                  exchange.getRequestHeaders().getFirst("Authorization"),
                  body));
          int status;
          String reply;
          if (path.equals("/api/v1/nodes")) {
            status = 200;
            reply = nodes;
          } else if (path.equals("/api/v1/pods")) {
            status = 200;
            reply = pods;
          } else if (path.endsWith("/k-conflict/binding")) {
            status = 409;
            reply =
                "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Conflict\","
                    + "\"message\":\"pod k-conflict is already assigned to node k-dgx2\"}";
          } else if (path.endsWith("/binding")) {
            status = 201;
            reply = "{\"kind\":\"Status\",\"status\":\"Success\"}";
          } else {
            status = 404;
            reply = "{}";
          }
          byte[] bytes = reply.getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders(status, bytes.length);
          exchange.getResponseBody().write(bytes);
          exchange.close();
        });
    apiServer.start();
    Path token = dir.resolve("sa-token");
    Files.writeString(token, "sa-token-123\n");
    var api =
        new KubeApi(URI.create("http://127.0.0.1:" + apiServer.getAddress().getPort()), token);
    controller =
        Controller.start(
            ControllerConfig.single(dir.resolve("data"), "127.0.0.1", 0)
                .withRunAs(TestApi.SINGLE_USER)
                .withKubeApi(api));
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    scheduler = new TestApi(controller.url(), K8sExtenderApiTest.extenderToken(controller));
  }

  @AfterAll
  static void stop() throws IOException {
    controller.close();
    apiServer.stop(0);
  }

  static JsonNode ok(TestApi.Reply r) {
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return tree(r.body());
  }

  @Test
  void nodeNamesAreResolvedFromTheApiServerAndItsRunningPodsTakeGpus() {
    JsonNode result =
        ok(scheduler.post(BASE + "filter", argsByName(pod("k-one", 1, 100), "k-dgx1", "k-dgx2")));

    assertThat(names(result)).containsExactly("k-dgx1");
    assertThat(result.at("/FailedNodes/k-dgx2").asText()).contains("0 free GPUs");
    assertThat(calls)
        .anySatisfy(
            c -> {
              assertThat(c.path()).isEqualTo("/api/v1/nodes");
              assertThat(c.authorization()).isEqualTo("Bearer sa-token-123");
            });
  }

  @Test
  void bindPostsAV1BindingToTheApiServer() {
    var p = pod("k-bound", 2, 100);
    ok(scheduler.post(BASE + "filter", argsByName(p, "k-dgx1")));

    JsonNode result = ok(scheduler.post(BASE + "bind", binding(p, "k-dgx1")));

    assertThat(result.get("Error").asText()).isEmpty();
    Call call =
        calls.stream().filter(c -> c.path().endsWith("/k-bound/binding")).findFirst().orElseThrow();
    assertThat(call.method()).isEqualTo("POST");
    assertThat(call.path()).isEqualTo("/api/v1/namespaces/research/pods/k-bound/binding");
    assertThat(call.authorization()).isEqualTo("Bearer sa-token-123");
    JsonNode sent = tree(call.body());
    assertThat(sent.get("kind").asText()).isEqualTo("Binding");
    assertThat(sent.get("apiVersion").asText()).isEqualTo("v1");
    assertThat(sent.at("/metadata/name").asText()).isEqualTo("k-bound");
    assertThat(sent.at("/metadata/namespace").asText()).isEqualTo("research");
    assertThat(sent.at("/metadata/uid").asText()).isEqualTo("uid-k-bound");
    assertThat(sent.at("/target/kind").asText()).isEqualTo("Node");
    assertThat(sent.at("/target/name").asText()).isEqualTo("k-dgx1");
  }

  @Test
  void aBindingTheApiServerRefusesIsAnErrorAndIsNotRecorded() {
    var p = pod("k-conflict", 8, 100);
    ok(scheduler.post(BASE + "filter", argsByName(p, "k-dgx1")));

    JsonNode result = ok(scheduler.post(BASE + "bind", binding(p, "k-dgx1")));

    assertThat(result.get("Error").asText()).contains("409").contains("already assigned");
    // Not recorded: the 8 GPUs of k-dgx1 are still free for another pod (less k-bound's 2 at most).
    JsonNode again =
        ok(scheduler.post(BASE + "filter", argsByName(pod("k-after", 6, 100), "k-dgx1")));
    assertThat(names(again)).containsExactly("k-dgx1");
  }
}
