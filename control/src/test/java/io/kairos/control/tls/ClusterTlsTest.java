package io.kairos.control.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cluster CA, the certificates it issues, their pins, and when a replica's is re-issued. */
class ClusterTlsTest {
  static final Instant NOW = Instant.parse("2026-06-01T00:00:00Z");
  @TempDir Path dir;

  @Test
  void aNewCaIsAnEcdsaCaWithAPrivateKeyFileAndAStablePin() throws Exception {
    var ca = CertificateAuthority.create(dir, NOW);
    X509Certificate cert = ca.certificate();
    assertThat(cert.getBasicConstraints()).isEqualTo(0);
    assertThat(cert.getPublicKey().getAlgorithm()).isEqualTo("EC");
    assertThat(cert.getSubjectX500Principal()).isEqualTo(cert.getIssuerX500Principal());
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("ca.key"))))
        .isEqualTo("rw-------");
    assertThat(ca.hash()).matches("sha256:[0-9a-f]{64}");
    assertThat(CertificateAuthority.load(dir).hash()).isEqualTo(ca.hash());
    assertThat(Pem.spkiSha256(Pem.readCertificates(dir.resolve("ca.pem")).getFirst()))
        .isEqualTo(ca.hash());
    assertThatThrownBy(() -> CertificateAuthority.create(dir, NOW))
        .hasMessageContaining("already holds a CA");
  }

  @Test
  void thePinIsTheSha256OfTheSubjectPublicKeyInfo() throws Exception {
    var ca = CertificateAuthority.create(dir, NOW);
    byte[] spki = ca.certificate().getPublicKey().getEncoded();
    String expected =
        "sha256:"
            + java.util.HexFormat.of()
                .formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(spki));
    assertThat(ca.hash()).isEqualTo(expected);
  }

  @Test
  void anIssuedCertificateChainsToTheCaAndCarriesItsHostsAndRole() throws Exception {
    var ca = CertificateAuthority.create(dir, NOW);
    var issued =
        ca.issue(
            new CertificateAuthority.Request(
                "r1", Role.REPLICA, List.of("ctl.example", "10.0.0.5", "::1"), Duration.ofDays(30)),
            NOW);
    X509Certificate cert = issued.certificate();
    var params = new PKIXParameters(Set.of(new TrustAnchor(ca.certificate(), null)));
    params.setRevocationEnabled(false);
    params.setDate(java.util.Date.from(NOW));
    CertPathValidator.getInstance("PKIX")
        .validate(CertificateFactory.getInstance("X.509").generateCertPath(List.of(cert)), params);
    assertThat(Role.REPLICA.isIn(cert)).isTrue();
    assertThat(Role.NODE.isIn(cert)).isFalse();
    assertThat(cert.getExtendedKeyUsage())
        .contains("1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"); // serverAuth, clientAuth
    assertThat(cert.getSubjectAlternativeNames())
        .extracting(san -> san.get(1).toString())
        .contains("ctl.example", "10.0.0.5", "0:0:0:0:0:0:0:1", Role.REPLICA.uri());
    assertThat(cert.getNotAfter().toInstant()).isEqualTo(NOW.plus(Duration.ofDays(30)));
    assertThat(Pem.matches(issued.key(), cert)).isTrue();
  }

  @Test
  void aKeyThatIsNotTheCertificatesIsRefused() throws Exception {
    CertificateAuthority.create(dir.resolve("a"), NOW);
    CertificateAuthority.create(dir.resolve("b"), NOW);
    Files.copy(
        dir.resolve("b/ca.key"),
        dir.resolve("a/ca.key"),
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    assertThatThrownBy(() -> CertificateAuthority.load(dir.resolve("a")))
        .hasMessageContaining("is not the key of the first certificate");
  }

  @Test
  void aSingleReplicaMakesItsCaOnceAndKeepsItsCertificateUntilItNearsExpiry() throws Exception {
    var hosts = List.of("127.0.0.1", "localhost");
    X509Certificate first;
    String hash;
    try (var tls = open(NOW, hosts, false)) {
      first = tls.certificate();
      hash = tls.ca().hash();
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(keyFile())))
          .isEqualTo("rw-------");
    }
    try (var again = open(NOW.plus(Duration.ofDays(300)), hosts, false)) {
      assertThat(again.ca().hash()).isEqualTo(hash);
      assertThat(again.certificate()).isEqualTo(first);
    }
    try (var late = open(NOW.plus(Duration.ofDays(340)), hosts, false)) {
      assertThat(late.ca().hash()).isEqualTo(hash);
      assertThat(late.certificate().getSerialNumber()).isNotEqualTo(first.getSerialNumber());
      assertThat(late.certificate().getNotAfter().toInstant())
          .isAfter(NOW.plus(Duration.ofDays(600)));
    }
  }

  @Test
  void aNewHostOrRotateCertsIssuesANewCertificateFromTheSameCa() throws Exception {
    X509Certificate first;
    try (var tls = open(NOW, List.of("127.0.0.1"), false)) {
      first = tls.certificate();
    }
    X509Certificate renamed;
    try (var tls = open(NOW, List.of("127.0.0.1", "ctl.example"), false)) {
      renamed = tls.certificate();
      assertThat(renamed.getSerialNumber()).isNotEqualTo(first.getSerialNumber());
      renamed.verify(tls.ca().certificate().getPublicKey());
    }
    try (var tls = open(NOW, List.of("127.0.0.1", "ctl.example"), true)) {
      assertThat(tls.certificate().getSerialNumber()).isNotEqualTo(renamed.getSerialNumber());
    }
  }

  @Test
  void aRunningReplicaRotatesInPlace() throws Exception {
    try (var tls = open(NOW, List.of("127.0.0.1"), false)) {
      var before = tls.certificate();
      assertThat(tls.renewIfDue()).isFalse();
      tls.rotate();
      assertThat(tls.certificate().getSerialNumber()).isNotEqualTo(before.getSerialNumber());
      String alias = tls.keyManager().chooseEngineServerAlias("EC", null, null);
      assertThat(tls.keyManager().getCertificateChain(alias)[0]).isEqualTo(tls.certificate());
    }
  }

  @Test
  void aGroupReplicaNeedsTheSharedCaAndKeepsIt() throws Exception {
    assertThatThrownBy(
            () ->
                ClusterTls.open(
                    dir, "r1", List.of("127.0.0.1"), Optional.empty(), true, false, clock(NOW)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("kairos tls create-ca")
        .hasMessageContaining("--ca-from");
    Path shared = dir.resolve("shared");
    var ca = CertificateAuthority.create(shared, NOW);
    Path data = dir.resolve("data");
    try (var tls =
        ClusterTls.open(
            data, "r1", List.of("127.0.0.1"), Optional.of(shared), true, false, clock(NOW))) {
      assertThat(tls.ca().hash()).isEqualTo(ca.hash());
      tls.certificate().verify(ca.certificate().getPublicKey());
    }
    Path other = dir.resolve("other");
    CertificateAuthority.create(other, NOW);
    assertThatThrownBy(
            () ->
                ClusterTls.open(
                    data, "r1", List.of("127.0.0.1"), Optional.of(other), true, false, clock(NOW)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("already holds another CA");
  }

  @Test
  void replicaTrustAcceptsOnlyReplicaCertificatesOfTheCa() throws Exception {
    try (var tls = open(NOW, List.of("127.0.0.1"), false)) {
      var trust = tls.replicaTrust();
      var ca = tls.ca();
      var now = Instant.now();
      var replica =
          ca.issue(
              new CertificateAuthority.Request(
                  "r2", Role.REPLICA, List.of("127.0.0.1"), Duration.ofDays(1)),
              now);
      var node =
          ca.issue(
              new CertificateAuthority.Request(
                  "n1", Role.NODE, List.of("127.0.0.1"), Duration.ofDays(1)),
              now);
      var stranger =
          CertificateAuthority.create(dir.resolve("stranger"), now)
              .issue(
                  new CertificateAuthority.Request(
                      "r9", Role.REPLICA, List.of("127.0.0.1"), Duration.ofDays(1)),
                  now);
      trust.checkClientTrusted(new X509Certificate[] {replica.certificate()}, "EC");
      assertThatThrownBy(
              () -> trust.checkClientTrusted(new X509Certificate[] {node.certificate()}, "EC"))
          .hasMessageContaining("not a replica");
      assertThatThrownBy(
              () ->
                  trust.checkServerTrusted(
                      new X509Certificate[] {stranger.certificate()}, "UNKNOWN"))
          .isInstanceOf(java.security.cert.CertificateException.class);
    }
  }

  @Test
  void hostsForAWildcardListenNameTheMachineAndAlwaysLoopback() {
    assertThat(ClusterTls.hostsFor("10.0.0.5", List.of("ctl.example")))
        .containsExactly("10.0.0.5", "ctl.example", "localhost", "127.0.0.1", "::1");
    assertThat(ClusterTls.hostsFor("0.0.0.0", List.of()))
        .doesNotContain("0.0.0.0")
        .contains("localhost", "127.0.0.1");
  }

  private ClusterTls open(Instant now, List<String> hosts, boolean rotate) throws Exception {
    return ClusterTls.open(dir, "r1", hosts, Optional.empty(), false, rotate, clock(now));
  }

  private Path keyFile() {
    return dir.resolve(ClusterTls.DIR).resolve(ClusterTls.KEY_FILE);
  }

  private static InstantSource clock(Instant now) {
    return InstantSource.fixed(now);
  }
}
