package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.auth.Tokens;
import io.kairos.control.raft.CommandCodec;
import io.kairos.control.state.ControlCommand.AddToken;
import io.kairos.control.state.TokenRecord;
import io.kairos.control.tls.CertificateAuthority;
import io.kairos.control.tls.Role;
import io.kairos.protocol.WhoAmI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509TrustManager;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 14's first attack: a Ratis client of the attacker's own, which knows the group id (a fixed
 * UUID) and the peer id ({@code host_port}), sends a crafted {@code AddToken} for an admin token of
 * its own. Against a controller started as {@code kairos up} and {@code kairos server} start one on
 * loopback (the defaults), the Raft port speaks mutual TLS, and every credential short of a replica
 * certificate of this cluster's CA fails: none, another CA's, a node's certificate of the same CA.
 * The last case shows the crafted command itself is sound: with a replica certificate (which only a
 * holder of the CA key can make) it commits, and the token works.
 */
class ForgedRaftClientTest {
  @TempDir static Path dir;
  @TempDir static Path elsewhere;
  static Controller controller;
  static TestApi admin;

  @BeforeAll
  static void start() throws Exception {
    controller = Controller.start(ControllerConfig.single(dir, "127.0.0.1", 0));
    admin = new TestApi(controller.url(), controller.adminToken());
    // The attack is against a leader that commits: every refusal below is the transport's.
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (admin.get("/api/v1/whoami").status() != 200) {
      assertThat(System.nanoTime()).as("the controller serves within 30 s").isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  @AfterAll
  static void stop() throws Exception {
    controller.close();
  }

  @Test
  void aPlainRatisClientWithNoCredentialCannotAddAToken() throws Exception {
    String token = "kadm_mallory_plain";
    assertThat(forge(token, Optional.empty())).isFalse();
    assertThat(admin.as(token).get("/api/v1/whoami").status()).isEqualTo(401);
  }

  @Test
  void aClientCertificateFromAnotherCaIsRefused() throws Exception {
    var other = CertificateAuthority.create(elsewhere.resolve("other-ca"), Instant.now());
    String token = "kadm_mallory_other_ca";
    assertThat(forge(token, Optional.of(credentials(other, Role.REPLICA)))).isFalse();
    assertThat(admin.as(token).get("/api/v1/whoami").status()).isEqualTo(401);
  }

  @Test
  void aNodeCertificateOfTheClusterCaCannotSpeakRaft() throws Exception {
    var ca = CertificateAuthority.load(dir);
    String token = "kadm_mallory_node_cert";
    assertThat(forge(token, Optional.of(credentials(ca, Role.NODE)))).isFalse();
    assertThat(admin.as(token).get("/api/v1/whoami").status()).isEqualTo(401);
  }

  @Test
  void theSameCommandWithAReplicaCertificateCommits() throws Exception {
    var ca = CertificateAuthority.load(dir);
    String token = "kadm_insider_replica_cert";
    assertThat(forge(token, Optional.of(credentials(ca, Role.REPLICA)))).isTrue();
    var who = admin.as(token).get("/api/v1/whoami");
    assertThat(who.status()).isEqualTo(200);
    assertThat(who.as(WhoAmI.class).admin()).isTrue();
  }

  /** Key material a client presents: a certificate of {@code ca} with {@code role}. */
  static GrpcTlsConfig credentials(CertificateAuthority ca, Role role) throws Exception {
    var issued =
        ca.issue(
            new CertificateAuthority.Request(
                "mallory", role, List.of("127.0.0.1"), Duration.ofDays(1)),
            Instant.now());
    var store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    store.setKeyEntry(
        "mallory",
        issued.key(),
        new char[0],
        new X509Certificate[] {issued.certificate(), ca.certificate()});
    var kmf = KeyManagerFactory.getInstance("PKIX");
    kmf.init(store, new char[0]);
    var keys = (X509ExtendedKeyManager) kmf.getKeyManagers()[0];
    return new GrpcTlsConfig(keys, trustAnything(), true);
  }

  /** The attacker trusts whatever server answers: only the server's checks stand in the way. */
  static TrustManager trustAnything() {
    return new X509TrustManager() {
      @Override
      public void checkClientTrusted(X509Certificate[] chain, String authType) {}

      @Override
      public void checkServerTrusted(X509Certificate[] chain, String authType) {}

      @Override
      public X509Certificate[] getAcceptedIssuers() {
        return new X509Certificate[0];
      }
    };
  }

  /**
   * Sends {@code AddToken(token as admin "mallory")} with a Ratis client built as an attacker
   * would: the group id from the source, the peer id and address from the port. True when it
   * committed.
   */
  static boolean forge(String token, Optional<GrpcTlsConfig> tls) throws Exception {
    var self = controller.replica().self();
    var group =
        RaftGroup.valueOf(
            RaftGroupId.valueOf(
                UUID.nameUUIDFromBytes("kairos-controller".getBytes(StandardCharsets.UTF_8))),
            RaftPeer.newBuilder().setId(self.id()).setAddress(self.raftAddress()).build());
    var properties = new RaftProperties();
    RaftClientConfigKeys.Rpc.setRequestTimeout(
        properties, TimeDuration.valueOf(2, TimeUnit.SECONDS));
    var parameters = new Parameters();
    tls.ifPresent(t -> GrpcConfigKeys.TLS.setConf(parameters, t));
    byte[] command =
        CommandCodec.encode(
            new AddToken(
                System.currentTimeMillis(),
                new TokenRecord(Tokens.hash(token), "mallory", TokenRecord.ADMIN, 0)));
    try (RaftClient client =
        RaftClient.newBuilder()
            .setProperties(properties)
            .setParameters(parameters)
            .setRaftGroup(group)
            .setRetryPolicy(
                RetryPolicies.retryUpToMaximumCountWithFixedSleep(
                    3, TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
            .build()) {
      RaftClientReply reply = client.io().send(Message.valueOf(ByteString.copyFrom(command)));
      return reply.isSuccess();
    } catch (java.io.IOException e) {
      return false;
    }
  }
}
