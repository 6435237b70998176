package io.kairos.agent.isolate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kairos.agent.TaskKey;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A new agent that adopts its predecessor's tasks keeps them and the lease they run under: the
 * orphans it does not adopt die, the ones it adopts live, and the watchdog it starts still kills
 * them when the old lease runs out (unless the new agent renews it first).
 */
class AdoptedLeaseTest {
  @TempDir Path dataDir;
  final List<Process> started = new ArrayList<>();
  FenceWatchdog watchdog;

  @AfterEach
  void stopAll() {
    if (watchdog != null) {
      watchdog.close();
    }
    started.forEach(Process::destroyForcibly);
  }

  Process sleeper() throws Exception {
    Process p = new ProcessBuilder("sleep", "60").start();
    started.add(p);
    return p;
  }

  @Test
  void theNewAgentKeepsTheOldDeadlineAndOnlyTheTasksItAdopts() throws Exception {
    var old = LeaseFile.forThisAgent(dataDir);
    old.renewUntil(System.nanoTime() + Duration.ofSeconds(3).toNanos(), 41);
    Process adopted = sleeper();
    Process orphan = sleeper();
    old.register(new TaskKey(1, 1, 0), adopted.toHandle(), Optional.empty());
    old.register(new TaskKey(2, 1, 0), orphan.toHandle(), Optional.empty());
    long deadline = FenceFiles.readLease(dataDir).orElseThrow().deadlineNanos();

    // The new agent: orphans out, the lease continued, a watchdog of its own.
    List<Orphans.Killed> killed = Orphans.killAllBut(dataDir, Set.of("1-1-0"));
    assertThat(killed).extracting(Orphans.Killed::what).containsExactly("2-1-0");
    await().atMost(Duration.ofSeconds(5)).until(() -> !orphan.isAlive());
    assertThat(adopted.isAlive()).isTrue();
    var lease = LeaseFile.continuing(dataDir);
    var continued = FenceFiles.readLease(dataDir).orElseThrow();
    assertThat(continued.deadlineNanos()).isEqualTo(deadline);
    assertThat(continued.epoch()).isEqualTo(41);
    assertThat(continued.agent().pid()).isEqualTo(ProcessHandle.current().pid());
    assertThat(lease.cgroupsOf(new TaskKey(1, 1, 0))).isEmpty();

    // Not renewed: the old lease runs out and the watchdog kills the adopted task.
    watchdog = FenceWatchdog.start(dataDir);
    await().atMost(Duration.ofSeconds(15)).until(() -> !adopted.isAlive());
    assertThat(System.nanoTime()).isGreaterThan(deadline);
  }

  @Test
  void aContinuedLeaseRenewedInTimeKeepsTheAdoptedTaskAlive() throws Exception {
    var old = LeaseFile.forThisAgent(dataDir);
    old.renewFor(Duration.ofSeconds(2), 5);
    Process adopted = sleeper();
    old.register(new TaskKey(3, 1, 0), adopted.toHandle(), Optional.empty());

    Orphans.killAllBut(dataDir, Set.of("3-1-0"));
    var lease = LeaseFile.continuing(dataDir);
    watchdog = FenceWatchdog.start(dataDir);
    for (int i = 0; i < 15; i++) {
      lease.renewFor(Duration.ofSeconds(2), 6); // the new agent registered and heartbeats
      Thread.sleep(200);
    }
    assertThat(adopted.isAlive()).as("renewed past the old deadline").isTrue();
  }
}
