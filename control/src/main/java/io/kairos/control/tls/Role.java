package io.kairos.control.tls;

import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Locale;

/**
 * What a certificate of the cluster CA is for, written into it as a URI subject alternative name
 * ({@code urn:kairos:role:replica}). Raft peers accept only {@link #REPLICA}, so a node's or a
 * user's certificate from the same CA cannot speak Raft.
 */
public enum Role {
  /** A controller replica: serves the API and speaks Raft. */
  REPLICA,
  /** A node agent. */
  NODE,
  /** A person or a program using the API. */
  USER;

  private static final int URI_NAME = 6;

  /** The URI subject alternative name that carries this role. */
  public String uri() {
    return "urn:kairos:role:" + name().toLowerCase(Locale.ROOT);
  }

  /** Whether {@code certificate} carries this role. */
  public boolean isIn(X509Certificate certificate) {
    try {
      var names = certificate.getSubjectAlternativeNames();
      if (names == null) {
        return false;
      }
      for (List<?> name : names) {
        if (name.size() == 2
            && name.get(0) instanceof Integer type
            && type == URI_NAME
            && uri().equals(name.get(1))) {
          return true;
        }
      }
      return false;
    } catch (CertificateParsingException e) {
      return false;
    }
  }
}
