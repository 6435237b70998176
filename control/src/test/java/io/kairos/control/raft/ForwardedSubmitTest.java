package io.kairos.control.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kairos.control.state.ControlState;
import io.kairos.control.state.JobRequest;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Submits through a follower: its batcher packs concurrent submits into few log entries, forwarded
 * to the leader several at a time, and each caller gets its own ids back; on one replica a burst of
 * separate submits shares few entries (group commit).
 */
class ForwardedSubmitTest {
  @TempDir Path dir;
  final List<RaftReplica> replicas = new ArrayList<>();
  final List<SubmitBatcher> batchers = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (var b : batchers) {
      b.close();
    }
    for (var r : replicas) {
      r.close();
    }
  }

  static int freePort() throws Exception {
    try (var s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  static JobRequest job(int i) {
    return new JobRequest(
        "job-" + i, List.of("true"), Map.of(), "/tmp", 1, 0, 0, 0, 3600, "default", 0, "", "alice");
  }

  @Test
  void concurrentSubmitsThroughAFollowerShareEntriesAndGetTheirOwnIds() throws Exception {
    var peers = new ArrayList<PeerAddress>();
    for (int i = 0; i < 3; i++) {
      peers.add(new PeerAddress("127.0.0.1", freePort(), freePort()));
    }
    for (int i = 0; i < 3; i++) {
      var r = new RaftReplica(peers.get(i), peers, dir.resolve("r" + i));
      r.start();
      replicas.add(r);
    }
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> replicas.stream().anyMatch(RaftReplica::isLeaderReady));
    RaftReplica follower = replicas.stream().filter(r -> !r.isLeader()).findFirst().orElseThrow();
    var batcher = new SubmitBatcher(follower, InstantSource.system());
    batchers.add(batcher);
    // a first submit finds the leader (the client learns it), then the burst
    assertThat(batcher.submit(List.of(job(0))).get(60, TimeUnit.SECONDS)).hasSize(1);
    long before = follower.appliedIndex();

    int submits = 400;
    var futures = new ArrayList<CompletableFuture<List<Long>>>();
    for (int i = 1; i <= submits; i++) {
      futures.add(batcher.submit(i % 4 == 0 ? List.of(job(i), job(-i)) : List.of(job(i))));
    }
    var ids = new HashSet<Long>();
    for (int i = 0; i < submits; i++) {
      List<Long> got = futures.get(i).get(60, TimeUnit.SECONDS);
      assertThat(got).hasSize((i + 1) % 4 == 0 ? 2 : 1);
      ids.addAll(got);
    }
    assertThat(ids).hasSize(submits + submits / 4); // every job its own id

    // every replica holds every job, each under the name its caller gave it
    for (var r : replicas) {
      await()
          .atMost(Duration.ofSeconds(60))
          .untilAsserted(
              () -> assertThat(r.stateMachine().read(ControlState::jobCount)).isEqualTo(501));
    }
    for (int i = 0; i < submits; i++) {
      long first = futures.get(i).get().getFirst();
      String name = follower.stateMachine().read(s -> s.job(first).orElseThrow().request.name());
      assertThat(name).isEqualTo("job-" + (i + 1));
    }
    // batched: far fewer log entries than submits
    long entries = follower.appliedIndex() - before;
    assertThat(entries).isLessThan(submits / 2);
  }

  /** Group commit on one replica: a burst of separate submits shares few entries. */
  @Test
  void aBurstOfSubmitsSharesFewEntries() throws Exception {
    var self = new PeerAddress("127.0.0.1", freePort(), freePort());
    var replica = new RaftReplica(self, List.of(self), dir.resolve("one"));
    replicas.add(replica);
    replica.start();
    await().atMost(Duration.ofSeconds(60)).until(replica::isLeaderReady);
    var batcher = new SubmitBatcher(replica, InstantSource.system());
    batchers.add(batcher);
    assertThat(batcher.submit(List.of(job(0))).get(60, TimeUnit.SECONDS)).containsExactly(1L);
    long before = replica.appliedIndex();
    var futures = new ArrayList<CompletableFuture<List<Long>>>();
    for (int i = 1; i <= 300; i++) {
      futures.add(batcher.submit(List.of(job(i))));
    }
    var ids = new ArrayList<Long>();
    for (var f : futures) {
      ids.addAll(f.get(60, TimeUnit.SECONDS));
    }
    assertThat(ids).doesNotHaveDuplicates().hasSize(300);
    assertThat(replica.appliedIndex() - before).isLessThan(100);
  }
}
