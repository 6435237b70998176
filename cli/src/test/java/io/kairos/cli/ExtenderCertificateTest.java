package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kairos.control.Controller;
import io.kairos.control.ControllerConfig;
import io.kairos.control.NetworkSecurity;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The kube-scheduler extender's own credential as kube-scheduler's {@code tlsConfig} presents it:
 * {@code kairos token create --extender --cert-out DIR} writes a key and a client certificate of
 * the cluster CA; with it the extender's verbs answer and nothing else does, and once revoked it is
 * refused though the certificate itself is still valid.
 */
class ExtenderCertificateTest extends ClientTestSupport {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String FILTER_BODY =
      "{\"Pod\":{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"u-1\"},"
          + "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":"
          + "{\"nvidia.com/gpu\":\"0\"},\"requests\":{\"nvidia.com/gpu\":\"0\"}}}],"
          + "\"priority\":0}},\"Nodes\":null,\"NodeNames\":[\"n\"]}";

  Controller controller;

  @BeforeEach
  void startController() throws Exception {
    var security =
        new NetworkSecurity(
            NetworkSecurity.Mode.TLS, Optional.empty(), List.of(), Optional.empty(), false);
    controller =
        Controller.start(
            ControllerConfig.single(dir.resolve("ctl"), "127.0.0.1", 0).withSecurity(security));
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!controller.replica().isLeaderReady() || !controller.isBootstrapped()) {
      assertThat(System.nanoTime()).as("the controller leads within 30 s").isLessThan(deadline);
      Thread.sleep(20);
    }
    env.put("KAIROS_SERVER", controller.url());
    env.put("KAIROS_TOKEN", controller.adminToken());
    env.put("KAIROS_CA", dir.resolve("ctl/ca.pem").toString());
  }

  @AfterEach
  void stopController() throws Exception {
    controller.close();
  }

  @Test
  void theExtendersCertificateReachesItsVerbsOnlyUntilRevoked() throws Exception {
    Path out = dir.resolve("extender");
    var made = kairos("token", "create", "--extender", "--cert-out", out.toString());
    assertThat(made.code()).as(made.err()).isZero();
    assertThat(made.err()).contains("tlsConfig");
    assertThat(
            PosixFilePermissions.toString(
                Files.getPosixFilePermissions(out.resolve("extender.key"))))
        .isEqualTo("rw-------");

    SSLContext withCertificate = context(out, true);
    SSLContext without = context(out, false);
    String filter = controller.url() + "/api/v1/k8s-extender/filter";

    var ok = post(withCertificate, filter, FILTER_BODY);
    assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
    assertThat(JSON.readTree(ok.body()).has("FailedNodes")).as(ok.body()).isTrue();
    assertThat(get(withCertificate, controller.url() + "/api/v1/jobs").statusCode())
        .as("the extender's certificate reaches nothing else")
        .isEqualTo(403);
    assertThat(post(without, filter, FILTER_BODY).statusCode()).isEqualTo(401);

    JsonNode listed = JSON.readTree(kairos("token", "list", "-o", "json").assertOk().out());
    String id = null;
    for (JsonNode t : listed) {
      if (t.get("kind").asText().equals("certificate")) {
        id = t.get("id").asText();
        assertThat(t.get("role").asText()).isEqualTo("extender");
        assertThat(t.has("lastUsedAt")).as("its use is shown: %s", t).isTrue();
      }
    }
    assertThat(id).as("the certificate in %s", listed).isNotNull();
    assertThat(kairos("token", "revoke", id).assertOk().out()).startsWith("Revoked extender");

    var refused = post(withCertificate, filter, FILTER_BODY);
    assertThat(refused.statusCode()).isEqualTo(401);
    assertThat(refused.body()).contains("revoked");
  }

  /** Trusts the cluster CA; presents the extender's key and certificate when {@code present}. */
  private static SSLContext context(Path out, boolean present) throws Exception {
    var certificates = CertificateFactory.getInstance("X.509");
    var trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    int n = 0;
    for (Certificate c :
        certificates.generateCertificates(
            new ByteArrayInputStream(Files.readAllBytes(out.resolve("ca.pem"))))) {
      trust.setCertificateEntry("ca" + n++, c);
    }
    var tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    var context = SSLContext.getInstance("TLS");
    if (!present) {
      context.init(null, tmf.getTrustManagers(), null);
      return context;
    }
    String pem = Files.readString(out.resolve("extender.key"));
    byte[] der =
        Base64.getMimeDecoder()
            .decode(
                pem.replace("-----BEGIN PRIVATE KEY-----", "")
                    .replace("-----END PRIVATE KEY-----", ""));
    PrivateKey key = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(der));
    Certificate[] chain =
        certificates
            .generateCertificates(
                new ByteArrayInputStream(Files.readAllBytes(out.resolve("extender.pem"))))
            .toArray(Certificate[]::new);
    var keys = KeyStore.getInstance("PKCS12");
    keys.load(null, null);
    keys.setKeyEntry("extender", key, new char[0], chain);
    var kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(keys, new char[0]);
    context.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return context;
  }

  private static HttpResponse<String> post(SSLContext context, String url, String body)
      throws Exception {
    try (var http = HttpClient.newBuilder().sslContext(context).build()) {
      return http.send(
          HttpRequest.newBuilder(URI.create(url))
              .header("Content-Type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString(body))
              .build(),
          HttpResponse.BodyHandlers.ofString());
    }
  }

  private static HttpResponse<String> get(SSLContext context, String url) throws Exception {
    try (var http = HttpClient.newBuilder().sslContext(context).build()) {
      return http.send(
          HttpRequest.newBuilder(URI.create(url)).GET().build(),
          HttpResponse.BodyHandlers.ofString());
    }
  }
}
