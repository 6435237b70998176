package io.kairos.agent;

import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * The node's TLS identity once it has a certificate: the key and certificate it presents (to the
 * controller as a client, and as its log server), and whom its log server lets in: a client
 * certificate of the cluster CA with the replica role ({@code urn:kairos:role:replica}), that is a
 * controller replica, and nobody else. Both are set after each registration (the certificate and
 * the CA come with its reply) and read on every handshake; before the first, every handshake fails.
 */
final class NodeTls {
  static final String REPLICA_ROLE = "urn:kairos:role:replica";
  private static final int URI_NAME = 6;

  private final Keys keys = new Keys();
  private final Replicas replicas = new Replicas();

  /** Presents {@code chain} (leaf first) with {@code key} from the next handshake on. */
  void present(PrivateKey key, List<X509Certificate> chain) {
    keys.set(key, chain.toArray(X509Certificate[]::new));
  }

  /** Lets in replicas of these CAs from the next handshake on. */
  void trust(List<X509Certificate> cas) {
    replicas.set(pkix(cas), cas.toArray(X509Certificate[]::new));
  }

  boolean presents() {
    return keys.material != null;
  }

  KeyManager keyManager() {
    return keys;
  }

  /** The log server's context: the node's certificate; replicas' client certificates. */
  SSLContext serverContext() {
    try {
      var context = SSLContext.getInstance("TLS");
      context.init(new KeyManager[] {keys}, new TrustManager[] {replicas}, null);
      return context;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot build the log server's TLS context", e);
    }
  }

  /** Whether {@code cert} carries the replica role. */
  static boolean isReplica(X509Certificate cert) {
    try {
      var names = cert.getSubjectAlternativeNames();
      if (names == null) {
        return false;
      }
      for (List<?> name : names) {
        if (name.size() == 2
            && name.get(0) instanceof Integer type
            && type == URI_NAME
            && REPLICA_ROLE.equals(name.get(1))) {
          return true;
        }
      }
      return false;
    } catch (CertificateParsingException e) {
      return false;
    }
  }

  static X509TrustManager pkix(List<X509Certificate> cas) {
    try {
      var store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      for (int i = 0; i < cas.size(); i++) {
        store.setCertificateEntry("ca-" + i, cas.get(i));
      }
      var factory = TrustManagerFactory.getInstance("PKIX");
      factory.init(store);
      for (TrustManager tm : factory.getTrustManagers()) {
        if (tm instanceof X509TrustManager x509) {
          return x509;
        }
      }
      throw new IllegalStateException("no X.509 trust manager");
    } catch (GeneralSecurityException | java.io.IOException e) {
      throw new IllegalStateException("cannot trust the cluster CA", e);
    }
  }

  private static final class Keys extends X509ExtendedKeyManager {
    private static final String ALIAS = "node";

    private record Material(PrivateKey key, X509Certificate[] chain) {}

    private volatile Material material;

    void set(PrivateKey key, X509Certificate[] chain) {
      material = new Material(key, chain);
    }

    private String alias() {
      return material == null ? null : ALIAS;
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
      return material == null ? null : new String[] {ALIAS};
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
      return alias();
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
      return alias();
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
      return material == null ? null : new String[] {ALIAS};
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
      return alias();
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
      return alias();
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
      Material m = material;
      return m == null || !ALIAS.equals(alias) ? null : m.chain().clone();
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
      Material m = material;
      return m == null || !ALIAS.equals(alias) ? null : m.key();
    }
  }

  /** Trusts clients with a replica certificate of the cluster CA; never a server. */
  private static final class Replicas extends X509ExtendedTrustManager {
    private volatile X509TrustManager pkix;
    private volatile X509Certificate[] issuers = new X509Certificate[0];

    void set(X509TrustManager pkix, X509Certificate[] issuers) {
      this.pkix = pkix;
      this.issuers = issuers;
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType)
        throws CertificateException {
      X509TrustManager p = pkix;
      if (p == null) {
        throw new CertificateException("this node has not registered yet: it trusts nobody");
      }
      p.checkClientTrusted(chain, authType);
      if (!isReplica(chain[0])) {
        throw new CertificateException(
            chain[0].getSubjectX500Principal() + " is not a controller replica's certificate");
      }
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      checkClientTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      checkClientTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType)
        throws CertificateException {
      throw new CertificateException("the log server trusts no server");
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      checkServerTrusted(chain, authType);
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
}
