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
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;

/**
 * The agent's connection to the controller replicas: JSON POSTs with the join token, and which
 * replica to talk to. Every call is checked against the {@link ControllerTrust} first: a URL it
 * refuses (plain HTTP where a CA is pinned, or over the network) gets nothing, and HTTPS is
 * verified against the pinned CA.
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

    /** 401 or 403: the join token is not accepted. Retrying will not help. */
    record Rejected<T>(int status, String body) implements Outcome<T> {}

    /** Any other answer (5xx, another 4xx, a 421 without a usable leader, a bad body). */
    record Failed<T>(String url, int status, String body) implements Outcome<T> {}
  }

  private final List<String> controllers;
  private final ControllerTrust trust;
  private final String authorization;
  private final ObjectMapper json;
  private final HttpClient http;
  private int index;
  private String current;

  /** A client that trusts the JDK's CAs and allows plain text anywhere (tests). */
  ControllerClient(List<String> controllers, String joinToken) {
    this(controllers, joinToken, ControllerTrust.unchecked());
  }

  /**
   * A client that verifies controllers as {@code trust} says, and never sends the token to a URL it
   * refuses (including a leader a 421 points at).
   */
  ControllerClient(List<String> controllers, String joinToken, ControllerTrust trust) {
    this.controllers = List.copyOf(controllers);
    this.trust = trust;
    this.authorization = "Bearer " + Objects.requireNonNull(joinToken, "joinToken");
    // A newer controller may add fields: ignore them rather than fail every heartbeat.
    this.json =
        new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    this.current = this.controllers.getFirst();
    var builder =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(CONNECT_TIMEOUT)
            .followRedirects(HttpClient.Redirect.NEVER);
    trust.context().ifPresent(builder::sslContext);
    this.http = builder.build();
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
    var request =
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(Duration.ofMillis(waitMs).plus(REQUEST_MARGIN))
            .header("Authorization", authorization)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(bytes))
            .build();
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
                    response = http.send(request, HttpResponse.BodyHandlers.ofString());
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
    return new Outcome.Failed<>(base, status, text);
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
