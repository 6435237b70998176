package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.Problem;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The Kairos REST API ({@code /api/v1}) over the JDK's {@link HttpClient}: the only way the CLI
 * talks to a controller.
 *
 * <ul>
 *   <li>Servers are tried in order; one that refuses the connection (or cannot be reached within
 *       the connect timeout) is skipped, which is safe for writes too since nothing was sent. The
 *       server that answered is used first from then on.
 *   <li>Redirects (a follower pointing at the leader with 307/308) are followed by hand, resending
 *       the method, the body and the token: the JDK's own redirect handling may drop the {@code
 *       Authorization} header when the host changes.
 *   <li>Any reply of 400 or more becomes an {@link ApiException} carrying the problem as one line.
 * </ul>
 *
 * <p>Thread-safe: {@code bench} shares one client between many in-flight requests.
 */
final class ApiClient implements AutoCloseable {
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
  static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);
  static final int MAX_REDIRECTS = 5;
  private static final String USER_AGENT = "kairos-cli/0.1.0";

  /** A reply: status, headers, the raw body, and the URI that finally answered. */
  record Response(int status, HttpHeaders headers, byte[] body, URI uri) {
    Optional<String> header(String name) {
      return headers.firstValue(name);
    }

    String text() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  private final List<URI> servers;
  private final String token;
  private final ClientTls tls;
  private final HttpClient http;
  private volatile int current;

  /** The bearer token presented, or null. */
  String token() {
    return token;
  }

  ApiClient(List<URI> servers, String token) {
    this(servers, token, ClientTls.defaults());
  }

  /** A client that verifies HTTPS and refuses plain HTTP as {@code tls} says. */
  ApiClient(List<URI> servers, String token, ClientTls tls) {
    this.servers = List.copyOf(servers);
    this.token = token;
    this.tls = tls;
    var builder =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(CONNECT_TIMEOUT)
            .followRedirects(HttpClient.Redirect.NEVER);
    tls.context().ifPresent(builder::sslContext);
    this.http = builder.build();
  }

  /** How this client verifies HTTPS (the load generators open their own connections with it). */
  ClientTls tls() {
    return tls;
  }

  /** The base URL in use (the last one that answered, or the first). */
  URI server() {
    return servers.get(current);
  }

  boolean hasToken() {
    return token != null;
  }

  /** {@code GET path} and its JSON reply. */
  JsonNode get(String path) {
    return json(send("GET", path, null));
  }

  /** {@code POST path} with {@code body} as JSON (none when null) and its JSON reply. */
  JsonNode post(String path, Object body) {
    return json(send("POST", path, body == null ? null : Json.bytes(body)));
  }

  /** {@code DELETE path} and its JSON reply. */
  JsonNode delete(String path) {
    return json(send("DELETE", path, null));
  }

  /** {@code PUT path} with {@code body} as JSON and its JSON reply. */
  JsonNode put(String path, Object body) {
    return json(send("PUT", path, Json.bytes(body)));
  }

  /**
   * One request, tried against each server in turn while connections are refused; redirects
   * followed; an error reply thrown as {@link ApiException}.
   */
  Response send(String method, String path, byte[] body) {
    int n = servers.size();
    int start = current;
    for (int i = 0; i < n; i++) {
      int index = (start + i) % n;
      URI base = servers.get(index);
      tls.check(base);
      Response response;
      try {
        response = exchange(method, URI.create(base + path), body);
        for (int retry = 1; ; retry++) {
          Optional<Duration> wait = Retry.after(response, retry);
          if (wait.isEmpty()) {
            break;
          }
          Retry.say(response, wait.get());
          Thread.sleep(wait.get());
          response = exchange(method, URI.create(base + path), body);
        }
      } catch (IOException e) {
        if (isConnectFailure(e)) {
          continue;
        }
        if (e instanceof HttpTimeoutException) {
          throw ApiException.noReply(
              "no reply from " + base + " within " + REQUEST_TIMEOUT.toSeconds() + "s");
        }
        throw ApiException.noReply("lost the connection to " + base + ": " + tls.describe(base, e));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw ApiException.noReply("interrupted while waiting for " + base);
      }
      current = index;
      return check(response);
    }
    throw ApiException.unreachable(servers);
  }

  /** Synchronous exchange with redirects followed. */
  private Response exchange(String method, URI uri, byte[] body)
      throws IOException, InterruptedException {
    for (int hop = 0; ; hop++) {
      tls.check(uri);
      HttpResponse<byte[]> r =
          http.send(request(method, uri, body), HttpResponse.BodyHandlers.ofByteArray());
      var response = new Response(r.statusCode(), r.headers(), r.body(), uri);
      Optional<URI> next = redirect(response);
      if (next.isEmpty() || hop >= MAX_REDIRECTS) {
        return response;
      }
      if (response.status() == 303) {
        method = "GET";
        body = null;
      }
      uri = next.get();
    }
  }

  private HttpRequest request(String method, URI uri, byte[] body) {
    var builder =
        HttpRequest.newBuilder(uri)
            .timeout(REQUEST_TIMEOUT)
            .header("Accept", "application/json, application/problem+json, text/plain")
            .header("User-Agent", USER_AGENT);
    if (token != null) {
      builder.header("Authorization", "Bearer " + token);
    }
    if (body != null) {
      builder.header("Content-Type", "application/json");
      builder.method(method, HttpRequest.BodyPublishers.ofByteArray(body));
    } else {
      builder.method(method, HttpRequest.BodyPublishers.noBody());
    }
    return builder.build();
  }

  /** Where a 3xx reply points, resolved against the request's URI. */
  private static Optional<URI> redirect(Response response) {
    int s = response.status();
    if (s != 301 && s != 302 && s != 303 && s != 307 && s != 308) {
      return Optional.empty();
    }
    return response.header("Location").map(location -> response.uri().resolve(location.strip()));
  }

  /** The reply if it is a success; otherwise the problem it carries, as an exception. */
  Response check(Response response) {
    if (response.status() < 400) {
      if (response.status() >= 300) {
        throw ApiException.unexpected(
            "the controller at "
                + response.uri()
                + " redirected too often (or without a"
                + " Location): HTTP "
                + response.status());
      }
      return response;
    }
    throw failure(response);
  }

  /** An error reply as an exception: problem JSON when the body is one, else its text. */
  ApiException failure(Response response) {
    Problem problem = null;
    String type = response.header("Content-Type").orElse("");
    if (type.contains("json") && response.body().length > 0) {
      try {
        problem = Json.MAPPER.readValue(response.body(), Problem.class);
      } catch (IOException e) {
        problem = null; // not a problem document: show the text instead
      }
    }
    return ApiException.of(
        response.status(), problem, response.text(), response.uri(), token != null);
  }

  private static JsonNode json(Response response) {
    if (response.body().length == 0) {
      return Json.MAPPER.nullNode();
    }
    try {
      return Json.MAPPER.readTree(response.body());
    } catch (IOException e) {
      throw ApiException.unexpected(
          "unexpected reply from "
              + response.uri()
              + ": not JSON: "
              + Json.firstLine(e.getMessage()));
    }
  }

  /** True when the connection could not be opened at all, so nothing reached the server. */
  static boolean isConnectFailure(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof ConnectException
          || t instanceof HttpConnectTimeoutException
          || t instanceof UnresolvedAddressException) {
        return true;
      }
    }
    return false;
  }

  static String describe(Throwable e) {
    String message = e.getMessage();
    return message == null || message.isBlank() ? e.getClass().getSimpleName() : message;
  }

  /** A path segment, percent-encoded (node names and the like). */
  static String segment(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** {@code ?k=v&...} from the non-null entries, in order; commas in values kept as they are. */
  static String query(Map<String, String> params) {
    String q =
        params.entrySet().stream()
            .filter(e -> e.getValue() != null)
            .map(
                e ->
                    e.getKey()
                        + "="
                        + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8)
                            .replace("+", "%20")
                            .replace("%2C", ","))
            .collect(Collectors.joining("&"));
    return q.isEmpty() ? "" : "?" + q;
  }

  /** Ends the client without waiting: any request still in flight is abandoned. */
  @Override
  public void close() {
    http.shutdownNow();
  }
}
