package io.kairos.control.dashboard;

import io.javalin.config.JavalinConfig;
import io.javalin.http.staticfiles.Location;
import java.util.Map;

/**
 * Serves the dashboard: {@code GET /} and its files from {@code resources/dashboard} on the
 * classpath, without a token (they hold no data: the page asks for a token and reads the API with
 * it). Every file goes out with a Content-Security-Policy that allows scripts, styles and
 * connections from this origin only (no inline script or style, no eval), and forbids framing.
 */
public final class Dashboard {
  /** The policy every dashboard file is served with. */
  public static final String CONTENT_SECURITY_POLICY =
      String.join(
          "; ",
          "default-src 'none'",
          "script-src 'self'",
          "style-src 'self'",
          "img-src 'self' data:",
          "connect-src 'self'",
          "base-uri 'none'",
          "form-action 'self'",
          "frame-ancestors 'none'");

  static final Map<String, String> HEADERS =
      Map.of(
          "Content-Security-Policy", CONTENT_SECURITY_POLICY,
          "X-Content-Type-Options", "nosniff",
          "Referrer-Policy", "no-referrer",
          "Cache-Control", "no-cache");

  private Dashboard() {}

  /** Adds the static files; call while the app is configured. */
  public static void configure(JavalinConfig config) {
    config.staticFiles.add(
        files -> {
          files.hostedPath = "/";
          files.directory = "/dashboard";
          files.location = Location.CLASSPATH;
          files.headers = HEADERS;
        });
  }
}
