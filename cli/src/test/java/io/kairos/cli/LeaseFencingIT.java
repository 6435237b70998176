package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.protocol.JobState;
import io.kairos.protocol.JobSubmission;
import io.kairos.protocol.NodeState;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lease rule end to end, with the default (short) lease: a node of a running two-node gang is
 * lost, by SIGSTOP of its agent or by cutting the agent off the controller, and the gang runs again
 * elsewhere, yet no rank of the first attempt is alive once any rank of the second has started.
 * Every part is a real process; each rank writes its own marks (the wall clock in nanoseconds, as
 * {@code date +%s%N} reads it: one machine, one clock) to {@code start-a<attempt>-r<rank>} once and
 * to {@code alive-a<attempt>-r<rank>} every 50 ms, and the test compares them.
 */
class LeaseFencingIT {
  /** Each rank: a start mark, then an alive mark every 50 ms until it is killed. */
  static final String RANK =
      "d=$KAIROS_CHECKPOINT_DIR; m=a$KAIROS_ATTEMPT-r$RANK; date +%s%N > $d/start-$m;"
          + " while :; do date +%s%N >> $d/alive-$m; sleep 0.05; done";

  @TempDir Path dir;
  TestCluster cluster;
  Blackhole proxy;

  @AfterEach
  void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
      // The cluster kills the tasks its agents left running (they outlive an agent by design):
      // no rank may go on writing into the directory JUnit is about to delete.
      long before = markBytes();
      Thread.sleep(500);
      assertThat(markBytes()).as("marks written after the cluster closed").isEqualTo(before);
    }
    if (proxy != null) {
      proxy.close();
    }
  }

  /** The bytes of every marks file now. */
  long markBytes() throws IOException {
    Path marks = dir.resolve("marks");
    if (!Files.isDirectory(marks)) {
      return 0;
    }
    try (var files = Files.list(marks)) {
      long sum = 0;
      for (Path f : files.toList()) {
        sum += Files.size(f);
      }
      return sum;
    }
  }

  @Test
  void aFrozenAgentsGangRunsElsewhereAndNoRankRunsTwice() throws Exception {
    cluster = TestCluster.start(dir);
    for (int i = 1; i <= 3; i++) {
      cluster.agent("n" + i, 1 + i, "1xEMU");
    }
    Path out = Files.createDirectories(dir.resolve("marks"));
    long id = cluster.submit(gang(out));
    awaitRanksAlive(out, id, 1);
    String frozen = cluster.job(id).placement().get(0).node();

    long stoppedAt = System.nanoTime();
    cluster.signal(frozen, "STOP");
    try {
      awaitRanksAlive(out, id, 2);
      System.out.printf(
          "LeaseFencingIT: SIGSTOP -> attempt 2 ranks alive after %d ms%n",
          (System.nanoTime() - stoppedAt) / 1_000_000);
      assertThat(cluster.job(id).placement())
          .extracting(p -> p.node())
          .as("the new attempt avoids the frozen node")
          .doesNotContain(frozen);
      assertNoRankRanTwice(out);
    } finally {
      cluster.signal(frozen, "CONT");
    }
    TestCluster.waitFor(
        "the thawed agent registers again",
        Duration.ofSeconds(60),
        () -> cluster.node(frozen).map(n -> n.state() == NodeState.UP).orElse(false),
        () -> cluster.agentLog(frozen));
    assertThat(cluster.agentLog(frozen)).containsAnyOf("fenced", "LEASE EXPIRED");
    assertThat(Files.readString(dir.resolve("agent-" + frozen + "/fence/fenced")))
        .as("the fence watchdog killed the frozen agent's rank")
        .contains("lease expired");
    assertNoRankRanTwice(out);
  }

  @Test
  void anAgentCutOffFromTheControllerFencesItselfAndItsGangRunsElsewhere() throws Exception {
    cluster = TestCluster.start(dir);
    proxy = Blackhole.to(cluster.port);
    // Only n1 (behind the proxy) and n2 at first, so the gang is placed on both.
    cluster.agentVia("http://127.0.0.1:" + proxy.port(), "n1", 2, "1xEMU", Map.of());
    cluster.agent("n2", 3, "1xEMU");
    Path out = Files.createDirectories(dir.resolve("marks"));
    long id = cluster.submit(gang(out));
    awaitRanksAlive(out, id, 1);
    cluster.agent("n3", 4, "1xEMU");

    long cutAt = System.nanoTime();
    proxy.cut();
    awaitRanksAlive(out, id, 2);
    System.out.printf(
        "LeaseFencingIT: partition -> attempt 2 ranks alive after %d ms%n",
        (System.nanoTime() - cutAt) / 1_000_000);
    assertThat(cluster.job(id).placement()).extracting(p -> p.node()).doesNotContain("n1");
    assertThat(cluster.node("n1").orElseThrow().reason()).contains("no heartbeat");
    assertNoRankRanTwice(out);

    proxy.heal();
    TestCluster.waitFor(
        "the cut-off agent registers again once the network heals",
        Duration.ofSeconds(60),
        () -> cluster.node("n1").map(n -> n.state() == NodeState.UP).orElse(false),
        () -> cluster.agentLog("n1"));
    assertThat(cluster.agentLog("n1")).containsAnyOf("LEASE EXPIRED", "fenced");
    assertNoRankRanTwice(out);
  }

  static JobSubmission gang(Path out) {
    return new JobSubmission(
        null,
        List.of("/bin/sh", "-c", RANK),
        null,
        null,
        2,
        1,
        null,
        null,
        "10m",
        null,
        null,
        null,
        null,
        null,
        "1s",
        null,
        out.toString(),
        null,
        null);
  }

  /** Waits until the job runs {@code attempt} and both its ranks have marked themselves alive. */
  void awaitRanksAlive(Path out, long id, int attempt) throws InterruptedException {
    TestCluster.waitFor(
        "attempt " + attempt + " of job " + id + " runs, both ranks alive",
        Duration.ofSeconds(120),
        () ->
            cluster.job(id).state() == JobState.RUNNING
                && cluster.job(id).attempt() == attempt
                && marks(out.resolve("alive-a" + attempt + "-r0")).size() >= 3
                && marks(out.resolve("alive-a" + attempt + "-r1")).size() >= 3,
        () -> cluster.job(id) + "\n" + TestCluster.tail(cluster.serverLog()));
  }

  /**
   * For each attempt after the first: every alive mark of the attempt before it (any rank) is older
   * than the first start mark of any of its ranks.
   */
  static void assertNoRankRanTwice(Path out) {
    for (int attempt = 2; Files.exists(out.resolve("start-a" + attempt + "-r0")); attempt++) {
      long firstStart = Long.MAX_VALUE;
      for (int rank = 0; rank < 2; rank++) {
        for (long t : marks(out.resolve("start-a" + attempt + "-r" + rank))) {
          firstStart = Math.min(firstStart, t);
        }
      }
      for (int rank = 0; rank < 2; rank++) {
        List<Long> alive = marks(out.resolve("alive-a" + (attempt - 1) + "-r" + rank));
        assertThat(alive)
            .as("attempt %d rank %d marked itself alive", attempt - 1, rank)
            .isNotEmpty();
        long last = alive.stream().mapToLong(Long::longValue).max().orElseThrow();
        assertThat(last)
            .as(
                "attempt %d rank %d's last alive mark (%d) comes before attempt %d's first start"
                    + " (%d): %d ms apart",
                attempt - 1, rank, last, attempt, firstStart, (firstStart - last) / 1_000_000)
            .isLessThan(firstStart);
      }
    }
  }

  /** The complete lines of a marks file (a line being written is left out). */
  static List<Long> marks(Path file) {
    try {
      String text = Files.readString(file);
      int end = text.lastIndexOf('\n');
      return end < 0
          ? List.of()
          : text.substring(0, end).lines().filter(l -> !l.isBlank()).map(Long::parseLong).toList();
    } catch (IOException e) {
      return List.of();
    }
  }

  /**
   * A TCP proxy to the controller that can stop forwarding, as a network partition does: once
   * {@link #cut}, bytes either way are read and dropped and new connections are accepted and left
   * hanging; no connection is closed, so the agent sees silence, not an error.
   */
  static final class Blackhole implements AutoCloseable {
    private final ServerSocket server;
    private final int target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean cut;

    private Blackhole(ServerSocket server, int target) {
      this.server = server;
      this.target = target;
    }

    static Blackhole to(int port) throws IOException {
      var server = new ServerSocket();
      server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      var proxy = new Blackhole(server, port);
      Thread.ofVirtual().start(proxy::accept);
      return proxy;
    }

    int port() {
      return server.getLocalPort();
    }

    void cut() {
      cut = true;
    }

    /** Forwards again, on new connections: those opened while cut stay dead. */
    void heal() {
      cut = false;
    }

    private void accept() {
      while (!server.isClosed()) {
        try {
          Socket client = server.accept();
          sockets.add(client);
          if (cut) {
            Thread.ofVirtual().start(() -> pump(client, null));
            continue;
          }
          Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
          sockets.add(upstream);
          Thread.ofVirtual().start(() -> pump(client, upstream));
          Thread.ofVirtual().start(() -> pump(upstream, client));
        } catch (IOException e) {
          // closed, or the controller refused: the agent retries
        }
      }
    }

    /** Copies {@code from} to {@code to} while not cut; drops everything once cut (or no peer). */
    private void pump(Socket from, Socket to) {
      byte[] buffer = new byte[8192];
      try (InputStream in = from.getInputStream()) {
        OutputStream sink = to == null ? null : to.getOutputStream();
        for (int n; (n = in.read(buffer)) >= 0; ) {
          if (!cut && sink != null) {
            sink.write(buffer, 0, n);
            sink.flush();
          } else {
            sink = null; // a connection cut once stays cut
          }
        }
        if (to != null && !cut) {
          to.shutdownOutput(); // pass the close on
        }
      } catch (IOException e) {
        // the other side closed
      }
    }

    @Override
    public void close() throws IOException {
      server.close();
      for (Socket s : sockets) {
        s.close();
      }
    }
  }
}
