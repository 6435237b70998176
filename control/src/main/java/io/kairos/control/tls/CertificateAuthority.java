package io.kairos.control.tls;

import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HexFormat;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The cluster's certificate authority: an ECDSA P-256 key and a self-signed certificate, kept as
 * {@code ca.pem} (public) and {@code ca.key} (mode 0600) in a directory, and the certificates it
 * issues to replicas (and, later, to nodes and users).
 *
 * <p>{@code ca.pem} may hold several CA certificates during a CA rotation (docs/operations.md): the
 * first is the one whose key is in {@code ca.key} and that signs; all of them are trusted.
 *
 * <p>Certificates are built with BouncyCastle's ASN.1 builders and signed through the JDK's own
 * providers (SunEC); nothing registers BouncyCastle as a JCA provider.
 */
public final class CertificateAuthority {
  public static final String CERT_FILE = "ca.pem";
  public static final String KEY_FILE = "ca.key";
  static final Duration CA_VALIDITY = Duration.ofDays(3650);

  /** Issued certificates start this long before now, so a peer's clock a little behind agrees. */
  static final Duration BACKDATE = Duration.ofMinutes(5);

  private static final SecureRandom RANDOM = new SecureRandom();

  private final List<X509Certificate> trusted;
  private final PrivateKey key;

  private CertificateAuthority(List<X509Certificate> trusted, PrivateKey key) {
    this.trusted = List.copyOf(trusted);
    this.key = key;
  }

  /** Whether {@code dir} holds a CA ({@code ca.pem} and {@code ca.key}). */
  public static boolean existsIn(Path dir) {
    return Files.exists(dir.resolve(CERT_FILE)) && Files.exists(dir.resolve(KEY_FILE));
  }

