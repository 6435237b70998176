package io.kairos.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The supervisor, run for real: when its child is the task's setup script it runs that script in a
 * forked subshell ({@link Supervisor#INLINE}) rather than a second shell, and still records the
 * task's status, the setup's failure, and a signal's death; anything else it starts as before.
 */
class SupervisorTest {
  @TempDir Path tmp;

  /** {@code /bin/sh -c} {@link UserLaunch#SCRIPT} for {@code argv}, its output in {@code out}. */
  private List<String> setup(Path out, Path dir, String... argv) {
    var list =
        new ArrayList<String>(
            List.of(
                "/bin/sh",
                "-c",
                UserLaunch.SCRIPT,
                "kairos-task",
                "/nonexistent-home",
                "someone",
                out.toString(),
                out.toString(),
                dir.toString(),
                ""));
    list.addAll(List.of(argv));
    return list;
  }

  private Process start(List<String> argv, Path exit, Path setup) throws Exception {
    return new ProcessBuilder(Supervisor.wrap(argv, exit))
        .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(setup.toFile())
        .start();
  }

  @Test
  void theSetupScriptRunsInTheSupervisorsOwnShellAndNothingElseDoes() {
    Path exit = tmp.resolve("0.exit");
    List<String> setupArgv = setup(tmp.resolve("out"), tmp, "true");
    assertThat(Supervisor.wrap(setupArgv, exit)).contains(Supervisor.INLINE);
    assertThat(Supervisor.wrap(setupArgv, exit)).containsSubsequence(setupArgv.subList(2, 5));

    // The cgroup wrapper joins with $$, which in a subshell would be the supervisor's own pid.
    var cgroupArgv = new ArrayList<String>(List.of("/bin/sh", "-c", "x", "kairos-task", "--"));
    cgroupArgv.addAll(setupArgv);
    assertThat(Supervisor.wrap(cgroupArgv, exit)).doesNotContain(Supervisor.INLINE);
    assertThat(Supervisor.wrap(List.of("/bin/sh", "-c", "echo hi"), exit))
        .doesNotContain(Supervisor.INLINE);
  }

  @Test
  void aTaskRunInlineHasItsStatusAndOutputRecordedAndItsArgumentsVerbatim() throws Exception {
    Path out = tmp.resolve("logs/out.log");
    Path exit = tmp.resolve("0.exit");
    Path marker = tmp.resolve("pwned");
    Process p =
        start(
            setup(
                out,
                tmp,
                "/bin/sh",
                "-c",
                "printf '[%s]' \"$@\"; exit 3",
                "x",
                "a b",
                "$(touch " + marker + ")",
                "--inline"),
            exit,
            tmp.resolve("0.setup"));

    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isEqualTo(3);
    assertThat(Supervisor.recordedExit(tmp, 0)).hasValue(3);
    assertThat(Files.readString(out)).isEqualTo("[a b][$(touch " + marker + ")][--inline]");
    assertThat(marker).doesNotExist();
  }

  @Test
  void aSetupThatFailsInlineRecordsItsStatusAndSaysWhy() throws Exception {
    Path exit = tmp.resolve("0.exit");
    Process p =
        start(
            setup(tmp.resolve("out"), tmp.resolve("no/such/dir"), "true"),
            exit,
            tmp.resolve("0.setup"));

    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(Supervisor.recordedExit(tmp, 0)).hasValue(UserLaunch.SETUP_FAILED_EXIT);
    assertThat(Supervisor.setupErrors(tmp, 0))
        .contains("kairos: someone cannot enter the working directory");
  }

  @Test
  void aSignalKillsTheInlineTaskButNotItsSupervisorWhichRecordsIt() throws Exception {
    Path exit = tmp.resolve("0.exit");
    Path pid = tmp.resolve("pid");
    Process p =
        start(
            setup(tmp.resolve("out"), tmp, "/bin/sh", "-c", "echo $$ >" + pid + "; exec sleep 60"),
            exit,
            tmp.resolve("0.setup"));
    long task = Processes.awaitPid(pid);
    assertThat(ProcessHandle.of(task).flatMap(ProcessHandle::parent).map(ProcessHandle::pid))
        .hasValue(p.pid());

    // The whole tree gets TERM, as the agent's stop sends it: the supervisor catches it.
    p.toHandle().destroy();
    ProcessHandle.of(task).ifPresent(ProcessHandle::destroy);

    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isEqualTo(128 + 15);
    await().until(() -> Supervisor.recordedExit(tmp, 0).isPresent());
    assertThat(Supervisor.recordedExit(tmp, 0)).hasValue(128 + 15);
  }
}
