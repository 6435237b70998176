package io.kairos.agent;

import static io.kairos.agent.Assignments.assignment;
import static io.kairos.agent.Assignments.script;
import static io.kairos.agent.Assignments.withBarrier;
import static io.kairos.agent.Assignments.withTimeLimit;
import static io.kairos.agent.Processes.PROCESS_WAIT;
import static io.kairos.agent.Processes.awaitFile;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskKill;
import io.kairos.protocol.agent.TaskRef;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gang barrier: a task whose assignment has {@code barrier} is prepared and held READY, its
 * process not started, until {@link TaskTable#go}. Real processes; limits on a manual clock.
 */
class TaskTableBarrierTest {
  private static final Duration GRACE = Duration.ofSeconds(10);

  /** How long a test watches for a process that must not start. */
  private static final Duration NOT_STARTED_FOR = Duration.ofMillis(300);

  @TempDir Path dataDir;

  private final ManualClock clock = new ManualClock();
  private final AtomicInteger changes = new AtomicInteger();
  private final RecordingHooks hooks = new RecordingHooks();
  private TaskTable table;

  @BeforeEach
  void newTable() {
    table =
        new TaskTable(
            "n1",
            dataDir,
            GRACE,
            0,
            Map.of("PATH", System.getenv("PATH")),
            new ProcessLauncher(),
            clock,
            changes::incrementAndGet,
            hooks);
  }

  @AfterEach
  void killLeftovers() {
    table.killAllNow(ExitReason.KILLED, "test over");
  }

  /**
   * A barrier task that touches {@code started} in its task directory, then becomes {@code sleep}
   * (an exec, not a child: a child forked just as the test ends could escape the kill of the tree).
   */
  private static TaskAssignment marking(long jobId) {
    return withBarrier(script(jobId, "touch started; exec sleep 60"));
  }

  private Path marker(TaskAssignment a) {
    return LaunchSpec.taskDir(dataDir, TaskKey.of(a)).resolve("started");
  }

  private static TaskRef ref(TaskAssignment a) {
    return new TaskRef(a.jobId(), a.attempt(), a.task());
  }

  @Test
  void aBarrierTaskIsHeldReadyWithoutAProcess() {
    var a = marking(31);
    var key = TaskKey.of(a);

    assertThat(table.launch(a)).isTrue();

    TaskReport report = table.report(key).orElseThrow();
    assertThat(report.status()).isEqualTo(TaskStatus.READY);
    assertThat(report.startedAtMs()).isNull();
    assertThat(report.exitCode()).isNull();
    assertThat(table.isActive(key)).isTrue();
    assertThat(changes.get()).as("READY is news for the next heartbeat").isEqualTo(1);
    assertThat(hooks.any("isolate")).as("isolated only when it starts").isFalse();
    assertThat(hooks.any("started")).isFalse();
    assertNeverStarts(a);
  }

  @Test
  void goStartsAReadyTask() {
    var a = marking(32);
    var key = TaskKey.of(a);
    table.launch(a);
    clock.advance(Duration.ofSeconds(5));

    assertThat(table.go(ref(a))).isTrue();

    awaitFile(marker(a));
    TaskReport report = table.report(key).orElseThrow();
    assertThat(report.status()).isEqualTo(TaskStatus.RUNNING);
    assertThat(report.startedAtMs()).isEqualTo(clock.instant().toEpochMilli());
    assertThat(hooks.calls).containsExactly("health", "isolate 32-1-0", "started 32-1-0");
    assertThat(changes.get()).as("READY, then RUNNING").isEqualTo(2);
  }

  @Test
  void goForATaskNotHeldIsRefused() {
    table.launch(marking(33));

    assertThat(table.go(new TaskRef(99, 1, 0))).isFalse();
    assertThat(table.go(new TaskRef(33, 2, 0))).as("another attempt").isFalse();
    assertThat(table.go(new TaskRef(33, 1, 1))).as("another task").isFalse();

    assertThat(table.report(new TaskKey(33, 1, 0)).orElseThrow().status())
        .isEqualTo(TaskStatus.READY);
  }

  @Test
  void goForATaskThatIsNotReadyIsRefused() {
    var running = assignment(34, "sleep", "60");
    table.launch(running);
    var released = marking(35);
    table.launch(released);
    table.go(ref(released));

    assertThat(table.go(ref(running))).as("a task without a barrier").isFalse();
    assertThat(table.go(ref(released))).as("a second go").isFalse();

    assertThat(hooks.calls).filteredOn(c -> c.startsWith("started")).hasSize(2);
  }

  @Test
  void aRepeatedLaunchOfAReadyTaskIsIgnoredAndDoesNotStartIt() {
    var a = marking(36);
    table.launch(a);

    assertThat(table.launch(a)).isFalse();

    assertThat(table.report(TaskKey.of(a)).orElseThrow().status()).isEqualTo(TaskStatus.READY);
    assertNeverStarts(a);
  }

  @Test
  void aReadyTaskRefusedAtTheBarrierEndsUnhealthyWithoutStarting() throws Exception {
    var a = marking(38);
    table.launch(a);

    assertThat(table.refuse(ref(a), List.of("GPU 1: ECC errors rose 0 -> 2"))).isTrue();

    TaskReport report = table.report(TaskKey.of(a)).orElseThrow();
    assertThat(report.status()).isEqualTo(TaskStatus.EXITED);
    assertThat(report.reason()).isEqualTo(ExitReason.NODE_UNHEALTHY);
    assertThat(report.message()).contains("ECC");
    assertThat(table.go(ref(a))).as("go after the refusal").isFalse();
    assertThat(table.refuse(ref(a), List.of("again"))).as("a second refusal").isFalse();
    Thread.sleep(NOT_STARTED_FOR.toMillis());
    assertThat(marker(a)).doesNotExist();
  }

  @Test
  void aReadyTaskThatIsKilledEndsWithoutEverStarting() {
    var a = marking(37);
    var key = TaskKey.of(a);
    table.launch(a);
    clock.advance(Duration.ofSeconds(3));

    assertThat(table.kill(new TaskKill(37, 1, "cancelled by alice"))).isEqualTo(1);

    TaskReport report = table.report(key).orElseThrow();
    assertThat(report.status())
        .as("at once: there is no process to wait for")
        .isEqualTo(TaskStatus.EXITED);
    assertThat(report.reason()).isEqualTo(ExitReason.KILLED);
    assertThat(report.message()).contains("cancelled by alice");
    assertThat(report.startedAtMs()).isNull();
    assertThat(report.endedAtMs()).isEqualTo(clock.instant().toEpochMilli());
    assertThat(table.go(ref(a))).as("go after the kill").isFalse();
    assertThat(hooks.any("started")).isFalse();
    assertNeverStarts(a);
    assertThat(table.forget(ref(a))).as("it is an exit like any other").isTrue();
  }

  @Test
  void killAllAndKillAllNowEndReadyTasksWithoutStartingThem() {
    var a = marking(38);
    table.launch(a);
    table.killAll(ExitReason.KILLED, "fenced");
    var b = marking(39);
    table.launch(b);
    table.killAllNow(ExitReason.KILLED, "lease expired");

    for (var x : new TaskAssignment[] {a, b}) {
      TaskReport report = table.report(TaskKey.of(x)).orElseThrow();
      assertThat(report.status()).isEqualTo(TaskStatus.EXITED);
      assertThat(report.reason()).isEqualTo(ExitReason.KILLED);
      assertThat(report.startedAtMs()).isNull();
      assertThat(table.go(ref(x))).isFalse();
    }
    assertThat(table.report(TaskKey.of(a)).orElseThrow().message()).isEqualTo("fenced");
    assertThat(table.report(TaskKey.of(b)).orElseThrow().message()).isEqualTo("lease expired");
    assertThat(hooks.any("started")).isFalse();
    assertNeverStarts(a);
    assertNeverStarts(b);
  }

  @Test
  void theTimeLimitCountsFromGoNotFromReady() {
    var a = withTimeLimit(marking(40), 30);
    var key = TaskKey.of(a);
    table.launch(a);
    clock.advance(Duration.ofSeconds(100));
    table.tick();
    assertThat(table.report(key).orElseThrow().status())
        .as("READY past its time limit")
        .isEqualTo(TaskStatus.READY);

    table.go(ref(a));
    awaitFile(marker(a));
    clock.advance(Duration.ofSeconds(29));
    table.tick();
    assertThat(table.isStopping(key)).as("29 s after go, of a 30 s limit").isFalse();

    clock.advance(Duration.ofSeconds(1));
    table.tick();
    TaskReport report = awaitExited(key);

    assertThat(report.reason()).isEqualTo(ExitReason.TIME_LIMIT);
    assertThat(report.endedAtMs() - report.startedAtMs()).isEqualTo(30_000);
  }

  /** The task's process does not start: its marker does not appear for a while. */
  private void assertNeverStarts(TaskAssignment a) {
    Path marker = marker(a);
    await()
        .during(NOT_STARTED_FOR)
        .atMost(NOT_STARTED_FOR.multipliedBy(3))
        .alias(marker + " never appears")
        .until(() -> !Files.exists(marker));
  }

  private TaskReport awaitExited(TaskKey key) {
    await()
        .atMost(PROCESS_WAIT)
        .until(() -> table.report(key).orElseThrow().status() == TaskStatus.EXITED);
    return table.report(key).orElseThrow();
  }
}
