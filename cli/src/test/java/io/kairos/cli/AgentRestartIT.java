package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.protocol.JobState;
import io.kairos.protocol.JobView;
import io.kairos.protocol.NodeState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Restarting {@code kairos agent} kills nothing: a controller and two agents as real processes, a
 * two-node gang running, one agent killed with SIGKILL and started again, the other stopped with
 * SIGTERM and started again. The gang never notices: its ranks keep their pids, their step counters
 * never reset, the job keeps its attempt, its start and no requeue, its logs are still served, and
 * it ends with the exit code its rank really returned. A task that ends while its agent is down is
 * reported with its own exit code once the agent is back.
 */
class AgentRestartIT {
  @TempDir static Path dir;
  static TestCluster cluster;
  static final List<String> NODES = List.of("a1", "a2");

  @BeforeAll
  static void start() throws Exception {
    // A JVM restart on a loaded build machine can take seconds: neither the failure detector nor
    // the lease (3.5 s by default, which bounds the detector) may run out before the new agent
    // registers, as a site that restarts agents on busy machines would configure it.
    cluster = TestCluster.start(dir, "--acceptable-heartbeat-pause", "6s", "--lease", "10s");
    for (int i = 0; i < NODES.size(); i++) {
      cluster.agent(NODES.get(i), 2 + i, "2xEMU");
    }
  }

  @AfterAll
  static void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** Each rank writes its pid, then counts steps (one line each) until {@code stop}. */
  static String counter(String stop, String exitCodes) {
    return "echo $$ > $KAIROS_CHECKPOINT_DIR/pid-$RANK; i=0;"
        + " while [ ! -f $KAIROS_CHECKPOINT_DIR/"
        + stop
        + " ]; do i=$((i+1)); echo $i >> $KAIROS_CHECKPOINT_DIR/steps-$RANK; echo step $i;"
        + " sleep 0.1; done; set -- "
        + exitCodes
        + "; shift $RANK; exit $1";
  }

  @Test
  void aGangKeepsRunningThroughAKill9AndACleanRestartOfItsAgents() throws Exception {
    Path out = Files.createDirectories(dir.resolve("gang"));
    long id =
        cluster.submit(
            MultiNodeIT.job(List.of("/bin/sh", "-c", counter("stop", "0 3")), 4, 2, out));
    cluster.waitState(id, JobState.RUNNING, Duration.ofSeconds(60));
    awaitSteps(out, 0, 5);
    awaitSteps(out, 1, 5);
    long pid0 = pid(out, 0);
    long pid1 = pid(out, 1);
    JobView before = cluster.job(id);
    assertThat(before.attempt()).isEqualTo(1);

    // kill -9 the agent of rank 0, and start it again on its data directory.
    String first = before.placement().get(0).node();
    String second = before.placement().get(1).node();
    cluster.signal(first, "KILL");
    cluster.agentProcess(first).waitFor();
    restart(first);
    int steps0 = lines(out.resolve("steps-0")).size();
    awaitSteps(out, 0, steps0 + 5);

    // A clean stop (SIGTERM, as systemd or an upgrade does) of the other, and a start.
    Process p = cluster.agentProcess(second);
    p.destroy();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("agent %s stops on SIGTERM", second).isTrue();
    assertThat(cluster.agentLog(second)).contains("leaving 1 task(s) to the next agent");
    restart(second);
    int steps1 = lines(out.resolve("steps-1")).size();
    awaitSteps(out, 1, steps1 + 5);

    // Nothing restarted: same processes, counters never reset, same attempt, no requeue.
    assertThat(ProcessHandle.of(pid0).map(ProcessHandle::isAlive)).contains(true);
    assertThat(ProcessHandle.of(pid1).map(ProcessHandle::isAlive)).contains(true);
    assertThat(pid(out, 0)).isEqualTo(pid0);
    assertThat(pid(out, 1)).isEqualTo(pid1);
    JobView during = cluster.job(id);
    assertThat(during.state()).isEqualTo(JobState.RUNNING);
    assertThat(during.attempt()).isEqualTo(1);
    assertThat(during.requeues()).isZero();
    assertThat(during.startTime()).isEqualTo(before.startTime());
    assertThat(during.placement()).isEqualTo(before.placement());
    assertThat(during.eligibleTime()).isNull();
    for (String n : NODES) {
      assertThat(cluster.node(n).orElseThrow().state()).isEqualTo(NodeState.UP);
      assertThat(cluster.agentLog(n)).contains("adopted from the previous agent: RUNNING");
    }
    // The restarted agents serve the adopted tasks' logs.
    String log1 = cluster.get("/api/v1/jobs/" + id + "/logs?task=1");
    assertThat(log1).contains("step " + steps1);

    Files.writeString(out.resolve("stop"), "");
    cluster.waitState(id, JobState.FAILED, Duration.ofSeconds(60));
    JobView ended = cluster.job(id);
    assertThat(ended.exitCode()).as("rank 1's own exit code").isEqualTo(3);
    assertThat(ended.attempt()).isEqualTo(1);
    assertThat(ended.requeues()).isZero();
    assertContinuous(out.resolve("steps-0"));
    assertContinuous(out.resolve("steps-1"));
    assertThat(cluster.serverLog()).doesNotContain("re-registered (agent restarted)");
  }

