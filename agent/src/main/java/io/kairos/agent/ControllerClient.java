package io.kairos.agent;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.KeyManager;

/**
 * The agent's connection to the controller replicas: JSON POSTs with the node's credential (its
 * certificate, presented by TLS, or its node secret as the bearer token) or, to join, the join
 * token; and which replica to talk to. Every call is checked against the {@link ControllerTrust}
 * first: a URL it refuses (plain HTTP where a CA is pinned, or over the network) gets nothing, and
 * HTTPS is verified against the pinned CA.
 *
 * <p>It keeps a current base URL. A 421 reply moves it to the leader the {@code Kairos-Leader}
 * header names; a connection failure moves it to the next URL of the configured list. Every call's
 * result is an {@link Outcome} value; it never retries or waits by itself (the caller owns
 * backoff).
 *
 * <p>Thread-safe. Cancelling a returned future aborts its HTTP exchange and leaves the current URL
 * as it was.
 */
final class ControllerClient implements AutoCloseable {
  static final String REGISTER = "/api/v1/agents/register";
  static final String HEARTBEAT = "/api/v1/agents/heartbeat";
  static final String LEADER_HEADER = "Kairos-Leader";
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);

  /** Added to the long-poll wait to give each request its timeout. */
  static final Duration REQUEST_MARGIN = Duration.ofSeconds(5);

  /** What one call came to. */
  sealed interface Outcome<T> {
    /** 2xx with a body that decoded. */
    record Ok<T>(T body) implements Outcome<T> {}

    /** 421: the replica does not lead; the client now points at {@code leader}. */
    record Redirected<T>(String leader) implements Outcome<T> {}

    /** No answer (refused, reset, timed out); the client now points at the next replica. */
    record Unreachable<T>(String url, String error) implements Outcome<T> {}

    /** 401 or 403: the credential is not accepted. Retrying with it will not help. */
    record Rejected<T>(int status, String body) implements Outcome<T> {}

    /**
     * Any other answer (5xx, another 4xx, a 421 without a usable leader, a bad body).
     *
     * @param retryAfterMs the answer's {@code Retry-After} (a shed or paced request), 0 for none
     */
    record Failed<T>(String url, int status, String body, long retryAfterMs) implements Outcome<T> {
      Failed(String url, int status, String body) {
        this(url, status, body, 0);
      }
    }
  }

  private final List<String> controllers;
  private final ControllerTrust trust;
  private final Optional<KeyManager> keys;
  private final ObjectMapper json;
  private volatile String authorization;
  private volatile HttpClient http;
  private int index;
  private String current;

  /** A client that trusts the JDK's CAs and allows plain text anywhere (tests). */
  ControllerClient(List<String> controllers, String token) {
    this(controllers, ControllerTrust.unchecked(), Optional.empty());
    authorize(token);
  }

  /**
   * A client that verifies controllers as {@code trust} says, and never sends a credential to a URL
   * it refuses (including a leader a 421 points at). It sends no bearer token until {@link
   * #authorize}.
   *
   * @param keys the node's key manager, when it presents a certificate (empty while it has none)
   */
  ControllerClient(List<String> controllers, ControllerTrust trust, Optional<KeyManager> keys) {
    this.controllers = List.copyOf(controllers);
    this.trust = trust;
    this.keys = keys;
    // A newer controller may add fields: ignore them rather than fail every heartbeat.
    this.json =
        new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    this.current = this.controllers.getFirst();
    this.http = newHttp();
  }

  private HttpClient newHttp() {
    var builder =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(CONNECT_TIMEOUT)
            .followRedirects(HttpClient.Redirect.NEVER);
    if (keys.isPresent()) {
      builder.sslContext(trust.contextWith(keys.get()));
    } else {
      trust.context().ifPresent(builder::sslContext);
    }
    return builder.build();
  }

  /** Sends {@code token} as the bearer token from the next call on; null for none. */
  void authorize(String token) {
    authorization = token == null ? null : "Bearer " + token;
  }

  /**
   * Drops the open connections, so that the next call handshakes again: after the node got a
   * certificate, a connection opened without one would go on without.
   */
  void reconnect() {
    HttpClient old = http;
    http = newHttp();
    old.shutdown();
  }

  /** The base URL the next call goes to. */
  synchronized String current() {
    return current;
  }

  /**
   * POSTs {@code body} as JSON to {@code path} on the current replica.
   *
   * @param waitMs how long the server may hold the reply; the request times out 5 s after that
   */
  <T> CompletableFuture<Outcome<T>> post(String path, Object body, Class<T> type, long waitMs) {
    String base = current();
    var refused = trust.refusal(base);
    if (refused.isPresent()) {
      next(base);
      return CompletableFuture.completedFuture(new Outcome.Failed<>(base, 0, refused.get()));
    }
    byte[] bytes;
    try {
      bytes = json.writeValueAsBytes(body);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot encode " + body.getClass().getSimpleName(), e);
    }
    var builder =
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(Duration.ofMillis(waitMs).plus(REQUEST_MARGIN))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(bytes));
    String auth = authorization;
    if (auth != null) {
      builder.header("Authorization", auth);
    }
    var request = builder.build();
    HttpClient client = http;
    // A blocking send on a thread of its own, not sendAsync: sendAsync completes its future on
    // the common pool, which a busy JVM (or one with a single-thread pool) may not have free.
    var outcome = new CompletableFuture<Outcome<T>>();
    Thread sender =
        Thread.ofVirtual()
            .name("kairos-agent-call")
            .start(
                () -> {
                  HttpResponse<String> response;
                  try {
                    response = client.send(request, HttpResponse.BodyHandlers.ofString());
                  } catch (InterruptedException e) {
                    return; // cancelled
                  } catch (IOException e) {
                    if (!outcome.isCancelled()) {
                      outcome.complete(unreachable(base, e));
                    }
                    return;
                  }
                  try {
                    outcome.complete(interpret(type, base, response));
                  } catch (RuntimeException e) {
                    outcome.completeExceptionally(e);
                  }
                });
    outcome.whenComplete(
        (o, e) -> {
          if (e instanceof CancellationException) {
            sender.interrupt();
          }
        });
    return outcome;
  }

  private <T> Outcome<T> unreachable(String base, IOException error) {
    next(base);
    return new Outcome.Unreachable<>(base, trust.describe(base, error));
  }

  private <T> Outcome<T> interpret(Class<T> type, String base, HttpResponse<String> response) {
    int status = response.statusCode();
    String text = response.body();
    if (status >= 200 && status < 300) {
      try {
        return new Outcome.Ok<>(json.readValue(text, type));
      } catch (IOException e) {
        return new Outcome.Failed<>(
            base, status, "bad " + type.getSimpleName() + ": " + e.getMessage());
      }
    }
    if (status == 401 || status == 403) {
      return new Outcome.Rejected<>(status, text);
    }
    if (status == 421) {
      var leader = response.headers().firstValue(LEADER_HEADER);
      if (leader.isPresent()) {
        try {
          String url = AgentConfig.baseUrl(leader.get(), LEADER_HEADER);
          moveTo(base, url);
          return new Outcome.Redirected<>(url);
        } catch (IllegalArgumentException e) {
          return new Outcome.Failed<>(base, status, e.getMessage());
        }
      }
      // A replica that does not know the leader yet (an election is running): try another.
      next(base);
      return new Outcome.Failed<>(base, status, "421 without a " + LEADER_HEADER + " header");
    }
    return new Outcome.Failed<>(base, status, text, retryAfterMs(response));
  }

  /**
   * The reply's {@code Retry-After} in milliseconds (delta-seconds; a date counts as 1 s), or 0.
   */
  static long retryAfterMs(HttpResponse<?> response) {
    var value = response.headers().firstValue("Retry-After");
    if (value.isEmpty()) {
      return 0;
    }
    try {
      return Math.max(0, Math.min(60, Long.parseLong(value.get().strip()))) * 1000;
    } catch (NumberFormatException e) {
      return 1000;
    }
  }

  /** Moves to {@code url}, unless another call moved away from {@code from} meanwhile. */
  private synchronized void moveTo(String from, String url) {
    if (current.equals(from)) {
      current = url;
    }
  }

  /** Moves to the configured URL after the current one. */
  private synchronized void next(String from) {
    if (current.equals(from)) {
      index = (index + 1) % controllers.size();
      current = controllers.get(index);
    }
  }

  @Override
  public void close() {
    http.shutdownNow();
  }
}
