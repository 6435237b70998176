package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A stand-in controller for client tests: the JDK's HttpServer on a free port, answering canned
 * replies per {@code METHOD /path} (query ignored for matching) and recording every request.
 * Unknown routes answer a 404 problem.
 */
final class FakeKairos implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One request as the server received it. */
  record Request(String method, String path, String query, Headers headers, String body) {
    String header(String name) {
      return headers.getFirst(name);
    }

    JsonNode json() {
      try {
        return JSON.readTree(body);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /** A canned reply. */
  record Reply(int status, Map<String, String> headers, byte[] body) {
    static Reply json(int status, String json) {
      return new Reply(status, Map.of("Content-Type", "application/json"), utf8(json));
    }

    static Reply problem(int status, String json) {
      return new Reply(status, Map.of("Content-Type", "application/problem+json"), utf8(json));
    }

    static Reply text(int status, String text, Map<String, String> headers) {
      var h = new LinkedHashMap<>(headers);
      h.put("Content-Type", "text/plain; charset=utf-8");
      return new Reply(status, h, utf8(text));
    }

    static Reply redirect(int status, String location) {
      return new Reply(status, Map.of("Location", location), new byte[0]);
    }

    private static byte[] utf8(String s) {
      return s.getBytes(StandardCharsets.UTF_8);
    }
  }

  /** Answers one request. */
  interface Handler {
    Reply handle(Request request);
  }

  private final HttpServer server;
  private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
  private final Map<String, Handler> routes = new ConcurrentHashMap<>();
  private final List<Request> requests = new ArrayList<>();

  FakeKairos() {
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server.setExecutor(executor);
    server.createContext("/", this::serve);
    server.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  FakeKairos on(String method, String path, Handler handler) {
    routes.put(method + " " + path, handler);
    return this;
  }

  FakeKairos on(String method, String path, int status, String json) {
    return on(method, path, r -> Reply.json(status, json));
  }

  synchronized List<Request> requests() {
    return List.copyOf(requests);
  }

  /** The only request to {@code METHOD path}; fails when there were none or several. */
  Request only(String method, String path) {
    var matching =
        requests().stream()
            .filter(r -> r.method().equals(method) && r.path().equals(path))
            .toList();
    if (matching.size() != 1) {
      throw new AssertionError(
          matching.size() + " requests to " + method + " " + path + "; all: " + requests());
    }
    return matching.getFirst();
  }

  private void serve(HttpExchange exchange) throws IOException {
    try (exchange) {
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      var request =
          new Request(
              exchange.getRequestMethod(),
              exchange.getRequestURI().getRawPath(),
              exchange.getRequestURI().getRawQuery(),
              exchange.getRequestHeaders(),
              body);
      synchronized (this) {
        requests.add(request);
      }
      Handler handler = routes.get(request.method() + " " + request.path());
      Reply reply =
          handler != null
              ? handler.handle(request)
              : Reply.problem(
                  404,
                  "{\"type\":\"/docs/errors#not-found\",\"title\":\"Not found\",\"status\":404,"
                      + "\"detail\":\"no route "
                      + request.method()
                      + " "
                      + request.path()
                      + "\"}");
      reply.headers().forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
      exchange.sendResponseHeaders(
          reply.status(), reply.body().length == 0 ? -1 : reply.body().length);
      if (reply.body().length > 0) {
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(reply.body());
        }
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
