package io.kairos.control.tls;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * A key manager with one certificate and key that can be replaced while servers run: the API
 * (Jetty) and the Raft transport (Netty) both ask it on every handshake, so a rotated certificate
 * is presented from the next connection on, without a restart.
 *
 * <p>Each certificate gets an alias of its own (its serial number), so a TLS stack that caches key
 * material by alias picks the new one up; the previous one stays answerable for handshakes already
 * under way.
 */
final class RotatingKeyManager extends X509ExtendedKeyManager {
  private record Material(String alias, PrivateKey key, X509Certificate[] chain) {}

  private volatile Material current;
  private volatile Material previous;

  RotatingKeyManager(PrivateKey key, List<X509Certificate> chain) {
    current = material(key, chain);
  }

  /** Presents {@code chain} (leaf first) and {@code key} from the next handshake on. */
  void replace(PrivateKey key, List<X509Certificate> chain) {
    Material next = material(key, chain);
    synchronized (this) {
      previous = current;
      current = next;
    }
  }

  X509Certificate certificate() {
    return current.chain()[0];
  }

  private static Material material(PrivateKey key, List<X509Certificate> chain) {
    return new Material(
        "kairos-" + chain.getFirst().getSerialNumber().toString(16),
        key,
        chain.toArray(X509Certificate[]::new));
  }

  private String aliasFor(String[] keyTypes) {
    Material m = current;
    if (keyTypes == null) {
      return m.alias();
    }
    for (String type : keyTypes) {
      if (fits(type, m)) {
        return m.alias();
      }
    }
    return null;
  }

  private static boolean fits(String keyType, Material m) {
    // JSSE asks by key algorithm ("EC", "RSA"); Netty's OpenSSL binding may add the
    // signature algorithm ("EC_EC").
    return keyType != null && keyType.startsWith(m.key().getAlgorithm());
  }

  private Material byAlias(String alias) {
    Material c = current;
    if (c.alias().equals(alias)) {
      return c;
    }
    Material p = previous;
    return p != null && p.alias().equals(alias) ? p : null;
  }

  @Override
  public String[] getClientAliases(String keyType, Principal[] issuers) {
    return fits(keyType, current) ? new String[] {current.alias()} : null;
  }

  @Override
  public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
    return aliasFor(keyType);
  }

  @Override
  public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
    return aliasFor(keyType);
  }

  @Override
  public String[] getServerAliases(String keyType, Principal[] issuers) {
    return fits(keyType, current) ? new String[] {current.alias()} : null;
  }

  @Override
  public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
    return aliasFor(new String[] {keyType});
  }

  @Override
  public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
    return aliasFor(new String[] {keyType});
  }

  @Override
  public X509Certificate[] getCertificateChain(String alias) {
    Material m = byAlias(alias);
    return m == null ? null : Arrays.copyOf(m.chain(), m.chain().length);
  }

  @Override
  public PrivateKey getPrivateKey(String alias) {
    Material m = byAlias(alias);
    return m == null ? null : m.key();
  }
}