  /**
   * Creates a CA in {@code dir} ({@code ca.pem}, and {@code ca.key} mode 0600).
   *
   * @throws IOException if {@code dir} already holds one (a CA is never replaced by accident)
   */
  public static CertificateAuthority create(Path dir, Instant now) throws IOException {
    if (Files.exists(dir.resolve(CERT_FILE)) || Files.exists(dir.resolve(KEY_FILE))) {
      throw new IOException(
          dir + " already holds a CA (" + CERT_FILE + ", " + KEY_FILE + "); it is not replaced");
    }
    Files.createDirectories(dir);
    KeyPair pair = newKeyPair();
    byte[] id = new byte[4];
    RANDOM.nextBytes(id);
    X500Name subject =
        new X500NameBuilder(BCStyle.INSTANCE)
            .addRDN(BCStyle.O, "Kairos")
            .addRDN(BCStyle.CN, "Kairos cluster CA " + HexFormat.of().formatHex(id))
            .build();
    try {
      var utils = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder builder =
          new JcaX509v3CertificateBuilder(
              subject,
              serial(),
              Date.from(now.minus(BACKDATE)),
              Date.from(now.plus(CA_VALIDITY)),
              subject,
              pair.getPublic());
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
      builder.addExtension(
          Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      builder.addExtension(
          Extension.subjectKeyIdentifier,
          false,
          utils.createSubjectKeyIdentifier(pair.getPublic()));
      X509Certificate cert = sign(builder, pair.getPrivate());
      Pem.writeSecret(dir.resolve(KEY_FILE), Pem.encode(pair.getPrivate()));
      Pem.writePublic(dir.resolve(CERT_FILE), Pem.encode(cert));
      return new CertificateAuthority(List.of(cert), pair.getPrivate());
    } catch (GeneralSecurityException | CertIOException e) {
      throw new IllegalStateException("cannot create a CA certificate", e);
    }
  }

  /** Loads the CA of {@code dir}, checking that {@code ca.key} belongs to the first certificate. */
  public static CertificateAuthority load(Path dir) throws IOException {
    List<X509Certificate> certs = Pem.readCertificates(dir.resolve(CERT_FILE));
    PrivateKey key = Pem.readPrivateKey(dir.resolve(KEY_FILE));
    if (!Pem.matches(key, certs.getFirst())) {
      throw new IOException(
          dir.resolve(KEY_FILE)
              + " is not the key of the first certificate in "
              + dir.resolve(CERT_FILE));
    }
    for (X509Certificate c : certs) {
      if (c.getBasicConstraints() < 0) {
        throw new IOException(
            dir.resolve(CERT_FILE) + ": " + c.getSubjectX500Principal() + " is not a CA");
      }
    }
    return new CertificateAuthority(certs, key);
  }

  /** The CA certificate that signs. */
  public X509Certificate certificate() {
    return trusted.getFirst();
  }

  /** Every CA certificate to trust: the signing one first, then any still trusted in a rotation. */
  public List<X509Certificate> trusted() {
    return trusted;
  }

  /** The pin agents check: {@code sha256:} of the signing certificate's public key. */
  public String hash() {
    return Pem.spkiSha256(certificate());
  }

  /** What to issue: a subject name, a role, host names and addresses, and a lifetime. */
  public record Request(String name, Role role, List<String> hosts, Duration validity) {
    public Request {
      hosts = List.copyOf(hosts);
      if (name.isBlank()) {
        throw new IllegalArgumentException("a certificate needs a name");
      }
    }
  }

  /** A certificate and its key, issued by this CA. */
  public record Issued(X509Certificate certificate, PrivateKey key) {}

  /**
   * Issues a certificate for a new ECDSA P-256 key: for TLS servers and clients both, with {@code
   * hosts} as DNS names or IP addresses and {@code role} as a URI subject alternative name.
   */
  public Issued issue(Request request, Instant now) {
    KeyPair pair = newKeyPair();
    return new Issued(sign(request, pair.getPublic(), now), pair.getPrivate());
  }

  private X509Certificate sign(Request request, PublicKey publicKey, Instant now) {
    X509Certificate ca = certificate();
    X500Name subject =
        new X500NameBuilder(BCStyle.INSTANCE)
            .addRDN(BCStyle.O, "Kairos")
            .addRDN(BCStyle.OU, request.role().uri())
            .addRDN(BCStyle.CN, request.name())
            .build();
    Instant notAfter = now.plus(request.validity());
    if (notAfter.isAfter(ca.getNotAfter().toInstant())) {
      notAfter = ca.getNotAfter().toInstant(); // never outlive the CA
    }
    try {
      var utils = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder builder =
          new JcaX509v3CertificateBuilder(
              ca,
              serial(),
              Date.from(now.minus(BACKDATE)),
              Date.from(notAfter),
              subject,
              publicKey);
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
      builder.addExtension(
          Extension.extendedKeyUsage,
          false,
          new ExtendedKeyUsage(
              new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
      builder.addExtension(Extension.subjectAlternativeName, false, altNames(request));
      builder.addExtension(
          Extension.subjectKeyIdentifier, false, utils.createSubjectKeyIdentifier(publicKey));
      builder.addExtension(
          Extension.authorityKeyIdentifier, false, utils.createAuthorityKeyIdentifier(ca));
      return sign(builder, key);
    } catch (GeneralSecurityException | CertIOException e) {
      throw new IllegalStateException("cannot issue a certificate for " + request.name(), e);
    }
  }

  private static GeneralNames altNames(Request request) {
    var names = new ArrayList<GeneralName>();
    for (String host : request.hosts()) {
      names.add(
          isIpLiteral(host)
              ? new GeneralName(GeneralName.iPAddress, stripBrackets(host))
              : new GeneralName(GeneralName.dNSName, host));
    }
    names.add(new GeneralName(GeneralName.uniformResourceIdentifier, request.role().uri()));
    return new GeneralNames(names.toArray(GeneralName[]::new));
  }

  /** An IPv4 or IPv6 literal (never a name lookup). */
  static boolean isIpLiteral(String host) {
    String h = stripBrackets(host);
    if (h.contains(":")) {
      return true;
    }
    return h.matches("\\d{1,3}(\\.\\d{1,3}){3}");
  }

  private static String stripBrackets(String host) {
    return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
  }

  /** Whether {@code host} names this machine's loopback (without a name lookup but "localhost"). */
  public static boolean isLoopback(String host) {
    String h = stripBrackets(host);
    if (h.equalsIgnoreCase("localhost")) {
      return true;
    }
    if (!isIpLiteral(h)) {
      return false;
    }
    try {
      return InetAddress.getByName(h).isLoopbackAddress();
    } catch (java.net.UnknownHostException e) {
      return false;
    }
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey key)
      throws GeneralSecurityException {
    String algorithm = key.getAlgorithm().equals("EC") ? "SHA256withECDSA" : "SHA256withRSA";
    try {
      var signer = new JcaContentSignerBuilder(algorithm).build(key);
      return new JcaX509CertificateConverter().getCertificate(builder.build(signer));
    } catch (OperatorCreationException e) {
      throw new GeneralSecurityException("no " + algorithm + " signer", e);
    }
  }

  private static KeyPair newKeyPair() {
    try {
      var generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
      return generator.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("ECDSA P-256 is missing from this JDK", e);
    }
  }

  /** A random positive 127-bit serial number (RFC 5280: unique, at most 20 octets). */
  private static BigInteger serial() {
    return new BigInteger(127, RANDOM).add(BigInteger.ONE);
  }
}
