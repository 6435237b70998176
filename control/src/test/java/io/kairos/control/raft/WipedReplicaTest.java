package io.kairos.control.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.TokenRecord;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Three replicas in one JVM: one loses its data directory and is started again empty. */
class WipedReplicaTest {
  @TempDir Path dir;
  final List<RaftReplica> replicas = new ArrayList<>();
  List<PeerAddress> peers;

  @AfterEach
  void close() throws Exception {
    for (var r : replicas) {
      if (r != null) {
        r.close();
      }
    }
  }

  static int freePort() throws Exception {
    try (var s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  RaftReplica start(int i) throws Exception {
    return start(i, false);
  }

  RaftReplica start(int i, boolean join) throws Exception {
    var p = peers.get(i);
    var r =
        new RaftReplica(
            p, peers, dir.resolve("r" + i), "http", RaftTransport.plain(p.host()), join);
    r.start();
    return r;
  }

  void startGroupWithTwentyTokens() throws Exception {
    peers = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      peers.add(new PeerAddress("127.0.0.1", freePort(), freePort()));
    }
    for (int i = 0; i < 3; i++) {
      replicas.add(start(i));
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> leader() != null);
    for (int i = 0; i < 20; i++) {
      var t = new TokenRecord("h" + i, "u", TokenRecord.USER, 0);
      assertThat(
              leader().propose(new ControlCommand.AddToken(1, t)).get(10, TimeUnit.SECONDS).isOk())
          .isTrue();
    }
  }

  void stopAndWipe(int victim) throws Exception {
    replicas.get(victim).close();
    replicas.set(victim, null);
    try (var files = Files.walk(dir.resolve("r" + victim))) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  static boolean raftServerAlive(RaftReplica r) {
    return r.division().map(d -> d.getInfo().isAlive()).orElse(false);
  }

  /**
   * Between its start on an empty directory and {@code kairos replicas add}, a removed replica that
   * still believes itself a member campaigns; the leader answers that it is not one, and Ratis
   * shuts its Raft server down for good (the replica then serves its last state and applies nothing
   * more). With {@code --join} it starts outside the configuration and waits, however slow the
   * admin, then catches up.
   */
  @Test
  void aReplacementStartedWithJoinWaitsForItsAddWithoutCampaigning() throws Exception {
    startGroupWithTwentyTokens();
    int victim = replicas.indexOf(replicas.stream().filter(r -> !r.isLeader()).findFirst().get());
    stopAndWipe(victim);
    String id = peers.get(victim).id();
    awaitLeader().membership().remove(id);

    var campaigner = start(victim, false);
    replicas.set(victim, campaigner);
    assertThat(campaigner.joining()).isFalse();
    await()
        .atMost(Duration.ofSeconds(30))
        .alias("an empty replica that was removed campaigns and is told to shut down")
        .until(() -> !raftServerAlive(campaigner));
    stopAndWipe(victim);

    var joiner = start(victim, true);
    replicas.set(victim, joiner);
    assertThat(joiner.joining()).isTrue();
    // A slow admin: several election timeouts (0.6-1.2 s) pass before the add.
    Thread.sleep(4_000);
    assertThat(raftServerAlive(joiner)).as("a joining replica does not campaign").isTrue();
    awaitLeader().membership().add(peers.get(victim));
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> assertThat((int) joiner.stateMachine().read(s -> s.tokenCount())).isEqualTo(20));
    // A member now: an entry proposed after the add reaches it, and its server stays up.
    var t = new TokenRecord("after", "u", TokenRecord.USER, 0);
    assertThat(
            awaitLeader()
                .propose(new ControlCommand.AddToken(1, t))
                .get(10, TimeUnit.SECONDS)
                .isOk())
        .isTrue();
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> assertThat((int) joiner.stateMachine().read(s -> s.tokenCount())).isEqualTo(21));
    assertThat(raftServerAlive(joiner)).isTrue();
    assertThat(awaitLeader().membership().members()).extracting(Membership.Member::id).contains(id);
  }

  @Test
  void joinNeedsAGroup() throws Exception {
    var self = new PeerAddress("127.0.0.1", freePort(), freePort());
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                new RaftReplica(
                    self,
                    List.of(self),
                    dir.resolve("alone"),
                    "http",
                    RaftTransport.plain(self.host()),
                    true))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--join needs --peers");
  }

  RaftReplica leader() {
    return replicas.stream().filter(r -> r != null && r.isLeaderReady()).findFirst().orElse(null);
  }

  /** The leader, once there is one (a loaded machine may be between leaders for a moment). */
  RaftReplica awaitLeader() {
    return await().atMost(Duration.ofSeconds(30)).until(this::leader, l -> l != null);
  }

  @Test
  void aWipedReplicaRejoinsFromTheLeader() throws Exception {
    startGroupWithTwentyTokens();
    int victim = replicas.indexOf(replicas.stream().filter(r -> !r.isLeader()).findFirst().get());
    long applied = replicas.get(victim).appliedIndex();
    stopAndWipe(victim);
    // Started empty as it is, the leader sends it nothing: it tells so.
    replicas.set(victim, start(victim));
    boolean wiped = replicas.get(victim).membership().looksWiped(Duration.ofSeconds(3));
    if (wiped) {
      assertThat(replicas.get(victim).appliedIndex()).isEqualTo(-1);
    } else {
      // looksWiped stops waiting once the replica applies something: on a loaded machine a leader
      // change in between makes the new leader send it everything from scratch. Then it did
      // rejoin by itself; the procedure below must still work.
      assertThat(replicas.get(victim).appliedIndex())
          .as("not reported wiped: it must have caught up by itself")
          .isGreaterThanOrEqualTo(0);
    }
    stopAndWipe(victim);
    // The procedure: remove it while it is down, start it empty with --join, add it back.
    var leader = awaitLeader();
    String id = peers.get(victim).id();
    leader.membership().remove(id);
    assertThat(leader.membership().members()).extracting(Membership.Member::id).doesNotContain(id);
    replicas.set(victim, start(victim, true));
    var back = replicas.get(victim);
    awaitLeader().membership().add(peers.get(victim));
    assertThat(awaitLeader().membership().members()).extracting(Membership.Member::id).contains(id);
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> assertThat((int) back.stateMachine().read(s -> s.tokenCount())).isEqualTo(20));
    assertThat(back.appliedIndex()).isGreaterThanOrEqualTo(applied);
  }
}
