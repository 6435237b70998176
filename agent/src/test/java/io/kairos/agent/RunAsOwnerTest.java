package io.kairos.agent;

import static io.kairos.agent.Assignments.script;
import static io.kairos.agent.Assignments.withOutput;
import static io.kairos.agent.Assignments.withRunAs;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kairos.agent.account.Account;
import io.kairos.agent.account.Nss;
import io.kairos.agent.account.TaskOwners;
import io.kairos.agent.account.UnixUsers;
import io.kairos.agent.isolate.LeaseFile;
import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A root agent's task table and log server with real Unix users ({@link UnixUsers}: skipped unless
 * root): each task runs as its job's account, opens its files with that account's rights, cannot
 * reach the agent's files or another job's, and the log server serves only what the owner may read,
 * never through a planted link or a forged pointer.
 */
class RunAsOwnerTest {
  private static final String TOKEN = "join-secret";
  private static final String SECRET = "kadm_0123456789abcdef";

  @TempDir Path root;
  Path dataDir;
  Path secret;
  TaskTable table;
  LogServer server;
  HttpClient client;
  Account alice;
  Account bob;

  @BeforeEach
  void start() throws IOException {
    UnixUsers.assumeRoot();
    alice = UnixUsers.alice();
    bob = UnixUsers.bob();
    // The agent's data under a directory every account may enter, as /var/lib is.
    Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwx--x--x"));
    dataDir = root.resolve("agent");
    AgentFiles.secure(dataDir, true);
    new LeaseFile(dataDir, ProcessHandle.current()).renewFor(Duration.ofMinutes(5), 1);
    // A root-only file beside it, as the controller's admin.token is.
    secret = Files.writeString(root.resolve("admin.token"), SECRET + "\n");
    Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
    var owners =
        new TaskOwners("n1", TaskOwners.thisProcess(), false, Nss.system(InstantSource.system()));
    TaskHooks hooks =
        new TaskHooks() {
          @Override
          public Account owner(TaskAssignment a) throws IOException {
            return owners.ownerOf(a.jobId(), a.runAs());
          }
        };
    table =
        new TaskTable(
            "n1",
            dataDir,
            Duration.ofSeconds(5),
            0,
            Map.of("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
            new ProcessLauncher(),
            new ManualClock(),
            () -> {},
            hooks);
    server = new LogServer("127.0.0.1", 0, TOKEN, dataDir, table);
    client = HttpClient.newHttpClient();
  }

  @AfterEach
  void stop() {
    if (table != null) {
      table.killAll(ExitReason.KILLED, "test over");
      server.close();
      client.close();
    }
  }

  TaskReport run(TaskAssignment a) {
    table.launch(a);
    var key = TaskKey.of(a);
    return await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> table.report(key).orElseThrow(), r -> r.status() == TaskStatus.EXITED);
  }

  Path taskDir(long job) {
    return LaunchSpec.taskDir(dataDir, new TaskKey(job, 1, 0));
  }

