package io.kairos.agent;

import static io.kairos.agent.Assignments.assignment;
import static io.kairos.agent.Assignments.script;
import static io.kairos.agent.Assignments.withKillSignal;
import static io.kairos.agent.Assignments.withTimeLimit;
import static io.kairos.agent.Assignments.withWarning;
import static io.kairos.agent.Processes.PROCESS_WAIT;
import static io.kairos.agent.Processes.awaitDead;
import static io.kairos.agent.Processes.awaitFile;
import static io.kairos.agent.Processes.awaitPid;
import static io.kairos.agent.Processes.lines;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskKill;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Signals a job chooses: the first signal of a stop and its own grace before SIGKILL, the warning
 * before the time limit (Slurm's {@code --signal}), and the immediate SIGKILL of {@link
 * TaskTable#killAllNow}. Real processes; time on a manual clock.
 */
class TaskTableSignalsTest {
  private static final Duration AGENT_GRACE = Duration.ofSeconds(10);

  @TempDir Path dataDir;

  private final ManualClock clock = new ManualClock();
  private final RecordingHooks hooks = new RecordingHooks();
  private TaskTable table;

  @BeforeEach
  void newTable() {
    table =
        new TaskTable(
            "n1",
            dataDir,
            AGENT_GRACE,
            0,
            Map.of("PATH", System.getenv("PATH")),
            new ProcessLauncher(),
            clock,
            () -> {},
            hooks);
  }

  @AfterEach
  void killLeftovers() {
    table.killAllNow(ExitReason.KILLED, "test over");
  }

  private Path dir(TaskAssignment a) {
    return LaunchSpec.taskDir(dataDir, TaskKey.of(a));
  }

  /**
   * A task that appends {@code got <signal>} to {@code got.txt} on each {@code signal} and carries
   * on, writing a line to {@code beats.txt} every 100 ms, until SIGKILL. {@code ready} appears once
   * the trap is set.
   */
  private static TaskAssignment noting(long jobId, String signal) {
    return script(
        jobId,
        "trap 'echo got "
            + signal
            + " >> got.txt' "
            + signal
            + "; touch ready; while :; do echo . >> beats.txt; sleep 0.1; done");
  }

  private void launchAndAwaitReady(TaskAssignment a) {
    table.launch(a);
    awaitFile(dir(a).resolve("ready"));
  }

  @ParameterizedTest(name = "SIG{0}")
  @CsvSource({"INT, 2", "HUP, 1", "USR1, 10", "USR2, 12"})
  void aKillSendsTheJobsKillSignalFirst(String signal, int number) throws IOException {
    assumeThat(Processes.ignoredByThisJvm(number))
        .as("SIG%s is ignored by this JVM, so its tasks cannot trap it", signal)
        .isFalse();
    // Checkpoints and exits on the signal, as a training script would.
    var a =
        withKillSignal(
            script(
                41,
                "trap 'echo got "
                    + signal
                    + " > got.txt; exit 0' "
                    + signal
                    + "; touch ready; while :; do sleep 0.1; done"),
            signal,
            2);
    launchAndAwaitReady(a);

    assertThat(table.kill(new TaskKill(41, 1, "cancelled"))).isEqualTo(1);
    TaskReport report = awaitExited(TaskKey.of(a));

    assertThat(lines(dir(a).resolve("got.txt"))).containsExactly("got " + signal);
    assertThat(report.exitCode()).as("its own exit, not a signal's").isZero();
    assertThat(report.reason()).isEqualTo(ExitReason.KILLED);
    assertThat(hooks.any("forceKilled")).isFalse();
  }

  @Test
  void aTaskGetsSigkillOnlyAfterItsOwnGrace() throws IOException {
    var a = withKillSignal(noting(42, "USR1"), "USR1", 2);
    var key = TaskKey.of(a);
    launchAndAwaitReady(a);

    table.kill(new TaskKill(42, 1, "cancelled"));
    awaitFile(dir(a).resolve("got.txt"));
    clock.advance(Duration.ofSeconds(2).minusMillis(1));
    table.tick();
    assertThat(table.isStopping(key)).isTrue();
    assertStillRunning(a);

    clock.advance(Duration.ofMillis(1));
    table.tick();
    TaskReport report = awaitExited(key);

    assertThat(report.exitCode()).as("128 + SIGKILL").isEqualTo(137);
    assertThat(report.reason()).isEqualTo(ExitReason.KILLED);
    assertThat(lines(dir(a).resolve("got.txt"))).containsExactly("got USR1");
    assertThat(hooks.calls).containsSubsequence("forceKilled 42-1-0", "ended 42-1-0");
  }

  @Test
  void theAgentGraceAppliesWhenTheJobGivesNone() throws IOException {
    var a = withKillSignal(noting(43, "USR1"), "USR1", 0);
    var key = TaskKey.of(a);
    launchAndAwaitReady(a);

    table.kill(new TaskKill(43, 1, "cancelled"));
    awaitFile(dir(a).resolve("got.txt"));
    clock.advance(AGENT_GRACE.minusMillis(1));
    table.tick();
    assertStillRunning(a);

    clock.advance(Duration.ofMillis(1));
    table.tick();

    assertThat(awaitExited(key).exitCode()).isEqualTo(137);
  }

  @Test
  void theTimeLimitStopsWithTheJobsKillSignalToo() throws IOException {
    var a = withTimeLimit(withKillSignal(noting(44, "USR2"), "USR2", 5), 60);
    var key = TaskKey.of(a);
    launchAndAwaitReady(a);

    clock.advance(Duration.ofSeconds(60));
    table.tick();
    awaitFile(dir(a).resolve("got.txt"));
    clock.advance(Duration.ofSeconds(5));
    table.tick();
    TaskReport report = awaitExited(key);

    assertThat(report.reason()).isEqualTo(ExitReason.TIME_LIMIT);
    assertThat(report.exitCode()).isEqualTo(137);
    assertThat(lines(dir(a).resolve("got.txt"))).containsExactly("got USR2");
  }

  @Test
  void theWarningSignalIsSentOnceAtItsTimeBeforeTheLimit() throws IOException {
    var a = withWarning(withTimeLimit(noting(45, "USR1"), 10), "USR1", 3);
    var key = TaskKey.of(a);
    Path got = dir(a).resolve("got.txt");
    launchAndAwaitReady(a);

    clock.advance(Duration.ofSeconds(6));
    table.tick();
    assertStillRunning(a);
    assertThat(lines(got)).as("6 s in, 4 s before the limit").isEmpty();

    clock.advance(Duration.ofSeconds(1));
    table.tick();
    awaitFile(got);
    table.tick();
    clock.advance(Duration.ofSeconds(2).plusMillis(999));
    table.tick();
    assertStillRunning(a);
    assertThat(lines(got)).as("once, whatever the ticks after it").containsExactly("got USR1");
    assertThat(table.isStopping(key)).isFalse();

    clock.advance(Duration.ofMillis(1));
    table.tick();
    TaskReport report = awaitExited(key);

    assertThat(report.reason()).isEqualTo(ExitReason.TIME_LIMIT);
    assertThat(report.exitCode()).as("128 + SIGTERM, the default stop signal").isEqualTo(143);
    assertThat(lines(got)).containsExactly("got USR1");
  }

  @Test
  void killAllNowKillsATaskThatIgnoresTheStopSignalWithoutWaitingForTheGrace() throws IOException {
    var a = script(46, "trap '' TERM; sleep 60 & echo $! > child.pid; wait");
    var key = TaskKey.of(a);
    table.launch(a);
    long child = awaitPid(dir(a).resolve("child.pid"));

    table.killAllNow(ExitReason.KILLED, "lease expired");
    TaskReport report = awaitExited(key);

    assertThat(report.exitCode()).as("128 + SIGKILL").isEqualTo(137);
    assertThat(report.reason()).isEqualTo(ExitReason.KILLED);
    assertThat(report.message()).isEqualTo("lease expired");
    assertThat(report.endedAtMs()).as("no time passed").isEqualTo(report.startedAtMs());
    assertThat(hooks.calls).contains("forceKilled 46-1-0");
    awaitDead(child);
  }

  @Test
  void killAllNowCutsShortTheGraceOfATaskAlreadyStopping() throws IOException {
    var a = withKillSignal(noting(47, "USR1"), "USR1", 600);
    var key = TaskKey.of(a);
    launchAndAwaitReady(a);
    table.kill(new TaskKill(47, 1, "cancelled"));
    awaitFile(dir(a).resolve("got.txt"));

    table.killAllNow(ExitReason.KILLED, "lease expired");
    TaskReport report = awaitExited(key);

    assertThat(report.exitCode()).isEqualTo(137);
    assertThat(report.message()).as("the first reason stays").contains("cancelled");
  }

  @Test
  void aKillOrWarningSignalNotOnTheListFailsTheLaunchNamingIt() {
    var badKill = withKillSignal(assignment(48, "sleep", "60"), "KILL", 0);
    var badWarning = withWarning(assignment(49, "sleep", "60"), "STOP", 60);

    table.launch(badKill);
    table.launch(badWarning);

    TaskReport kill = table.report(TaskKey.of(badKill)).orElseThrow();
    assertThat(kill.reason()).isEqualTo(ExitReason.LAUNCH_FAILED);
    assertThat(kill.message()).contains("killSignal").contains("KILL");
    TaskReport warning = table.report(TaskKey.of(badWarning)).orElseThrow();
    assertThat(warning.reason()).isEqualTo(ExitReason.LAUNCH_FAILED);
    assertThat(warning.message()).contains("warnSignal").contains("STOP");
    assertThat(hooks.any("started")).isFalse();
  }

  @Test
  void killAllNowKillsEveryTaskEvenAfterAnAssignmentWithABadSignal() {
    table.launch(withKillSignal(assignment(50, "sleep", "60"), "KILL", 0));
    var good = assignment(51, "sleep", "60");
    table.launch(good);

    table.killAllNow(ExitReason.KILLED, "fenced");

    // SIGTERM and SIGKILL go out together: sleep may die of either.
    assertThat(awaitExited(TaskKey.of(good)).exitCode()).isIn(137, 143);
  }

  /** The task carries on: it writes more beats, and is reported RUNNING. */
  private void assertStillRunning(TaskAssignment a) throws IOException {
    Path beats = dir(a).resolve("beats.txt");
    int seen = lines(beats).size();
    await()
        .atMost(PROCESS_WAIT)
        .alias(a.jobId() + " still running")
        .until(() -> lines(beats).size() >= seen + 2);
    assertThat(table.report(TaskKey.of(a)).orElseThrow().status()).isEqualTo(TaskStatus.RUNNING);
  }

  private TaskReport awaitExited(TaskKey key) {
    await()
        .atMost(PROCESS_WAIT)
        .until(() -> table.report(key).orElseThrow().status() == TaskStatus.EXITED);
    return table.report(key).orElseThrow();
  }
}
