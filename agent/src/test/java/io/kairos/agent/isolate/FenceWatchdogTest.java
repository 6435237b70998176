package io.kairos.agent.isolate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kairos.agent.TaskKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The watchdog as a real process guarding real process trees. */
class FenceWatchdogTest {
  @TempDir Path dataDir;
  final List<Process> started = new ArrayList<>();
  FenceWatchdog watchdog;

  @AfterEach
  void stopAll() {
    if (watchdog != null) {
      watchdog.close();
    }
    for (Process p : started) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
  }

  Process spawn(String... argv) throws Exception {
    Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
    started.add(p);
    return p;
  }

  /** sh -c 'sleep 60 & sleep 60': a root with a child, once both have started. */
  List<ProcessHandle> tree() throws Exception {
    Process p = spawn("/bin/sh", "-c", "sleep 60 & sleep 60");
    await().atMost(Duration.ofSeconds(5)).until(() -> p.descendants().count() == 2);
    var all = new ArrayList<ProcessHandle>(List.of(p.toHandle()));
    p.descendants().forEach(all::add);
    return all;
  }

  /** Alive and not a zombie: a killed grandchild waits for init to reap it. */
  static boolean running(ProcessHandle h) {
    return ProcessRef.of(h).map(ProcessRef::isAlive).orElse(false);
  }

  @Test
  void systemNanoTimeIsTheSameClockInAnotherJvm() throws Exception {
    String java = ProcessHandle.current().info().command().orElseThrow();
    Path src =
        Files.writeString(
            dataDir.resolve("Now.java"),
            "class Now { public static void main(String[] a) { System.out.println(System.nanoTime()); } }");
    long before = System.nanoTime();
    Process p = new ProcessBuilder(java, src.toString()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes()).strip();
    p.waitFor();
    long after = System.nanoTime();
    long child = Long.parseLong(out);
    assertThat(child).isBetween(before, after);
  }

  @Test
  void renewedLeaseKeepsTasksAliveAndExpiryKillsTheWholeTree() throws Exception {
    var lease = LeaseFile.forThisAgent(dataDir);
    lease.renewFor(Duration.ofSeconds(1), 1);
    List<ProcessHandle> tree = tree();
    lease.register(new TaskKey(7, 0, 0), tree.getFirst(), Optional.empty());
    watchdog = FenceWatchdog.start(dataDir);

    // 1. Renewed every 200 ms for 2 s: nothing dies.
    for (int i = 0; i < 10; i++) {
      Thread.sleep(200);
      lease.renewFor(Duration.ofSeconds(1), 1);
    }
    assertThat(tree).allMatch(ProcessHandle::isAlive);
    assertThat(FenceFiles.fencedFile(dataDir)).doesNotExist();

    // 2. Renewals stop: all dead within the lease plus 500 ms.
    long stoppedAt = System.nanoTime();
    await()
        .atMost(Duration.ofMillis(1_500))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> tree.stream().noneMatch(FenceWatchdogTest::running));
    assertThat(Duration.ofNanos(System.nanoTime() - stoppedAt))
        .isLessThan(Duration.ofMillis(1_500));
    await().atMost(Duration.ofSeconds(2)).until(() -> Files.exists(FenceFiles.fencedFile(dataDir)));
    assertThat(Files.readString(FenceFiles.fencedFile(dataDir)))
        .contains("7-0-0", Long.toString(tree.getFirst().pid()));

