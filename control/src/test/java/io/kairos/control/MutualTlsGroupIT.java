package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.tls.CertificateAuthority;
import io.kairos.protocol.ClusterInfo;
import io.kairos.protocol.SubmitResult;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three replicas as processes, sharing one cluster CA ({@code --ca-from}), speak mutual TLS on
 * Raft: they elect a leader and replicate. Then a fourth process takes a follower's place (its
 * address and ports, the same {@code --peers}) with a CA of its own: it cannot talk Raft to the
 * group either way. It never learns the leader or a single entry, cannot disturb the leader, and
 * the group commits without it; the real replica, back, catches up.
 */
class MutualTlsGroupIT {
  @TempDir Path tmp;
  final List<ControllerProcess> processes = new ArrayList<>();

  @AfterEach
  void stop() {
    processes.forEach(ControllerProcess::close);
  }

  @Test
  void aGroupOverMutualTlsReplicatesAndAReplicaOfAnotherCaIsShutOut() throws Exception {
    int[] ports = {
      ControllerProcess.freePortPair(),
      ControllerProcess.freePortPair(),
      ControllerProcess.freePortPair()
    };
    String peers = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1] + ",127.0.0.1:" + ports[2];
    Path ca = tmp.resolve("ca");
    CertificateAuthority.create(ca, Instant.now());
    var group = new ArrayList<ControllerProcess>();
    for (int i = 0; i < 3; i++) {
      group.add(replica(tmp.resolve("data" + i), ports[i], peers, "replica" + i, ca));
    }
    for (var r : group) {
      r.launch();
    }
    for (var r : group) {
      r.awaitReady(Duration.ofSeconds(90));
    }
    ControllerProcess leader = awaitLeader(group);
    long first = submit(leader);
    for (var r : group) {
      awaitJob(r, first);
    }

    ControllerProcess victim = group.stream().filter(r -> r != leader).findFirst().orElseThrow();
    victim.kill9();
    Path otherCa = tmp.resolve("other-ca");
    CertificateAuthority.create(otherCa, Instant.now());
    var impostor =
        replica(tmp.resolve("impostor"), victim.port(), peers, "impostor", otherCa).launch();
    impostor.awaitReady(Duration.ofSeconds(90));

    long second = submit(leader); // two of three replicas still commit
    long watchUntil = System.nanoTime() + Duration.ofSeconds(8).toNanos();
    while (System.nanoTime() < watchUntil) {
      var impostorApi = impostor.api();
      var reply = Acks.call(() -> impostorApi.get("/api/v1/jobs/" + second));
      assertThat(reply == null ? 404 : reply.status())
          .as("the impostor never receives an entry")
          .isEqualTo(404);
      Optional<ClusterInfo> seen = FailoverIT.cluster(impostor);
      assertThat(seen.map(ClusterInfo::leader))
          .as("the impostor never learns of a leader, and never becomes one")
          .isEmpty();
      assertThat(FailoverIT.cluster(leader).map(ClusterInfo::isLeader))
          .as("the leader keeps its lead")
          .contains(true);
      Thread.sleep(250);
    }

    impostor.close();
    victim.launch().awaitReady(Duration.ofSeconds(90));
    awaitJob(victim, second);
  }

  private ControllerProcess replica(Path data, int port, String peers, String name, Path ca) {
    var p =
        new ControllerProcess(data, port, peers, tmp.resolve(name + ".log"))
            .with("--ca-from", ca.toString());
    processes.add(p);
    return p;
  }

  private static long submit(ControllerProcess r) throws Exception {
    var reply = r.api().post("/api/v1/jobs", "{\"command\":[\"true\"]}");
    assertThat(reply.status()).as("submit: %s", reply.body()).isEqualTo(201);
    return reply.as(SubmitResult.class).id();
  }

  private static void awaitJob(ControllerProcess r, long id) throws Exception {
    var api = r.api();
    FailoverIT.pollUntil(
        Duration.ofSeconds(60),
        () ->
            Acks.call(() -> api.get("/api/v1/jobs/" + id)) instanceof TestApi.Reply reply
                && reply.status() == 200,
        () -> r.url() + " never showed job " + id + "\n" + r.tail());
  }

  private static ControllerProcess awaitLeader(List<ControllerProcess> group) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (System.nanoTime() < deadline) {
      for (var r : group) {
        if (FailoverIT.cluster(r).map(ClusterInfo::isLeader).orElse(false)) {
          return r;
        }
      }
      Thread.sleep(50);
    }
    var tails = new StringBuilder();
    group.forEach(r -> tails.append(r.url()).append('\n').append(r.tail()).append('\n'));
    throw new AssertionError("no leader within 60 s\n" + tails);
  }
}
