package io.kairos.control.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.kairos.control.k8s.KubeObjects.NodeList;
import io.kairos.control.k8s.KubeObjects.PodList;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The few calls the extender makes to a Kubernetes API server: create a pod's {@code Binding}, list
 * nodes, list pods. Configured by {@code KAIROS_K8S_API} (the base URL, e.g. {@code
 * https://kubernetes.default.svc}) and {@code KAIROS_K8S_TOKEN_FILE} (a bearer token file, read on
 * every call so a rotated service-account token is picked up). HTTPS trusts the JVM's trust store.
 */
public final class KubeApi {
  private static final ObjectMapper LENIENT = JsonMapper.builder().build();

  private final URI base;
  private final Path tokenFile;
  private final HttpClient http;

  public KubeApi(URI base, Path tokenFile) {
    this.base = URI.create(base.toString().replaceAll("/+$", ""));
    this.tokenFile = tokenFile;
    this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  }

  /** From {@code KAIROS_K8S_API} and {@code KAIROS_K8S_TOKEN_FILE}; empty without the first. */
  public static Optional<KubeApi> fromEnvironment(Map<String, String> env) {
    String url = env.get("KAIROS_K8S_API");
    if (url == null || url.isBlank()) {
      return Optional.empty();
    }
    String token = env.get("KAIROS_K8S_TOKEN_FILE");
    return Optional.of(
        new KubeApi(
            URI.create(url.trim()),
            token == null || token.isBlank() ? null : Path.of(token.trim())));
  }

  public URI base() {
    return base;
  }

  /**
   * {@code POST /api/v1/namespaces/{ns}/pods/{name}/binding}, what kube-scheduler's default binder
   * sends. Throws with the API server's answer when it is not 2xx.
   */
  public void bind(String namespace, String pod, String uid, String node) throws IOException {
    var body = new LinkedHashMap<String, Object>();
    body.put("apiVersion", "v1");
    body.put("kind", "Binding");
    body.put("metadata", Map.of("name", pod, "namespace", namespace, "uid", uid));
    body.put("target", Map.of("apiVersion", "v1", "kind", "Node", "name", node));
    String path = "/api/v1/namespaces/" + segment(namespace) + "/pods/" + segment(pod) + "/binding";
    send(
        request(path)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(LENIENT.writeValueAsBytes(body))),
        path);
  }

  /** {@code GET /api/v1/nodes}: the items as raw JSON. */
  public List<JsonNode> listNodes() throws IOException {
    String body = send(request("/api/v1/nodes").GET(), "/api/v1/nodes");
    NodeList list = ExtenderJson.MAPPER.readValue(body, NodeList.class);
    return list.items() == null ? List.of() : list.items();
  }

  /** {@code GET /api/v1/pods} of pods bound to a node (any namespace). */
  public PodList listBoundPods() throws IOException {
    String path =
        "/api/v1/pods?fieldSelector="
            + URLEncoder.encode("spec.nodeName!=", StandardCharsets.UTF_8);
    return ExtenderJson.MAPPER.readValue(send(request(path).GET(), "/api/v1/pods"), PodList.class);
  }

  private HttpRequest.Builder request(String path) throws IOException {
    var b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(5));
    if (tokenFile != null) {
      b.header("Authorization", "Bearer " + Files.readString(tokenFile).trim());
    }
    return b;
  }

  private String send(HttpRequest.Builder request, String what) throws IOException {
    try {
      var reply = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
      if (reply.statusCode() / 100 != 2) {
        String body = reply.body() == null ? "" : reply.body();
        throw new IOException(
            "API server answered "
                + reply.statusCode()
                + " to "
                + what
                + ": "
                + (body.length() > 300 ? body.substring(0, 300) + "..." : body));
      }
      return reply.body();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted calling the API server", e);
    }
  }

  private static String segment(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }
}
