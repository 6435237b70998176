package io.kairos.control.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlCommand.RegisterNode;
import io.kairos.control.state.ControlCommand.RegisterNodes;
import io.kairos.control.state.ControlResult;
import io.kairos.protocol.GpuDevice;
import io.kairos.protocol.agent.Registration;
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
 * Registrations that arrive together share log entries (group commit), on a real replica: each
 * caller gets its own epoch, a refused registration is refused alone, and the entry's encoding
 * stays readable.
 */
class RegisterBatcherTest {
  private static final long T0 = 1_700_000_000_000L;

  @TempDir Path dir;
  RaftReplica replica;
  RegisterBatcher batcher;

  @AfterEach
  void close() throws Exception {
    if (batcher != null) {
      batcher.close();
    }
    if (replica != null) {
      replica.close();
    }
  }

  static Registration node(String name) {
    return new Registration(
        name,
        "http://127.0.0.1:1",
        List.of(new GpuDevice(0, "GPU-" + name, "H100", 80L << 30)),
        8,
        64L << 30,
        Map.of(),
        "z",
        "b",
        "r",
        1);
  }

  @Test
  void aBurstSharesFewEntriesAndEachCallerGetsItsOwnAnswer() throws Exception {
    int port;
    int raftPort;
    try (var a = new ServerSocket(0);
        var b = new ServerSocket(0)) {
      port = a.getLocalPort();
      raftPort = b.getLocalPort();
    }
    var self = new PeerAddress("127.0.0.1", port, raftPort);
    replica = new RaftReplica(self, List.of(self), dir.resolve("one"));
    replica.start();
    await().atMost(Duration.ofSeconds(60)).until(replica::isLeaderReady);
    batcher = new RegisterBatcher(replica, InstantSource.system());
    // alone: its own entry, answered with its epoch
    ControlResult first =
        batcher.register(new RegisterNode(T0, node("n0"), "cred-0")).get(60, TimeUnit.SECONDS);
    assertThat(first.isOk()).isTrue();
    long before = replica.appliedIndex();

    int n = 300;
    var futures = new ArrayList<CompletableFuture<ControlResult>>();
    for (int i = 1; i <= n; i++) {
      // every 50th claims node n0's credential: refused, alone
      String credential = i % 50 == 0 ? "cred-0" : "cred-" + i;
      futures.add(batcher.register(new RegisterNode(T0 + i, node("n" + i), credential)));
    }
    var epochs = new HashSet<Long>();
    for (int i = 1; i <= n; i++) {
      ControlResult r = futures.get(i - 1).get(60, TimeUnit.SECONDS);
      if (i % 50 == 0) {
        assertThat(r.status()).as("registration %d", i).isEqualTo(409);
        assertThat(r.error()).contains("belongs to node n0");
        continue;
      }
      assertThat(r.isOk()).as("registration %d: %s", i, r.error()).isTrue();
      long epoch = r.ids().getFirst();
      epochs.add(epoch);
      String name = "n" + i;
      long applied = replica.stateMachine().read(s -> s.node(name).orElseThrow().epoch);
      assertThat(applied).isEqualTo(epoch);
    }
    assertThat(epochs).hasSize(n - n / 50);
    boolean refusedIsAbsent = replica.stateMachine().read(s -> s.node("n50").isEmpty());
    assertThat(refusedIsAbsent).isTrue();
    assertThat(replica.appliedIndex() - before)
        .as("log entries for %d registrations", n)
        .isLessThan(n / 4);
  }

  /** The entry as the log holds it: this text must decode in every later release. */
  @Test
  void theEntryDecodesFromItsLoggedForm() {
    String logged =
        "{\"op\":\"registerNodes\",\"atMs\":1700000000010,\"nodes\":["
            + "{\"op\":\"register\",\"atMs\":1700000000001,\"registration\":{\"node\":\"a\",\"address\":\"http://127.0.0.1:1\","
            + "\"gpus\":[],\"cpus\":8,\"memoryBytes\":1024}},"
            + "{\"op\":\"register\",\"atMs\":1700000000002,\"registration\":{\"node\":\"b\",\"address\":\"http://127.0.0.1:1\","
            + "\"gpus\":[],\"cpus\":8,\"memoryBytes\":1024},\"credential\":\"c\"}]}";
    ControlCommand decoded = CommandCodec.decode(GoldenLogs.withFormat(logged));
    assertThat(decoded).isInstanceOf(RegisterNodes.class);
    var nodes = ((RegisterNodes) decoded).nodes();
    assertThat(nodes).extracting(r -> r.registration().node()).containsExactly("a", "b");
    assertThat(nodes).extracting(RegisterNode::credential).containsExactly(null, "c");
    assertThat(nodes).extracting(RegisterNode::atMs).containsExactly(T0 + 1, T0 + 2);
    assertThat(CommandCodec.decode(CommandCodec.encode(decoded))).isEqualTo(decoded);
    var again = new RegisterNodes(T0 + 10, nodes);
    assertThat(CommandCodec.decode(CommandCodec.encode(again))).isEqualTo(decoded);
  }
}
