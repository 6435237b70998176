package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kairos.control.NetworkSecurity.Mode;
import io.kairos.control.raft.PeerAddress;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where the Raft transport binds, when the API serves HTTPS, and what is warned about; and a real
 * controller's Raft port bound to its listen host only.
 */
class NetworkSecurityTest {
  static final PeerAddress SELF = new PeerAddress("10.0.0.5", 8080, 9080);

  static NetworkSecurity raftListen(String text) {
    return new NetworkSecurity(Mode.AUTO, Optional.of(text), List.of(), Optional.empty(), false);
  }

  @Test
  void raftBindsTheListenHostByDefault() {
    var b = NetworkSecurity.DEFAULT.raftBinding(SELF, false);
    assertThat(b.bindHost()).isEqualTo("10.0.0.5");
    assertThat(b.self()).isEqualTo(SELF);
  }

  @Test
  void aSingleReplicaMovesRaftAnywhereAndDialsLoopbackForAWildcard() {
    var b = raftListen("192.168.1.7:7000").raftBinding(SELF, false);
    assertThat(b.bindHost()).isEqualTo("192.168.1.7");
    assertThat(b.self().raftAddress()).isEqualTo("192.168.1.7:7000");
    assertThat(b.self().httpUrl()).isEqualTo("http://10.0.0.5:8080");
    var w = raftListen("0.0.0.0:7000").raftBinding(SELF, false);
    assertThat(w.bindHost()).isEqualTo("0.0.0.0");
    assertThat(w.self().raftAddress()).isEqualTo("127.0.0.1:7000");
    assertThat(raftListen("[::1]:7000").raftBinding(SELF, false).bindHost()).isEqualTo("::1");
  }

  @Test
  void inAGroupOnlyTheBindHostMovesAndThePortMustBeThePeersOne() {
    var b = raftListen("0.0.0.0:9080").raftBinding(SELF, true);
    assertThat(b.bindHost()).isEqualTo("0.0.0.0");
    assertThat(b.self()).isEqualTo(SELF);
    assertThatThrownBy(() -> raftListen("0.0.0.0:7000").raftBinding(SELF, true))
        .hasMessageContaining("must be this replica's Raft port in --peers (9080)");
    assertThatThrownBy(() -> raftListen("nohost").raftBinding(SELF, false))
        .hasMessageContaining("must be HOST:PORT");
  }

  @Test
  void httpsOffLoopbackByDefaultOnLoopbackWhenToldAndNeverWhenInsecure() {
    assertThat(NetworkSecurity.DEFAULT.https("10.0.0.5")).isTrue();
    assertThat(NetworkSecurity.DEFAULT.https("0.0.0.0")).isTrue();
    assertThat(NetworkSecurity.DEFAULT.https("127.0.0.1")).isFalse();
    assertThat(NetworkSecurity.DEFAULT.https("localhost")).isFalse();
    assertThat(NetworkSecurity.DEFAULT.withMode(Mode.TLS).https("127.0.0.1")).isTrue();
    assertThat(NetworkSecurity.DEFAULT.withMode(Mode.INSECURE).https("10.0.0.5")).isFalse();
    assertThat(NetworkSecurity.DEFAULT.raftTls()).isTrue();
    assertThat(NetworkSecurity.DEFAULT.withMode(Mode.INSECURE).raftTls()).isFalse();
  }

  @Test
  void plainTextOffLoopbackIsWarnedAboutPartByPart() {
    var insecure = NetworkSecurity.DEFAULT.withMode(Mode.INSECURE);
    assertThat(insecure.plainTextWarnings("http://10.0.0.5:8080", false, "10.0.0.5", 9080))
        .hasSize(2)
        .anySatisfy(w -> assertThat(w).contains("API http://10.0.0.5:8080").contains("--insecure"))
        .anySatisfy(w -> assertThat(w).contains("Raft transport 10.0.0.5:9080"));
    assertThat(insecure.plainTextWarnings("http://127.0.0.1:8080", false, "127.0.0.1", 9080))
        .isEmpty();
    assertThat(
            NetworkSecurity.DEFAULT.plainTextWarnings(
                "https://10.0.0.5:8080", true, "10.0.0.5", 9080))
        .isEmpty();
  }

  @Test
  void aControllerOnLoopbackBindsRaftThereOnly(@TempDir Path dir) throws Exception {
    try (var controller = Controller.start(ControllerConfig.single(dir, "127.0.0.1", 0))) {
      int raftPort = controller.replica().self().raftPort();
      assertThat(bindable("127.0.0.1", raftPort)).as("taken on 127.0.0.1").isFalse();
      // Were Raft bound to every interface, this address's port would be taken too.
      assertThat(bindable("127.0.0.2", raftPort)).as("free on 127.0.0.2").isTrue();
      Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    }
  }

  @Test
  void raftListenMovesTheRaftPort(@TempDir Path dir) throws Exception {
    int port;
    try (var s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    var config =
        ControllerConfig.single(dir, "127.0.0.1", 0).withSecurity(raftListen("127.0.0.3:" + port));
    try (var controller = Controller.start(config)) {
      assertThat(controller.replica().self().raftAddress()).isEqualTo("127.0.0.3:" + port);
      assertThat(bindable("127.0.0.3", port)).isFalse();
      assertThat(bindable("127.0.0.1", port)).isTrue();
      Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    }
  }

  private static boolean bindable(String host, int port) {
    try (var socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress(host, port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
