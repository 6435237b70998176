package io.kairos.agent;

import static io.kairos.agent.Assignments.script;
import static io.kairos.agent.Processes.awaitFile;
import static io.kairos.agent.Processes.lines;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskCheckpoint;
import io.kairos.protocol.agent.TaskKill;
import io.kairos.protocol.agent.TaskStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A checkpointing job's task: its private checkpoint directory (the same for every attempt), its
 * {@code KAIROS_CHECKPOINT_*} variables, and a preemption's checkpoint request, which signals the
 * task once without stopping it; the stop comes after. Real processes; time on a manual clock.
 */
class TaskCheckpointsTest {
  static final TaskCheckpoint POLICY = new TaskCheckpoint("USR1", 45, 600, 2, 120L);

  @TempDir Path dataDir;

  private final ManualClock clock = new ManualClock();
  private TaskTable table;

  @BeforeEach
  void newTable() {
    table =
        new TaskTable(
            "n1",
            dataDir,
            Duration.ofSeconds(10),
            0,
            Map.of("PATH", System.getenv("PATH")),
            new ProcessLauncher(),
            clock,
            () -> {},
            TaskHooks.NONE);
  }

  @AfterEach
  void killLeftovers() {
    table.killAllNow(ExitReason.KILLED, "test over");
  }

  private Path dir(TaskAssignment a) {
    return LaunchSpec.taskDir(dataDir, TaskKey.of(a));
  }

  @Test
  void aCheckpointingTaskGetsItsPrivateDirectoryAndVariables() throws Exception {
    var a =
        script(51, "env | grep '^KAIROS_CHECKPOINT\\|^KAIROS_RESTORE' | sort > env.txt")
            .withCheckpoint(POLICY);
    table.launch(a);
    awaitFile(dir(a).resolve("env.txt"));
    await().until(() -> lines(dir(a).resolve("env.txt")).size() >= 7);
    Path ckpt = dataDir.toAbsolutePath().resolve("checkpoints").resolve("51");
    assertThat(lines(dir(a).resolve("env.txt")))
        .containsExactly(
            "KAIROS_CHECKPOINT_DIR=" + ckpt,
            "KAIROS_CHECKPOINT_EVERY=600",
            "KAIROS_CHECKPOINT_KEEP=2",
            "KAIROS_CHECKPOINT_SIGNAL=USR1",
            "KAIROS_CHECKPOINT_TIMEOUT=45",
            "KAIROS_CHECKPOINT_URL=file://" + ckpt,
            "KAIROS_RESTORE_STEP=120");
    assertThat(Files.isDirectory(ckpt)).isTrue();
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(ckpt)))
        .as("private to the job's owner")
        .isEqualTo("rwx------");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(ckpt.getParent())))
        .as("nobody lists the other jobs' directories")
        .isEqualTo("rwx--x--x");
  }

  @Test
  void aSymbolicLinkPlantedAsTheDirectoryIsRefused() throws Exception {
    Path root = dataDir.toAbsolutePath().resolve("checkpoints");
    Files.createDirectories(root);
    Files.createSymbolicLink(root.resolve("52"), Files.createTempDirectory("elsewhere"));
    var a = script(52, "touch ran").withCheckpoint(POLICY);
    table.launch(a);
    var report =
        await()
            .until(
                () -> table.report(TaskKey.of(a)).orElseThrow(),
                r -> r.status() == TaskStatus.EXITED);
    assertThat(report.reason()).isEqualTo(ExitReason.LAUNCH_FAILED);
    assertThat(report.message()).contains("not a directory");
    assertThat(Files.exists(dir(a).resolve("ran"))).isFalse();
  }

  @Test
  void aJobWithoutCheckpointsGetsNoneOfTheVariables() throws Exception {
    var a = script(53, "env | grep -c '^KAIROS_CHECKPOINT' > n.txt; true");
    table.launch(a);
    awaitFile(dir(a).resolve("n.txt"));
    await().until(() -> !lines(dir(a).resolve("n.txt")).isEmpty());
    assertThat(lines(dir(a).resolve("n.txt"))).containsExactly("0");
    assertThat(Files.exists(dataDir.resolve("checkpoints"))).isFalse();
  }

  @Test
  void aCheckpointRequestSignalsOnceAndDoesNotStopThenTheStopDoes() throws Exception {
    var a =
        script(
                54,
                "trap 'echo asked >> got.txt' USR1; trap 'echo term >> got.txt; exit 143' TERM;"
                    + " touch ready; while :; do sleep 0.1; done")
            .withCheckpoint(POLICY);
    table.launch(a);
    awaitFile(dir(a).resolve("ready"));

    var ask = TaskKill.askCheckpoint(54, 1, "USR1", "preempted by job 9");
    assertThat(table.kill(ask)).isEqualTo(1);
    assertThat(table.kill(ask)).as("once per attempt").isZero();
    awaitFile(dir(a).resolve("got.txt"));
    await().until(() -> lines(dir(a).resolve("got.txt")).contains("asked"));
    clock.advance(Duration.ofMinutes(5));
    table.tick();
    assertThat(table.report(TaskKey.of(a)).orElseThrow().status())
        .as("still running: a request is no stop")
        .isEqualTo(TaskStatus.RUNNING);

    assertThat(table.kill(new TaskKill(54, 1, "preempted by job 9", 5L))).isEqualTo(1);
    var report =
        await()
            .until(
                () -> table.report(TaskKey.of(a)).orElseThrow(),
                r -> r.status() == TaskStatus.EXITED);
    assertThat(report.reason()).isEqualTo(ExitReason.KILLED);
    assertThat(lines(dir(a).resolve("got.txt"))).containsExactly("asked", "term");
  }
}