    // 3. It keeps watching: a new lease and a new task are left alone.
    lease.renewFor(Duration.ofSeconds(5), 2);
    Process next = spawn("sleep", "60");
    lease.register(new TaskKey(8, 0, 0), next.toHandle(), Optional.empty());
    Thread.sleep(500);
    assertThat(next.isAlive()).isTrue();
    assertThat(watchdog.process()).hasValueSatisfying(h -> assertThat(h.isAlive()).isTrue());
  }

  /**
   * Two registrations under an expired lease, read in the same scan: the task is killed, and the
   * pid that now belongs to another process (its start time differs) is not. The task's death and
   * the fence record, written once the scan has gone through every registration, show that the
   * stranger's registration was looked at.
   */
  @Test
  void aPidWhoseStartTimeDoesNotMatchIsNotKilled() throws Exception {
    var lease = LeaseFile.forThisAgent(dataDir);
    Process stranger = spawn("sleep", "60");
    var ref = ProcessRef.of(stranger.toHandle()).orElseThrow();
    // Registered as if an earlier process had had this pid.
    FenceFiles.writeRegistration(
        dataDir,
        new FenceFiles.Registration(
            "9-0-0", new ProcessRef(ref.pid(), ref.startTicks() - 1), List.of()));
    Process task = spawn("sleep", "60");
    lease.register(new TaskKey(9, 0, 1), task.toHandle(), Optional.empty());
    lease.expireNow(1);
    watchdog = FenceWatchdog.start(dataDir);

    assertThat(task.waitFor(5, TimeUnit.SECONDS)).as("the registered task is killed").isTrue();
    await().atMost(Duration.ofSeconds(2)).until(() -> Files.exists(FenceFiles.fencedFile(dataDir)));
    String fenced = Files.readString(FenceFiles.fencedFile(dataDir));
    assertThat(fenced).contains("9-0-1 pids [" + task.pid() + "]");
    assertThat(fenced).doesNotContain("9-0-0").doesNotContain(Long.toString(stranger.pid()));
    assertThat(stranger.isAlive()).isTrue();
  }

  @Test
  void watchdogExitsWhenTheAgentIsGoneAndNothingIsLeft() throws Exception {
    Process standInAgent = spawn("sleep", "60");
    var lease = new LeaseFile(dataDir, standInAgent.toHandle());
    lease.renewFor(Duration.ofMillis(300), 1);
    Process task = spawn("sleep", "60");
    lease.register(new TaskKey(10, 0, 0), task.toHandle(), Optional.empty());
    watchdog = FenceWatchdog.start(dataDir);
    ProcessHandle w = watchdog.process().orElseThrow();

    // The lease expires: the task dies, but the agent lives, so the watchdog stays.
    assertThat(task.waitFor(5, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(300);
    assertThat(w.isAlive()).isTrue();

    standInAgent.destroyForcibly().waitFor();
    assertThat(w.onExit().get(5, TimeUnit.SECONDS).isAlive()).isFalse();
  }

  @Test
  void watchdogIsRestartedWhenItDies() throws Exception {
    LeaseFile.forThisAgent(dataDir).renewFor(Duration.ofSeconds(30), 1);
    watchdog = FenceWatchdog.start(dataDir);
    ProcessHandle first = watchdog.process().orElseThrow();
    first.destroyForcibly();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> watchdog.process().map(h -> h.pid() != first.pid() && h.isAlive()).orElse(false));
  }

  @Test
  void orphansKillAllKillsTheOldWatchdogAndLeftoverTasks() throws Exception {
    var lease = LeaseFile.forThisAgent(dataDir);
    lease.renewFor(Duration.ofSeconds(60), 1);
    List<ProcessHandle> tree = tree();
    lease.register(new TaskKey(11, 0, 0), tree.getFirst(), Optional.empty());
    Process gone = spawn("true");
    gone.waitFor();
    FenceFiles.writeRegistration(
        dataDir, new FenceFiles.Registration("12-0-0", new ProcessRef(gone.pid(), 1), List.of()));
    var old = FenceWatchdog.start(dataDir);
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> Files.exists(FenceFiles.watchdogFile(dataDir)));
    ProcessHandle oldWatchdog = old.process().orElseThrow();
    old.close(); // only so it is not restarted; its process is killed by Orphans below
    // close() stopped it already; start a fresh one that Orphans must find through its file.
    var again = FenceWatchdog.start(dataDir);
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                FenceFiles.readProcess(FenceFiles.watchdogFile(dataDir))
                    .map(r -> r.pid() == again.process().orElseThrow().pid())
                    .orElse(false));
    ProcessHandle running = again.process().orElseThrow();
    assertThat(oldWatchdog.isAlive()).isFalse();

    List<Orphans.Killed> killed = Orphans.killAll(dataDir);

    assertThat(killed).extracting(Orphans.Killed::what).containsExactly("watchdog", "11-0-0");
    assertThat(killed.get(1).pids()).hasSize(3); // sh and its two sleeps
    await().atMost(Duration.ofSeconds(5)).until(() -> !running.isAlive());
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> tree.stream().noneMatch(FenceWatchdogTest::running));
    assertThat(FenceFiles.readRegistrations(dataDir)).isEmpty();
    again.close();
  }
}