  HttpResponse<String> logs(long job, String stream) throws Exception {
    return client.send(
        HttpRequest.newBuilder(
                URI.create(
                    "http://127.0.0.1:" + server.port() + "/logs/" + job + "/1/0?stream=" + stream))
            .header("Authorization", "Bearer " + TOKEN)
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static String mode(Path p) throws IOException {
    return PosixFilePermissions.toString(
        Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
  }

  static int owner(Path p) throws IOException {
    return (int) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
  }

  @Test
  void aTaskRunsAsItsOwnerWithItsGroupsHomeAndAPrivateUmask() throws Exception {
    var report =
        run(
            withRunAs(
                script(1, "id -u; id -g; id -G; echo $HOME $USER $LOGNAME; umask; pwd"),
                UnixUsers.ALICE));
    assertThat(report.exitCode()).as(String.valueOf(report.message())).isZero();

    List<String> out = Files.readAllLines(taskDir(1).resolve("stdout.log"));
    assertThat(out.get(0)).isEqualTo(Integer.toString(alice.uid())).isNotEqualTo("0");
    assertThat(out.get(1)).isEqualTo(Integer.toString(alice.gid()));
    assertThat(out.get(2).split(" ")).contains(Integer.toString(UnixUsers.teamGid()));
    assertThat(out.get(3)).isEqualTo("/nonexistent kairos-alice kairos-alice");
    assertThat(out.get(4)).isEqualTo("0077");
    assertThat(out.get(5)).isEqualTo(taskDir(1).toString());
    // Her directory and her files, private; the agent's record of them, the agent's.
    assertThat(owner(taskDir(1))).isEqualTo(alice.uid());
    assertThat(mode(taskDir(1))).isEqualTo("rwx------");
    for (String f : List.of("stdout.log", "stderr.log")) {
      assertThat(owner(taskDir(1).resolve(f))).isEqualTo(alice.uid());
      assertThat(mode(taskDir(1).resolve(f))).isEqualTo("rw-------");
    }
    Path record = taskDir(1).resolveSibling("1-1-0.task");
    assertThat(owner(record)).isZero();
    assertThat(mode(record)).isEqualTo("rw-------");
    assertThat(mode(dataDir.resolve("tasks"))).isEqualTo("rwx--x--x");
    assertThat(mode(dataDir.resolve("fence"))).isEqualTo("rwx------");
    assertThat(mode(dataDir.resolve("fence/lease"))).isEqualTo("rw-------");
    // Served with her rights.
    assertThat(logs(1, "stdout").body()).startsWith(alice.uid() + "\n");
  }

  @Test
  void aBatchStepsScriptIsWrittenByItsOwnerPrivatelyAndRunWithItsArguments() throws Exception {
    String text = "#!/bin/sh\necho \"$0 $1 $2\"; id -u\nexit 7\n";
    var report =
        run(
            Assignments.asBatchStep(
                withRunAs(Assignments.assignment(11, "/home/x/job.sh", "a", "b"), UnixUsers.ALICE),
                text));

    assertThat(report.exitCode()).as(String.valueOf(report.message())).isEqualTo(7);
    Path copy = taskDir(11).resolve(BatchStep.SCRIPT_FILE);
    assertThat(Files.readAllLines(taskDir(11).resolve("stdout.log")))
        .containsExactly(copy + " a b", Integer.toString(alice.uid()));
    assertThat(Files.readString(copy)).isEqualTo(text);
    assertThat(owner(copy)).isEqualTo(alice.uid());
    assertThat(mode(copy)).isEqualTo("rwx------");
  }

  @Test
  void aTaskCannotWriteEtcNorReachTheAgentsFilesNorAnotherJobs() throws Exception {
    assertThat(run(withRunAs(script(2, "echo bob-private > mine.txt"), UnixUsers.BOB)).exitCode())
        .isZero();
    Path pwned = Path.of("/etc/kairos-pwned-" + ProcessHandle.current().pid());
    String attempts =
        String.join(
            "\n",
            "echo x > " + pwned,
            "cat " + secret,
            "cat " + dataDir.resolve("fence/lease"),
            "ls " + dataDir.resolve("fence/tasks"),
            "ls " + dataDir.resolve("tasks"),
            "cat " + dataDir.resolve("tasks/2-1-0.task"),
            "cat " + taskDir(2).resolve("mine.txt"),
            "echo x > " + taskDir(2).resolve("stdout.log"),
            "exit 0");
    var report = run(withRunAs(script(3, attempts), UnixUsers.ALICE));

    assertThat(report.exitCode()).isZero();
    assertThat(pwned).doesNotExist();
    assertThat(Files.readString(taskDir(3).resolve("stdout.log"))).isEmpty();
    List<String> denied = Files.readAllLines(taskDir(3).resolve("stderr.log"));
    assertThat(denied).hasSize(8).allMatch(l -> l.contains("Permission denied"), "denied");
    assertThat(Files.readString(taskDir(2).resolve("stdout.log"))).isEmpty();
  }

  @Test
  void anOutputTheOwnerMayNotWriteFailsTheTaskAndIsNeverServed() throws Exception {
    var report =
        run(withRunAs(withOutput(script(4, "echo hi"), secret.toString(), null), UnixUsers.ALICE));

    assertThat(report.reason()).isEqualTo(ExitReason.LAUNCH_FAILED);
    assertThat(report.message())
        .isEqualTo("kairos: kairos-alice cannot open " + secret + " for writing");
    assertThat(Files.readString(secret)).isEqualTo(SECRET + "\n");
    for (String stream : List.of("stdout", "stderr")) {
      var reply = logs(4, stream);
      assertThat(reply.statusCode()).isEqualTo(403);
      assertThat(reply.body()).doesNotContain(SECRET).contains("may not read");
    }
    // Nor can a job that names a directory it may not create.
    var nested =
        run(withRunAs(withOutput(script(5, "true"), "/root/kairos/%j.out", null), UnixUsers.BOB));
    assertThat(nested.reason()).isEqualTo(ExitReason.LAUNCH_FAILED);
    assertThat(nested.message()).contains("kairos-bob cannot");
    assertThat(Path.of("/root/kairos")).doesNotExist();
  }

  @Test
  void aLinkPlantedInTheOutputPathOrAForgedPointerServesNothingElse() throws Exception {
    // The job replaces its own stdout.log by a link to the secret, and forges a pointer file.
    String plant =
        "echo before; rm stdout.log; ln -s "
            + secret
            + " stdout.log; echo "
            + secret
            + " > stderr.path; echo visible >&2";
    assertThat(run(withRunAs(script(6, plant), UnixUsers.ALICE)).exitCode()).isZero();
    assertThat(Files.isSymbolicLink(taskDir(6).resolve("stdout.log"))).isTrue();
    assertThat(Files.exists(taskDir(6).resolve("stderr.path"))).isTrue();

    var out = logs(6, "stdout");
    assertThat(out.statusCode()).isEqualTo(403);
    assertThat(out.body()).doesNotContain(SECRET).contains("symbolic link");
    var err = logs(6, "stderr");
    assertThat(err.statusCode()).isEqualTo(200);
    assertThat(err.body()).isEqualTo("visible\n");
  }

  @Test
  void rootOrAnUnknownAccountOrNoneIsRefusedWithAClearMessage() {
    var asRoot = run(withRunAs(script(7, "id"), "root"));
    assertThat(asRoot.reason()).isEqualTo(ExitReason.LAUNCH_FAILED);
    assertThat(asRoot.message()).contains("job 7 runs as root (uid 0)", "refuses root jobs");
    var unknown = run(withRunAs(script(8, "id"), "kairos-nobody-has-this"));
    assertThat(unknown.message()).contains("has no such account");
    var none = run(script(9, "id"));
    assertThat(none.reason()).isEqualTo(ExitReason.LAUNCH_FAILED);
    assertThat(none.message()).contains("names no Unix account");
    assertThat(taskDir(7)).doesNotExist();
  }

  @Test
  void aWorkdirTheOwnerMayNotEnterFailsTheTask() {
    var report = run(withRunAs(Assignments.withWorkdir(script(10, "pwd"), "/root"), UnixUsers.BOB));
    assertThat(report.reason()).isEqualTo(ExitReason.LAUNCH_FAILED);
    assertThat(report.message())
        .isEqualTo("kairos: kairos-bob cannot enter the working directory /root");
  }
}
