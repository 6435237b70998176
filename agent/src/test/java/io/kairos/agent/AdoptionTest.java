package io.kairos.agent;

import static io.kairos.agent.Assignments.script;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kairos.agent.account.Account;
import io.kairos.agent.account.Nss;
import io.kairos.agent.account.TaskOwners;
import io.kairos.agent.isolate.ProcessRef;
import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskKill;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tasks outlive their task table (the agent's) under their supervisors, and a new table on the same
 * data directory adopts them: running ones keep their pid and are watched, stopped and reported
 * again; one that ended meanwhile is reported with the status its supervisor recorded. A record
 * naming a process that is not its supervisor (a reused pid, a forged record), or one another
 * account could have written, is never adopted and its pid never signalled.
 */
class AdoptionTest {
  @TempDir Path dir;
  Path dataDir;
  final List<TaskTable> tables = new ArrayList<>();
  final List<Process> strangers = new ArrayList<>();

  @BeforeEach
  void setUp() throws IOException {
    dataDir = dir.resolve("agent");
    AgentFiles.secure(dataDir, false);
  }

  @AfterEach
  void tearDown() {
    for (TaskTable t : tables) {
      t.killAllNow(ExitReason.KILLED, "test over");
    }
    strangers.forEach(Process::destroyForcibly);
  }

  /** An agent's table whose tasks run as this process's account, under supervisors. */
  TaskTable table() {
    var owners =
        new TaskOwners("n1", TaskOwners.thisProcess(), true, Nss.system(InstantSource.system()));
    TaskHooks hooks =
        new TaskHooks() {
          @Override
          public Account owner(TaskAssignment a) throws IOException {
            return owners.ownerOf(a.jobId(), null);
          }
        };
    var table =
        new TaskTable(
            "n1",
            dataDir,
            Duration.ofSeconds(5),
            0,
            Map.of("PATH", "/usr/bin:/bin"),
            new ProcessLauncher(),
            InstantSource.system(),
            () -> {},
            hooks);
    tables.add(table);
    return table;
  }

  /** A task that writes its pid, then waits for {@code go} and exits with {@code code}. */
  TaskAssignment waiting(long job, int code) {
    return script(
        job,
        "echo $$ > "
            + dir.resolve("pid-" + job)
            + "; while [ ! -f "
            + dir.resolve("go-" + job)
            + " ]; do sleep 0.05; done; exit "
            + code);
  }

  static TaskReport awaitStatus(TaskTable table, TaskKey key, TaskStatus status) {
    return await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> table.report(key).orElse(null), r -> r != null && r.status() == status);
  }

  long pid(long job) throws IOException {
    Path file = dir.resolve("pid-" + job);
    await().atMost(Duration.ofSeconds(30)).until(() -> Files.size(file) > 0);
    return Long.parseLong(Files.readString(file).strip());
  }

  @Test
  void aNewTableAdoptsARunningTaskWithItsPidAndReportsItsRealExit() throws Exception {
    var first = table();
    TaskAssignment a = waiting(1, 7);
    first.launch(a);
    TaskKey key = TaskKey.of(a);
    TaskReport before = awaitStatus(first, key, TaskStatus.RUNNING);
    long pid = pid(1);

    // The agent goes away (its table is abandoned, its processes left as they are).
    var second = table();
    assertThat(second.adopt(TaskRecord.scan(dataDir))).containsExactly(key);
    TaskReport adopted = second.report(key).orElseThrow();
    assertThat(adopted.status()).isEqualTo(TaskStatus.RUNNING);
    assertThat(adopted.startedAtMs()).isEqualTo(before.startedAtMs());
    assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).contains(true);

    Files.writeString(dir.resolve("go-1"), "");
    TaskReport ended = awaitStatus(second, key, TaskStatus.EXITED);
    assertThat(ended.exitCode()).isEqualTo(7);
    assertThat(ended.reason()).isNull();
  }

  @Test
  void aTaskThatEndedWhileNoAgentWatchedIsReportedWithItsCode() throws Exception {
    var first = table();
    TaskAssignment a = waiting(2, 3);
    first.launch(a);
    TaskKey key = TaskKey.of(a);
    awaitStatus(first, key, TaskStatus.RUNNING);
    pid(2);
    Files.writeString(dir.resolve("go-2"), "");
    Path exit = Supervisor.exitFile(Supervisor.taskDir(dataDir, key), 0);
    await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(exit));

    var second = table();
    second.adopt(TaskRecord.scan(dataDir));
    TaskReport r = second.report(key).orElseThrow();
    assertThat(r.status()).isEqualTo(TaskStatus.EXITED);
    assertThat(r.exitCode()).isEqualTo(3);
    assertThat(r.reason()).isNull();
  }

  @Test
  void anAdoptedTaskIsStoppedByAKillAndItsSupervisorRecordsTheSignal() throws Exception {
    var first = table();
    TaskAssignment a = waiting(3, 0);
    first.launch(a);
    TaskKey key = TaskKey.of(a);
    awaitStatus(first, key, TaskStatus.RUNNING);
    long pid = pid(3);

    var second = table();
    second.adopt(TaskRecord.scan(dataDir));
    assertThat(second.kill(new TaskKill(3, 1, "cancelled"))).isEqualTo(1);
    TaskReport r = awaitStatus(second, key, TaskStatus.EXITED);
    assertThat(r.exitCode()).isEqualTo(128 + 15);
    assertThat(r.reason()).isEqualTo(ExitReason.KILLED);
    assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
    // Forgotten once recorded: its state goes with it.
    second.forget(new io.kairos.protocol.agent.TaskRef(3, 1, 0));
    assertThat(Supervisor.taskDir(dataDir, key)).doesNotExist();
  }

  @Test
  void aRecordNamingAnotherProcessIsNeverAdoptedNorSignalled() throws Exception {
    var first = table();
    TaskAssignment a = waiting(4, 0);
    first.launch(a);
    TaskKey key = TaskKey.of(a);
    awaitStatus(first, key, TaskStatus.RUNNING);
    pid(4);
    Path run = Supervisor.taskDir(dataDir, key);
    var record =
        TaskRecord.scan(dataDir).stream()
            .filter(f -> f.record().key().equals(key))
            .findFirst()
            .orElseThrow()
            .record();

    // A stranger's process, named with its true start time (a reused pid, or a forged record).
    Process stranger = new ProcessBuilder("sleep", "60").start();
    strangers.add(stranger);
    long ticks = ProcessRef.of(stranger.pid()).orElseThrow().startTicks();
    first.killAllNow(ExitReason.KILLED, "the first agent's task ends");
    awaitStatus(first, key, TaskStatus.EXITED);
    Files.deleteIfExists(Supervisor.exitFile(run, 0));
    new TaskRecord(
            record.assignment(),
            record.startedAtMs(),
            0,
            List.of(new TaskRecord.Proc(0, stranger.pid(), ticks)))
        .write(dataDir);

    var second = table();
    second.adopt(TaskRecord.scan(dataDir));
    TaskReport r = second.report(key).orElseThrow();
    assertThat(r.status()).as("not adopted as running").isEqualTo(TaskStatus.EXITED);
    assertThat(r.reason()).isEqualTo(ExitReason.KILLED);
    second.killAllNow(ExitReason.KILLED, "everything");
    assertThat(stranger.isAlive()).as("the stranger was never signalled").isTrue();
  }

  @Test
  void aRecordOthersCouldHaveWrittenIsIgnored() throws Exception {
    var first = table();
    TaskAssignment a = waiting(5, 0);
    first.launch(a);
    TaskKey key = TaskKey.of(a);
    awaitStatus(first, key, TaskStatus.RUNNING);
    pid(5);
    Path run = Supervisor.taskDir(dataDir, key);
    Path json = run.resolve("task.json");

    Files.setPosixFilePermissions(json, PosixFilePermissions.fromString("rw-rw-rw-"));
    assertThat(TaskRecord.scan(dataDir)).isEmpty();

    Files.setPosixFilePermissions(json, PosixFilePermissions.fromString("rw-------"));
    assertThat(TaskRecord.scan(dataDir)).hasSize(1);
    int me = TaskOwners.thisProcess().uid();
    assertThat(TaskRecord.scan(dataDir, me + 1)).as("owned by another account").isEmpty();

    Files.setPosixFilePermissions(run, PosixFilePermissions.fromString("rwx-----x"));
    assertThat(TaskRecord.scan(dataDir)).isEmpty();
  }
}
