package io.kairos.control;

import javax.net.ssl.SSLContext;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * Serves the API over TLS instead of plain HTTP: with the replica certificate of the cluster CA, or
 * with a site's own certificate from a PKCS#12 keystore ({@code --tls-keystore}).
 */
final class Https {
  private Https() {}

  /** TLS with a site's certificate and key from a PKCS#12 keystore. */
  static SslContextFactory.Server fromKeystore(Controller.Tls tls) {
    if (!java.nio.file.Files.isReadable(tls.keystore())) {
      throw new IllegalArgumentException("--tls-keystore " + tls.keystore() + " is not readable");
    }
    var ssl = new SslContextFactory.Server();
    ssl.setKeyStorePath(tls.keystore().toString());
    ssl.setKeyStorePassword(tls.password());
    ssl.setKeyStoreType("PKCS12");
    return ssl;
  }

  /** TLS with a ready context (the replica certificate, re-issued in place when it rotates). */
  static SslContextFactory.Server fromContext(SSLContext context) {
    var ssl = new SslContextFactory.Server();
    ssl.setSslContext(context);
    return ssl;
  }

  /** Replaces the plain HTTP connector with a TLS one on the same host and port. */
  static void configure(
      io.javalin.config.JavalinConfig config, SslContextFactory.Server ssl, String host, int port) {
    config.jetty.addConnector((server, http) -> connector(server, http, ssl, host, port));
  }

  static ServerConnector connector(
      org.eclipse.jetty.server.Server server,
      HttpConfiguration http,
      SslContextFactory.Server ssl,
      String host,
      int port) {
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
