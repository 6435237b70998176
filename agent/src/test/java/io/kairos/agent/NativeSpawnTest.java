package io.kairos.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A supervisor started with {@code posix_spawn} ({@link NativeSpawn}), run for real: what it starts
 * with (its own session, exactly the spec's environment, {@code /}, no descriptor of the agent's,
 * no blocked signal), its exit, and that it is reaped. The agent's tests run with native access on
 * (the build's {@code --enable-native-access=ALL-UNNAMED}), as {@code ./kairos agent} does.
 */
class NativeSpawnTest {
  private static final Map<String, String> ENV =
      Map.of("PATH", "/usr/bin:/bin", "KAIROS_X", "a b=c", "EMPTY", "");

  @TempDir Path tmp;

  private Process process;

  @AfterEach
  void killLeftover() {
    if (process != null) {
      process.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly();
    }
  }

  private Process supervised(String command, boolean pipe) throws IOException {
    Path setup = tmp.resolve("0.setup");
    Files.createFile(setup);
    List<String> argv =
        Supervisor.wrap(List.of("/bin/sh", "-c", command), tmp.resolve("0.exit"), false);
    assertThat(argv.getFirst()).as("no setsid in the chain").isEqualTo("/bin/sh");
    process = NativeSpawn.start(argv, ENV, setup, pipe);
    return process;
  }

  private static String proc(long pid, String file) throws IOException {
    return Files.readString(Path.of("/proc", Long.toString(pid), file));
  }

  /** Field {@code n} (1-based, as in proc(5)) of /proc/PID/stat. */
  private static String statField(long pid, int n) throws IOException {
    String stat = proc(pid, "stat");
    String[] after = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return after[n - 3];
  }

  private static String statusLine(long pid, String key) throws IOException {
    return proc(pid, "status")
        .lines()
        .filter(l -> l.startsWith(key + ":"))
        .findFirst()
        .orElseThrow()
        .substring(key.length() + 1)
        .strip();
  }

  @Test
  void aSupervisorRunsInItsOwnSessionWithExactlyTheSpecsEnvironmentAndIsReaped() throws Exception {
    assertThat(NativeSpawn.available()).as("glibc, Linux, native access on").isTrue();
    // Descriptors the JVM holds without close-on-exec must not reach the task.
    Path held = tmp.resolve("held");
    Files.writeString(held, "x");
    try (var file = new FileInputStream(held.toFile());
        var socket = new ServerSocket(0)) {
      Path go = tmp.resolve("go");
      Process p = supervised("while [ ! -e " + go + " ]; do sleep 0.05; done; exit 7", false);
      long pid = p.pid();
      assertThat(p.isAlive()).isTrue();

      assertThat(statField(pid, 6)).as("session id").isEqualTo(Long.toString(pid));
      assertThat(statField(pid, 5)).as("process group").isEqualTo(Long.toString(pid));
      var environ = new TreeSet<>(Arrays.asList(proc(pid, "environ").split("\0")));
      assertThat(environ)
          .containsExactlyInAnyOrder("PATH=/usr/bin:/bin", "KAIROS_X=a b=c", "EMPTY=");
      assertThat(Files.readSymbolicLink(Path.of("/proc/" + pid + "/cwd"))).isEqualTo(Path.of("/"));
      try (Stream<Path> fds = Files.list(Path.of("/proc/" + pid + "/fd"))) {
        assertThat(fds.map(f -> f.getFileName().toString()))
            .containsExactlyInAnyOrder("0", "1", "2");
      }
      assertThat(Files.readSymbolicLink(Path.of("/proc/" + pid + "/fd/0")))
          .isEqualTo(Path.of("/dev/null"));
      assertThat(Files.readSymbolicLink(Path.of("/proc/" + pid + "/fd/1")))
          .isEqualTo(Path.of("/dev/null"));
      assertThat(Files.readSymbolicLink(Path.of("/proc/" + pid + "/fd/2")))
          .isEqualTo(tmp.resolve("0.setup").toRealPath());
      assertThat(statusLine(pid, "SigBlk")).as("blocked signals").matches("0+");
      assertThat(proc(pid, "cmdline").split("\0")[3]).isEqualTo(Supervisor.NAME);
      assertThat(Supervisor.isSupervisor(pid)).as("an adopting agent recognizes it").isTrue();

      Files.createFile(go);
      assertThat(p.waitFor(Processes.PROCESS_WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).isEqualTo(7);
      assertThat(p.isAlive()).isFalse();
      assertThat(Supervisor.recordedExit(tmp, 0)).hasValue(7);
      // Reaped: no zombie left (a reused pid would be a different process, started later).
      assertThat(reapedOrReused(p.toHandle())).isTrue();
      assertThat(p.toHandle().isAlive()).isFalse();
      assertThat(file.read()).isEqualTo('x');
      assertThat(socket.isBound()).isTrue();
    }
  }

  private static boolean reapedOrReused(ProcessHandle h) {
    try {
      String state = statField(h.pid(), 3);
      return !state.equals("Z") && !h.isAlive();
    } catch (IOException e) {
      return true;
    }
  }

  @Test
  void aBatchScriptArrivesOnTheStdinPipe() throws Exception {
    Path got = tmp.resolve("got");
    Process p = supervised("cat > " + got + "; exit 3", true);
    try (OutputStream in = p.getOutputStream()) {
      in.write("#!/bin/sh\necho hi\n".getBytes(StandardCharsets.UTF_8));
    }
    assertThat(p.waitFor(Processes.PROCESS_WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isEqualTo(3);
    assertThat(Files.readString(got)).isEqualTo("#!/bin/sh\necho hi\n");
  }

  @Test
  void aDeathBySignalReadsAsTheJdkReportsIt() throws Exception {
    Path setup = tmp.resolve("s");
    Files.createFile(setup);
    process = NativeSpawn.start(List.of("/bin/sh", "-c", "kill -9 $$"), ENV, setup, false);
    assertThat(process.onExit().get(10, TimeUnit.SECONDS).exitValue()).isEqualTo(128 + 9);
    await().atMost(Processes.PROCESS_WAIT).until(() -> reapedOrReused(process.toHandle()));
  }

  @Test
  void whatCannotStartIsAClearErrorAndLeavesNothingBehind() throws Exception {
    Path setup = tmp.resolve("s");
    Files.createFile(setup);
    long pipesBefore = openPipes();
    assertThatThrownBy(() -> NativeSpawn.start(List.of("/nonexistent/sh"), ENV, setup, true))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("/nonexistent/sh")
        .hasMessageContaining("ENOENT");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> NativeSpawn.start(List.of("/bin/sh", "a\0b"), ENV, setup, false));
    assertThatIllegalArgumentException()
        .isThrownBy(() -> NativeSpawn.start(List.of("/bin/true"), Map.of("A=B", "c"), setup, false))
        .withMessageContaining("A=B");
    assertThatThrownBy(
            () -> NativeSpawn.start(List.of("/bin/true"), ENV, tmp.resolve("no/such/dir"), false))
        .isInstanceOf(IOException.class);
    assertThat(openPipes()).as("the pipes of the failed starts are closed").isEqualTo(pipesBefore);
  }

  private static long openPipes() throws IOException {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.filter(
              f -> {
                try {
                  return Files.readSymbolicLink(f).toString().startsWith("pipe:");
                } catch (IOException e) {
                  return false;
                }
              })
          .count();
    }
  }
}
