package io.kairos.agent;

import static io.kairos.agent.Assignments.assignment;
import static io.kairos.agent.Assignments.script;
import static io.kairos.agent.Assignments.withBarrier;
import static io.kairos.agent.Processes.PROCESS_WAIT;
import static io.kairos.agent.Processes.awaitFile;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskKill;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The task table's hooks: the node's health before each start, the isolation that may rewrite the
 * spec, and the calls around the process's life. Real processes; time on a manual clock.
 */
class TaskTableHooksTest {
  private static final Duration GRACE = Duration.ofSeconds(10);

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

  private Path dir(TaskAssignment a) {
    return LaunchSpec.taskDir(dataDir, TaskKey.of(a));
  }

  @Test
  void anUnhealthyNodeRefusesATaskWithoutStartingIt() {
    hooks.problems = List.of("GPU 1: ECC", "GPU 3: fell off the bus");
    var a = script(51, "touch started; sleep 60");
    var key = TaskKey.of(a);

    assertThat(table.launch(a)).isTrue();

    TaskReport report = table.report(key).orElseThrow();
    assertThat(report.status()).isEqualTo(TaskStatus.EXITED);
    assertThat(report.reason()).isEqualTo(ExitReason.NODE_UNHEALTHY);
    assertThat(report.message()).contains("GPU 1: ECC").contains("GPU 3: fell off the bus");
    assertThat(report.startedAtMs()).isNull();
    assertThat(report.endedAtMs()).isEqualTo(clock.instant().toEpochMilli());
    assertThat(hooks.calls).containsExactly("health");
    assertThat(changes.get()).isEqualTo(1);
    assertThat(dir(a).resolve("started")).doesNotExist();
  }

  @Test
  void anUnhealthyNodeRefusesABarrierTaskRatherThanHoldingItReady() {
    hooks.problems = List.of("GPU 1: ECC");
    var a = withBarrier(script(52, "true"));

    table.launch(a);

    TaskReport report = table.report(TaskKey.of(a)).orElseThrow();
    assertThat(report.status()).isEqualTo(TaskStatus.EXITED);
    assertThat(report.reason()).isEqualTo(ExitReason.NODE_UNHEALTHY);
  }

  @Test
  void aHealthyNodeIsCheckedBeforeEachStart() {
    table.launch(script(53, "true"));
    table.launch(script(54, "true"));

    assertThat(hooks.calls).filteredOn("health"::equals).hasSize(2);
    assertThat(hooks.calls.getFirst()).isEqualTo("health");
  }

  @Test
  void theSpecTheIsolationReturnsIsWhatStarts() throws IOException {
    hooks.wrap =
        argv -> {
          var wrapped = new ArrayList<>(List.of("/usr/bin/env", "MARKER=1"));
          wrapped.addAll(argv);
          return wrapped;
        };
    var a = script(55, "echo \"marker=$MARKER\"");

    table.launch(a);
    TaskReport report = awaitExited(TaskKey.of(a));

    assertThat(report.exitCode()).isZero();
    assertThat(Files.readString(dir(a).resolve("stdout.log"))).isEqualTo("marker=1\n");
  }

  @Test
  void aTaskWhoseIsolationFailsIsNotStartedAndSaysWhy() {
    hooks.isolationFailure = "cgroup kairos/55: permission denied";
    var a = script(56, "touch started");

    table.launch(a);

    TaskReport report = table.report(TaskKey.of(a)).orElseThrow();
    assertThat(report.status()).isEqualTo(TaskStatus.EXITED);
    assertThat(report.reason()).isEqualTo(ExitReason.LAUNCH_FAILED);
    assertThat(report.message()).contains("permission denied");
    assertThat(report.exitCode()).isEqualTo(TaskTable.LAUNCH_FAILED_EXIT_CODE);
    assertThat(hooks.any("started")).isFalse();
    assertThat(dir(a).resolve("started")).doesNotExist();
  }

  @Test
  void aTaskIsolatedButNotStartedIsEndedSoItsIsolationIsUndone() {
    var a = assignment(59, "/no/such/program");

    table.launch(a);

    assertThat(table.report(TaskKey.of(a)).orElseThrow().reason())
        .isEqualTo(ExitReason.LAUNCH_FAILED);
    assertThat(hooks.calls).containsExactly("health", "isolate 59-1-0", "ended 59-1-0");
  }

  @Test
  void theHooksSeeATaskStartAndEndInOrder() {
    var a = script(57, "exit 0");

    table.launch(a);
    awaitExited(TaskKey.of(a));

    assertThat(hooks.calls)
        .containsExactly("health", "isolate 57-1-0", "started 57-1-0", "ended 57-1-0");
  }

  @Test
  void forceKilledIsCalledWhenTheGraceRunsOut() {
    var a = script(58, "trap '' TERM; touch ready; while :; do sleep 0.1; done");
    var key = TaskKey.of(a);
    table.launch(a);
    awaitFile(dir(a).resolve("ready"));

    table.kill(new TaskKill(58, 1, "cancelled"));
    clock.advance(GRACE.minusMillis(1));
    table.tick();
    assertThat(hooks.any("forceKilled")).isFalse();
    clock.advance(Duration.ofMillis(1));
    table.tick();
    awaitExited(key);

    assertThat(hooks.calls)
        .containsExactly(
            "health", "isolate 58-1-0", "started 58-1-0", "forceKilled 58-1-0", "ended 58-1-0");
  }

  private TaskReport awaitExited(TaskKey key) {
    await()
        .atMost(PROCESS_WAIT)
        .until(() -> table.report(key).orElseThrow().status() == TaskStatus.EXITED);
    return table.report(key).orElseThrow();
  }
}
