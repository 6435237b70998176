package io.kairos.control.tls;

import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * Trusts a peer whose chain leads to one of the cluster's CA certificates (the JDK's PKIX checks:
 * signatures, validity, CA constraints, key usage) and whose certificate carries a required {@link
 * Role}. Host names are not checked: on the Raft transport a peer is whoever holds a replica
 * certificate of this cluster, whatever address it dials from.
 */
final class RoleTrustManager extends X509ExtendedTrustManager {
  private final X509TrustManager pkix;
  private final Role role;
  private final X509Certificate[] issuers;

  RoleTrustManager(List<X509Certificate> cas, Role role) {
    this.pkix = pkix(cas);
    this.role = role;
    this.issuers = cas.toArray(X509Certificate[]::new);
  }

  /** The JDK's PKIX trust manager over exactly {@code cas}, nothing from the system's store. */
  static X509TrustManager pkix(List<X509Certificate> cas) {
    try {
      var store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      for (int i = 0; i < cas.size(); i++) {
        store.setCertificateEntry("kairos-ca-" + i, cas.get(i));
      }
      var factory = TrustManagerFactory.getInstance("PKIX");
      factory.init(store);
      for (var tm : factory.getTrustManagers()) {
        if (tm instanceof X509TrustManager x509) {
          return x509;
        }
      }
      throw new IllegalStateException("the PKIX trust manager factory made no X.509 manager");
    } catch (GeneralSecurityException | java.io.IOException e) {
      throw new IllegalStateException("cannot build a trust store of the cluster CA", e);
    }
  }

  private void requireRole(X509Certificate[] chain) throws CertificateException {
    if (!role.isIn(chain[0])) {
      throw new CertificateException(
          chain[0].getSubjectX500Principal()
              + " is a certificate of this cluster's CA but not a "
              + role.name().toLowerCase(java.util.Locale.ROOT)
              + "'s ("
              + role.uri()
              + ")");
    }
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    pkix.checkClientTrusted(chain, authType);
    requireRole(chain);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    pkix.checkServerTrusted(chain, authType);
    requireRole(chain);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    checkClientTrusted(chain, authType);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    checkServerTrusted(chain, authType);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    checkClientTrusted(chain, authType);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    checkServerTrusted(chain, authType);
  }

  @Override
  public X509Certificate[] getAcceptedIssuers() {
    return issuers.clone();
  }
}
