package io.kairos.cli;

import io.kairos.agent.ControllerTrust;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * How the CLI verifies a controller over HTTPS, and where it refuses to send its token at all.
 *
 * <ul>
 *   <li>A CA given with {@code --ca FILE} or {@code KAIROS_CA}: the controller's certificate must
 *       chain to it (and name the host), and a plain {@code http://} URL is refused.
 *   <li>Else the local controller's CA, {@code $KAIROS_DATA/ca.pem} ({@code ~/.kairos} for {@code
 *       kairos up}), if there is one, besides the JDK's trusted CAs.
 *   <li>Else the JDK's trusted CAs (a site's own certificate).
 * </ul>
 *
 * Plain {@code http://} is allowed on loopback ({@code kairos up}), and over the network only with
 * {@code --insecure} (or {@code KAIROS_INSECURE=1}): the token would travel in clear.
 */
final class ClientTls {
  /** Where the trusted CA came from, for messages; empty for the JDK's CAs alone. */
  private final Optional<String> source;

  private final boolean explicit;
  private final boolean insecure;
  private final Optional<SSLContext> context;

  private ClientTls(
      Optional<String> source, boolean explicit, boolean insecure, Optional<SSLContext> context) {
    this.source = source;
    this.explicit = explicit;
    this.insecure = insecure;
    this.context = context;
  }

  /** The JDK's CAs; plain HTTP on loopback only. */
  static ClientTls defaults() {
    return new ClientTls(Optional.empty(), false, false, Optional.empty());
  }

  /**
   * From {@code --ca} (null when absent) and {@code --insecure}, else the environment and the local
   * data directory.
   */
  static ClientTls resolve(Path caOption, boolean insecureOption) {
    boolean insecure = insecureOption || Environment.variable("KAIROS_INSECURE") != null;
    String fromEnv = Environment.variable("KAIROS_CA");
    Path explicit = caOption != null ? caOption : fromEnv != null ? Path.of(fromEnv) : null;
    String name = caOption != null ? "--ca " + caOption : "KAIROS_CA=" + fromEnv;
    if (explicit != null) {
      return new ClientTls(
          Optional.of("the CA in " + explicit + " (" + name + ")"),
          true,
          insecure,
          Optional.of(ControllerTrust.trusting(read(explicit, name))));
    }
    Path local = ClientOptions.dataDirectory().resolve("ca.pem");
    if (Files.isRegularFile(local)) {
      try {
        var cas = ControllerTrust.readCertificates(local);
        return new ClientTls(
            Optional.of("the local controller's CA " + local + " or a CA this JVM trusts"),
            false,
            insecure,
            Optional.of(localOrSystem(cas)));
      } catch (IOException e) {
        // An unreadable local CA: fall back to the JDK's CAs; a mismatch will say so.
      }
    }
    return new ClientTls(Optional.empty(), false, insecure, Optional.empty());
  }

  private static List<X509Certificate> read(Path file, String name) {
    if (!Files.isReadable(file)) {
      throw new UsageException(name + ": " + file + " does not exist or cannot be read");
    }
    try {
      return ControllerTrust.readCertificates(file);
    } catch (IOException e) {
      throw new UsageException(name + ": " + e.getMessage());
    }
  }

  Optional<SSLContext> context() {
    return context;
  }

  /** Refuses to send anything to {@code server} when it is plain HTTP where it must not be. */
  void check(URI server) {
    if (!"http".equals(server.getScheme())) {
      return;
    }
    if (explicit) {
      throw new UsageException(
          server
              + " is plain HTTP, but "
              + source.orElseThrow()
              + " is to verify it: refusing to send the token; use https://"
              + server.getRawAuthority());
    }
    if (!insecure && !ControllerTrust.isLoopback(server.getHost())) {
      throw new UsageException(
          server
              + " is plain HTTP over the network: the token would travel in clear. Use https://"
              + server.getRawAuthority()
              + " (kairos server serves HTTPS off loopback), or --insecure to accept that");
    }
  }

  /** A one-line account of a failed exchange with {@code uri}, naming TLS trouble as such. */
  String describe(URI uri, IOException error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof SSLException) {
        return "TLS with "
            + uri.getScheme()
            + "://"
            + uri.getRawAuthority()
            + " failed, nothing was sent: its certificate is not signed by "
            + source.orElse("a CA this JVM trusts")
            + ", or does not name "
            + uri.getHost()
            + " ("
            + t.getMessage()
            + "). Give the cluster's CA with --ca FILE or KAIROS_CA (the controller's"
            + " DATA/ca.pem; `kairos tls fetch-ca` fetches it against its hash)";
      }
    }
    String text = ApiClient.describe(error);
    return "http".equals(uri.getScheme())
        ? text + " (does it serve HTTPS? then use https://" + uri.getRawAuthority() + ")"
        : text;
  }

  /** Trusts the local CA, or failing that the JDK's own CAs. */
  private static SSLContext localOrSystem(List<X509Certificate> cas) {
    try {
      var local = (X509ExtendedTrustManager) ControllerTrustManagers.pkix(cas);
      var system = (X509ExtendedTrustManager) ControllerTrustManagers.pkix(null);
      var either = new Either(local, system);
      var context = SSLContext.getInstance("TLS");
      context.init(null, new TrustManager[] {either}, null);
      return context;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot build a TLS context", e);
    }
  }

  /** The JDK's PKIX trust managers, over {@code cas} or (null) the JDK's own trust store. */
  private static final class ControllerTrustManagers {
    static TrustManager pkix(List<X509Certificate> cas) throws GeneralSecurityException {
      KeyStore store = null;
      if (cas != null) {
        store = KeyStore.getInstance("PKCS12");
        try {
          store.load(null, null);
        } catch (IOException e) {
          throw new IllegalStateException("an empty key store failed to load", e);
        }
        for (int i = 0; i < cas.size(); i++) {
          store.setCertificateEntry("ca-" + i, cas.get(i));
        }
      }
      var factory = TrustManagerFactory.getInstance("PKIX");
      factory.init(store);
      for (TrustManager tm : factory.getTrustManagers()) {
        if (tm instanceof X509ExtendedTrustManager) {
          return tm;
        }
      }
      throw new IllegalStateException("no X.509 trust manager");
    }
  }

  /** Trusts a server that {@code first} or else {@code second} trusts (host names included). */
  private static final class Either extends X509ExtendedTrustManager {
    private final X509ExtendedTrustManager first;
    private final X509ExtendedTrustManager second;

    Either(X509ExtendedTrustManager first, X509ExtendedTrustManager second) {
      this.first = first;
      this.second = second;
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      try {
        first.checkServerTrusted(chain, authType, engine);
      } catch (CertificateException e) {
        second.checkServerTrusted(chain, authType, engine);
      }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      try {
        first.checkServerTrusted(chain, authType, socket);
      } catch (CertificateException e) {
        second.checkServerTrusted(chain, authType, socket);
      }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType)
        throws CertificateException {
      try {
        first.checkServerTrusted(chain, authType);
      } catch (CertificateException e) {
        second.checkServerTrusted(chain, authType);
      }
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      throw new CertificateException("the CLI is not a server");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      throw new CertificateException("the CLI is not a server");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType)
        throws CertificateException {
      throw new CertificateException("the CLI is not a server");
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
