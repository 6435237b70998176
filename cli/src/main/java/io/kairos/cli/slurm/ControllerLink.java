package io.kairos.cli.slurm;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * srun's and scontrol's calls to the controller, over {@link HttpURLConnection} (the JDK's {@code
 * java.net.http} client takes most of a second to start). What to call comes from the task's
 * environment, which the agent set: {@code KAIROS_SERVER} (URLs, tried in order while one refuses
 * the connection), {@code KAIROS_CA} (the cluster CA for https) and the job's step credential
 * {@code KAIROS_JOB_TOKEN} (else {@code KAIROS_TOKEN}). A 421 is followed to the leader it names.
 */
final class ControllerLink {
  static final int CONNECT_TIMEOUT_MS = 3_000;
  static final int READ_TIMEOUT_MS = 30_000;

  /** A reply: its status and body. */
  record Reply(int status, String body) {
    boolean ok() {
      return status >= 200 && status < 300;
    }

    /** The problem's {@code detail} (the controller's words), else the body. */
    String detail() {
      try {
        if (TinyJson.parse(body) instanceof Map<?, ?> m && m.get("detail") instanceof String d) {
          return d;
        }
      } catch (IllegalArgumentException e) {
        // not JSON
      }
      return body.strip();
    }
  }

  private final List<String> urls;
  private final String token;
  private final SSLSocketFactory ssl;

  ControllerLink(List<String> urls, String token, SSLSocketFactory ssl) {
    this.urls = List.copyOf(urls);
    this.token = token;
    this.ssl = ssl;
  }

  /**
   * The link the environment describes.
   *
   * @throws IllegalStateException naming what is missing (not inside a Kairos job)
   */
  static ControllerLink fromEnvironment(Map<String, String> env) {
    String servers = env.get("KAIROS_SERVER");
    if (servers == null || servers.isBlank()) {
      throw new IllegalStateException(
          "KAIROS_SERVER is not set: this srun runs inside Kairos jobs (the agent sets it)");
    }
    var urls = new ArrayList<String>();
    for (String u : servers.split(",")) {
      String url = u.strip();
      while (url.endsWith("/")) {
        url = url.substring(0, url.length() - 1);
      }
      if (!url.isEmpty()) {
        urls.add(url.contains("://") ? url : "http://" + url);
      }
    }
    String token = env.get("KAIROS_JOB_TOKEN");
    if (token == null || token.isBlank()) {
      token = env.get("KAIROS_TOKEN");
    }
    SSLSocketFactory ssl = null;
    String ca = env.get("KAIROS_CA");
    if (ca != null && !ca.isBlank() && Files.isReadable(Path.of(ca))) {
      ssl = trusting(Path.of(ca));
    }
    return new ControllerLink(urls, token, ssl);
  }

  private static SSLSocketFactory trusting(Path caFile) {
    try (InputStream in = Files.newInputStream(caFile)) {
      var store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      int i = 0;
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        store.setCertificateEntry("ca" + i++, c);
      }
      var tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(store);
      var context = SSLContext.getInstance("TLS");
      context.init(null, tmf.getTrustManagers(), null);
      return context.getSocketFactory();
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalStateException("cannot read the cluster CA " + caFile + ": " + e, e);
    }
  }

  Reply get(String path) throws IOException {
    return call("GET", path, null);
  }

  Reply post(String path, String json) throws IOException {
    return call("POST", path, json);
  }

  /** Calls the first controller that answers; a 421 goes on to the leader it names. */
  private Reply call(String method, String path, String json) throws IOException {
    IOException last = null;
    var tried = new ArrayList<>(urls);
    for (int i = 0; i < tried.size() && i < urls.size() + 3; i++) {
      try {
        HttpURLConnection c = open(tried.get(i) + path, method, json);
        int status = c.getResponseCode();
        if (status == 421) {
          String leader = c.getHeaderField("Kairos-Leader");
          if (leader != null && !tried.contains(leader)) {
            tried.add(i + 1, leader);
          }
          c.disconnect();
          continue;
        }
        InputStream in = status >= 400 ? c.getErrorStream() : c.getInputStream();
        return new Reply(status, in == null ? "" : read(in));
      } catch (java.net.ConnectException | java.net.SocketTimeoutException e) {
        last = e;
      }
    }
    throw last != null ? last : new IOException("no controller answered at " + urls);
  }

  private HttpURLConnection open(String url, String method, String json) throws IOException {
    var c = (HttpURLConnection) URI.create(url).toURL().openConnection();
    if (ssl != null && c instanceof HttpsURLConnection https) {
      https.setSSLSocketFactory(ssl);
    }
    c.setConnectTimeout(CONNECT_TIMEOUT_MS);
    c.setReadTimeout(READ_TIMEOUT_MS);
    c.setRequestMethod(method);
    c.setRequestProperty("Accept", "application/json");
    if (token != null) {
      c.setRequestProperty("Authorization", "Bearer " + token);
    }
    if (json != null) {
      byte[] body = json.getBytes(StandardCharsets.UTF_8);
      c.setDoOutput(true);
      c.setRequestProperty("Content-Type", "application/json");
      c.setFixedLengthStreamingMode(body.length);
      try (OutputStream out = c.getOutputStream()) {
        out.write(body);
      }
    }
    return c;
  }

  private static String read(InputStream in) throws IOException {
    try (in) {
      var out = new ByteArrayOutputStream();
      in.transferTo(out);
      return out.toString(StandardCharsets.UTF_8);
    }
  }
}
