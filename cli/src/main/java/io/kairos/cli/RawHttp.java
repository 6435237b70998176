package io.kairos.cli;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * One keep-alive HTTP/1.1 connection that sends a prepared request again and again: the load
 * generator's transport. The JDK's HttpClient costs more CPU per request than the controller spends
 * serving it, which on a small machine makes the client the bottleneck it is meant to measure; this
 * costs a socket write and a header parse. Plain http, or https over one TLS session per connection
 * (verified as the CLI verifies: {@link ClientTls}); no redirects.
 */
final class RawHttp implements Closeable {
  /**
   * What came back: the status and, for an error (for the first-error line) or when asked for, the
   * body; else null.
   */
  record Reply(int status, String errorBody) {
    /** The body, when {@link #send(byte[], boolean)} was asked to keep it. */
    String body() {
      return errorBody;
    }
  }

  private final Socket socket;
  private final OutputStream out;
  private final InputStream in;

  RawHttp(URI server) throws IOException {
    this(server, java.util.Optional.empty());
  }

  /**
   * Connects to {@code server}; for https, with a TLS session verified against {@code context}
   * (else the JDK's default trust), host name included.
   */
  RawHttp(URI server, java.util.Optional<javax.net.ssl.SSLContext> context) throws IOException {
    boolean tls = "https".equals(server.getScheme());
    var plain = new Socket();
    plain.setTcpNoDelay(true);
    int port = server.getPort() > 0 ? server.getPort() : tls ? 443 : 80;
    plain.connect(new InetSocketAddress(server.getHost(), port), 2000);
    plain.setSoTimeout((int) ApiClient.REQUEST_TIMEOUT.toMillis());
    if (tls) {
      javax.net.ssl.SSLSocketFactory factory;
      try {
        factory = context.orElse(javax.net.ssl.SSLContext.getDefault()).getSocketFactory();
      } catch (java.security.NoSuchAlgorithmException e) {
        throw new IOException("no default TLS context", e);
      }
      var ssl = (javax.net.ssl.SSLSocket) factory.createSocket(plain, server.getHost(), port, true);
      var params = ssl.getSSLParameters();
      params.setEndpointIdentificationAlgorithm("HTTPS");
      ssl.setSSLParameters(params);
      ssl.startHandshake();
      socket = ssl;
    } else {
      socket = plain;
    }
    out = socket.getOutputStream();
    in = new BufferedInputStream(socket.getInputStream(), 8192);
  }

  /** The bytes of a POST with a JSON body, ready to be sent any number of times. */
  static byte[] post(URI server, String path, String token, byte[] body) {
    var head =
        new StringBuilder()
            .append("POST ")
            .append(path)
            .append(" HTTP/1.1\r\n")
            .append("Host: ")
            .append(server.getHost())
            .append(':')
            .append(server.getPort())
            .append("\r\n")
            .append("Content-Type: application/json\r\n")
            .append("Accept: application/json\r\n")
            .append("Content-Length: ")
            .append(body.length)
            .append("\r\n");
    if (token != null) {
      head.append("Authorization: Bearer ").append(token).append("\r\n");
    }
    head.append("\r\n");
    byte[] h = head.toString().getBytes(StandardCharsets.ISO_8859_1);
    byte[] all = new byte[h.length + body.length];
    System.arraycopy(h, 0, all, 0, h.length);
    System.arraycopy(body, 0, all, h.length, body.length);
    return all;
  }

  Reply send(byte[] request) throws IOException {
    return send(request, false);
  }

  /** Sends a prepared request; keeps the reply's body also when it succeeded, if asked. */
  Reply send(byte[] request, boolean keepBody) throws IOException {
    out.write(request);
    out.flush();
    String status = line();
    if (status == null || !status.startsWith("HTTP/1.1 ") || status.length() < 12) {
      throw new IOException("not an HTTP/1.1 reply: " + status);
    }
    int code = Integer.parseInt(status.substring(9, 12));
    long length = -1;
    boolean chunked = false;
    for (String h = line(); h != null && !h.isEmpty(); h = line()) {
      String lower = h.toLowerCase(Locale.ROOT);
      if (lower.startsWith("content-length:")) {
        length = Long.parseLong(h.substring(15).strip());
      } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
        chunked = true;
      }
    }
    var body = keepBody || code >= 300 ? new ByteArrayOutputStream() : null;
    if (chunked) {
      for (long size = Long.parseLong(line().strip(), 16);
          size > 0;
          size = Long.parseLong(line().strip(), 16)) {
        copy(size, body);
        line();
      }
      line();
    } else if (length > 0) {
      copy(length, body);
    }
    return new Reply(code, body == null ? null : body.toString(StandardCharsets.UTF_8));
  }

  private void copy(long n, ByteArrayOutputStream to) throws IOException {
    byte[] buffer = new byte[4096];
    while (n > 0) {
      int r = in.read(buffer, 0, (int) Math.min(buffer.length, n));
      if (r < 0) {
        throw new IOException("connection closed mid-body");
      }
      if (to != null) {
        to.write(buffer, 0, r);
      }
      n -= r;
    }
  }

  private String line() throws IOException {
    var sb = new StringBuilder(64);
    for (int c = in.read(); c >= 0; c = in.read()) {
      if (c == '\n') {
        int len = sb.length();
        return len > 0 && sb.charAt(len - 1) == '\r' ? sb.substring(0, len - 1) : sb.toString();
      }
      sb.append((char) c);
    }
    return sb.isEmpty() ? null : sb.toString();
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
