package io.kairos.control;

import io.kairos.control.state.ControlCommand.AddToken;
import io.kairos.control.state.TokenRecord;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code GET /readyz} says whether the replica can do its work, not only whether it knows a leader
 * (it used to answer 200 while writes failed): 503 while committed entries cannot be applied, and
 * on a replica whose group lost its majority; 200 again once it can.
 */
class ReadinessIT {
  @TempDir Path tmp;
  final List<ControllerProcess> replicas = new ArrayList<>();

  @AfterEach
  void stop() {
    replicas.forEach(ControllerProcess::close);
  }

  static TestApi.Reply readyz(String url) {
    return Acks.call(() -> new TestApi(url, null).get("/readyz"));
  }

  static void awaitReadyz(String url, int status, String contains, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    TestApi.Reply last = null;
    while (System.nanoTime() < deadline) {
      last = readyz(url);
      if (last != null && last.status() == status && last.body().contains(contains)) {
        return;
      }
      Thread.sleep(500);
    }
    throw new AssertionError(
        "readyz of "
            + url
            + " did not become "
            + status
            + " ("
            + contains
            + ") within "
            + timeout
            + "; last: "
            + (last == null ? "no reply" : last.status() + " " + last.body()));
  }

  @Test
  void aLeaderThatCannotApplyIsNotReadyUntilItCanAgain() throws Exception {
    try (var controller =
        Controller.start(ControllerConfig.single(tmp.resolve("one"), "127.0.0.1", 0))) {
      Leaders.awaitLeader(controller, Duration.ofSeconds(30));
      awaitReadyz(controller.url(), 200, "ready", Duration.ofSeconds(30));
      // Stall the apply thread: a reader holds the state's lock, so the next entry cannot apply.
      var holding = new CountDownLatch(1);
      var release = new CountDownLatch(1);
      var reader =
          Thread.ofVirtual()
              .start(
                  () ->
                      controller
                          .replica()
                          .stateMachine()
                          .read(
                              s -> {
                                holding.countDown();
                                try {
                                  release.await();
                                } catch (InterruptedException e) {
                                  Thread.currentThread().interrupt();
                                }
                                return null;
                              }));
      holding.await();
      var committed =
          controller
              .replica()
              .propose(
                  new AddToken(
                      System.currentTimeMillis(),
                      new TokenRecord("00".repeat(32), "probe", TokenRecord.USER, 0)));
      awaitReadyz(controller.url(), 503, "applying has not moved", Duration.ofSeconds(40));
      release.countDown();
      reader.join();
      committed.get();
      awaitReadyz(controller.url(), 200, "ready", Duration.ofSeconds(30));
    }
  }

  @Test
  void aReplicaWhoseGroupLostItsMajorityIsNotReady() throws Exception {
    int[] ports = {
      ControllerProcess.freePortPair(),
      ControllerProcess.freePortPair(),
      ControllerProcess.freePortPair()
    };
    String peers = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1] + ",127.0.0.1:" + ports[2];
    // The replicas share one cluster CA and speak mutual TLS on Raft, as a real group does.
    Path ca = tmp.resolve("ca");
    io.kairos.control.tls.CertificateAuthority.create(ca, java.time.Instant.now());
    for (int i = 0; i < 3; i++) {
      replicas.add(
          new ControllerProcess(
                  tmp.resolve("data" + i), ports[i], peers, tmp.resolve("replica" + i + ".log"))
              .with("--ca-from", ca.toString()));
    }
    for (var r : replicas) {
      r.launch();
    }
    for (var r : replicas) {
      r.awaitReady(Duration.ofSeconds(90));
    }
    for (var r : replicas) {
      awaitReadyz(r.url(), 200, "ready", Duration.ofSeconds(60));
    }
    var survivor = replicas.get(0);
    replicas.get(1).kill9();
    replicas.get(2).kill9();
    awaitReadyz(survivor.url(), 503, "not ready", Duration.ofSeconds(40));
    replicas.get(1).launch().awaitReady(Duration.ofSeconds(90));
    awaitReadyz(survivor.url(), 200, "ready", Duration.ofSeconds(60));
  }
}
