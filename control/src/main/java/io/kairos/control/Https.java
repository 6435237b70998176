package io.kairos.control;

import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/** Serves the API over TLS from a PKCS#12 keystore, instead of plain HTTP. */
final class Https {
  private Https() {}

  /** Replaces the plain HTTP connector with a TLS one on the same host and port. */
  static void configure(
      io.javalin.config.JavalinConfig config, Controller.Tls tls, String host, int port) {
    if (!java.nio.file.Files.isReadable(tls.keystore())) {
      throw new IllegalArgumentException("--tls-keystore " + tls.keystore() + " is not readable");
    }
    config.jetty.addConnector((server, http) -> connector(server, http, tls, host, port));
  }

  static ServerConnector connector(
      org.eclipse.jetty.server.Server server,
      HttpConfiguration http,
      Controller.Tls tls,
      String host,
      int port) {
    var ssl = new SslContextFactory.Server();
    ssl.setKeyStorePath(tls.keystore().toString());
    ssl.setKeyStorePassword(tls.password());
    ssl.setKeyStoreType("PKCS12");
    var https = new HttpConfiguration(http);
    https.addCustomizer(new SecureRequestCustomizer(false));
    var connector =
        new ServerConnector(
            server, new SslConnectionFactory(ssl, "http/1.1"), new HttpConnectionFactory(https));
    connector.setHost(host);
    connector.setPort(port);
    return connector;
  }
}
