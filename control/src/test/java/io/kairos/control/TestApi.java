package io.kairos.control;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.kairos.control.auth.RunAsPolicy;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A tiny JSON client for tests: the JDK HttpClient against a real controller. */
public final class TestApi {
  public static final ObjectMapper JSON = JsonMapper.builder().build();

  /**
   * Who jobs run as in a test controller that stands for a single-user machine whose user is root
   * (as the tests run in CI): the bootstrap admin's jobs run as root, which is allowed.
   */
  public static final RunAsPolicy SINGLE_USER = new RunAsPolicy(RunAsPolicy.ROOT, true);

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final String base;
  private final String token;

  public TestApi(String base, String token) {
    this.base = base;
    this.token = token;
  }

  /** The bearer token this client sends (null for none). */
  public String token() {
    return token;
  }

  public TestApi as(String otherToken) {
    return new TestApi(base, otherToken);
  }

  public record Reply(int status, String body, HttpResponse<String> raw) {
    public <T> T as(Class<T> type) {
      try {
        return JSON.readValue(body, type);
      } catch (IOException e) {
        throw new AssertionError("not a " + type.getSimpleName() + ": " + body, e);
      }
    }

    public <T> T as(TypeReference<T> type) {
      try {
        return JSON.readValue(body, type);
      } catch (IOException e) {
        throw new AssertionError("unexpected body: " + body, e);
      }
    }

    public String contentType() {
      return raw.headers().firstValue("Content-Type").orElse("");
    }
  }

  public Reply get(String path) {
    return send(request(path).GET());
  }

  public Reply post(String path, String json) {
    return send(
        request(path)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json)));
  }

  public Reply postBytes(String path, byte[] body) {
    return send(
        request(path)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body)));
  }

  public Reply post(String path, Object body) {
    try {
      return post(path, JSON.writeValueAsString(body));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  public Reply put(String path, String json) {
    return send(
        request(path)
            .header("Content-Type", "application/json")
            .PUT(HttpRequest.BodyPublishers.ofString(json)));
  }

  public Reply method(String method, String path) {
    return send(request(path).method(method, HttpRequest.BodyPublishers.noBody()));
  }

  private HttpRequest.Builder request(String path) {
    var b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return b;
  }

  private Reply send(HttpRequest.Builder b) {
    try {
      var r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
      return new Reply(r.statusCode(), r.body(), r);
    } catch (IOException e) {
      throw new AssertionError("request failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