  @Test
  void aTaskThatEndsWhileItsAgentIsDownIsReportedWithItsExitCode() throws Exception {
    Path out = Files.createDirectories(dir.resolve("down"));
    long id =
        cluster.submit(
            MultiNodeIT.job(List.of("/bin/sh", "-c", counter("stop", "5")), 1, null, out));
    cluster.waitState(id, JobState.RUNNING, Duration.ofSeconds(60));
    awaitSteps(out, 0, 3);
    String node = cluster.job(id).placement().get(0).node();

    cluster.signal(node, "KILL");
    cluster.agentProcess(node).waitFor();
    Files.writeString(out.resolve("stop"), "");
    Path exit = dir.resolve("agent-" + node).resolve("run").resolve(id + "-1-0").resolve("0.exit");
    TestCluster.waitFor(
        "the task's supervisor records its exit",
        Duration.ofSeconds(20),
        () -> Files.exists(exit),
        () -> "");
    restart(node);

    cluster.waitState(id, JobState.FAILED, Duration.ofSeconds(60));
    JobView ended = cluster.job(id);
    assertThat(ended.exitCode()).isEqualTo(5);
    assertThat(ended.attempt()).isEqualTo(1);
    assertThat(ended.requeues()).isZero();
    assertThat(cluster.agentLog(node))
        .contains("adopted from the previous agent: EXITED with code 5");
  }

  @Test
  void tasksLeftByAnAgentThatDoesNotComeBackAreKilledWhenItsLeaseEnds() throws Exception {
    Path out = Files.createDirectories(dir.resolve("gone"));
    long id =
        cluster.submit(
            MultiNodeIT.job(List.of("/bin/sh", "-c", counter("stop", "0")), 1, null, out));
    cluster.waitState(id, JobState.RUNNING, Duration.ofSeconds(60));
    awaitSteps(out, 0, 3);
    long pid = pid(out, 0);
    String node = cluster.job(id).placement().get(0).node();

    // Stopped cleanly, so it leaves its task running, but never started again.
    Process p = cluster.agentProcess(node);
    p.destroy();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    long stoppedAt = System.nanoTime();
    TestCluster.waitFor(
        "the fence watchdog kills the task left behind once the lease has run out",
        Duration.ofSeconds(30),
        () -> !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
        () -> "");
    long diedAfterMs = (System.nanoTime() - stoppedAt) / 1_000_000;
    assertThat(diedAfterMs).as("killed %d ms after the stop", diedAfterMs).isLessThan(15_000L);
    assertThat(Files.readString(dir.resolve("agent-" + node).resolve("fence").resolve("fenced")))
        .contains(id + "-1-0");
    TestCluster.waitFor(
        "the job runs again on the other node",
        Duration.ofSeconds(60),
        () -> cluster.job(id).state() == JobState.RUNNING && cluster.job(id).attempt() == 2,
        () -> cluster.job(id) + "\n" + cluster.serverLog());
    assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
        .as("attempt 1 is dead before attempt 2 runs")
        .isFalse();

    restart(node);
    Files.writeString(out.resolve("stop"), "");
    cluster.waitState(id, JobState.SUCCEEDED, Duration.ofSeconds(60));
  }

  /** Starts {@code node}'s agent again and waits until it has registered. */
  static void restart(String node) throws Exception {
    cluster.agent(node, 2 + NODES.indexOf(node), "2xEMU");
    TestCluster.waitFor(
        "agent " + node + " registers again",
        Duration.ofSeconds(60),
        () -> cluster.agentLog(node).contains("registered with"),
        () -> cluster.agentLog(node));
  }

  static void awaitSteps(Path out, int rank, int atLeast) throws InterruptedException {
    TestCluster.waitFor(
        "rank " + rank + " counts " + atLeast + " steps",
        Duration.ofSeconds(60),
        () -> lines(out.resolve("steps-" + rank)).size() >= atLeast,
        () -> cluster.serverLog());
  }

  static long pid(Path out, int rank) throws IOException {
    return Long.parseLong(Files.readString(out.resolve("pid-" + rank)).strip());
  }

  /** The counter went 1, 2, 3, ... without a reset or a gap. */
  static void assertContinuous(Path steps) {
    List<String> lines = lines(steps);
    assertThat(lines).isNotEmpty();
    for (int i = 0; i < lines.size(); i++) {
      assertThat(lines.get(i)).as("line %d of %s", i + 1, steps).isEqualTo(Integer.toString(i + 1));
    }
  }

  static List<String> lines(Path p) {
    return MultiNodeIT.lines(p);
  }
}
