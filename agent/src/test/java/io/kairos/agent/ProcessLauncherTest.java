package io.kairos.agent;

import static io.kairos.agent.Assignments.assignment;
import static io.kairos.agent.Assignments.script;
import static io.kairos.agent.Processes.awaitDead;
import static io.kairos.agent.Processes.awaitFile;
import static io.kairos.agent.Processes.awaitPid;
import static io.kairos.agent.Processes.lines;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

import io.kairos.protocol.agent.TaskAssignment;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Signals sent by {@link ProcessLauncher} to real processes. */
class ProcessLauncherTest {
  private static final String PATH = System.getenv("PATH");

  @TempDir Path dataDir;

  private final ProcessLauncher launcher = new ProcessLauncher();
  private final List<Process> started = new ArrayList<>();

  @AfterEach
  void killLeftovers() {
    for (Process p : started) {
      launcher.forceKill(p.toHandle(), List.of());
    }
  }

  private Process start(TaskAssignment a) throws IOException {
    Process p = launcher.start(LaunchSpec.of(a, "n1", dataDir, Map.of("PATH", PATH)));
    started.add(p);
    return p;
  }

  @Test
  void aSignalReachesTheWholeTree() throws IOException {
    // A shell that notes USR2, and a child shell of its own that notes it too.
    var a =
        script(
            61,
            "trap 'echo parent >> got.txt' USR2;"
                + " sh -c 'trap \"echo child >> got.txt\" USR2; echo $$ > child.pid;"
                + " while :; do sleep 0.1; done' &"
                + " while [ ! -s child.pid ]; do sleep 0.05; done; touch ready;"
                + " while :; do sleep 0.1; done");
    Path dir = LaunchSpec.taskDir(dataDir, TaskKey.of(a));
    Process root = start(a);
    awaitFile(dir.resolve("ready"));
    long child = awaitPid(dir.resolve("child.pid"));

    List<ProcessHandle> tree = launcher.signal(root.toHandle(), "USR2");

    await().atMost(Processes.PROCESS_WAIT).until(() -> lines(dir.resolve("got.txt")).size() == 2);
    assertThat(lines(dir.resolve("got.txt"))).containsExactlyInAnyOrder("parent", "child");
    assertThat(tree.getFirst()).isEqualTo(root.toHandle());
    assertThat(tree).extracting(ProcessHandle::pid).contains(child);
    assertThat(root.isAlive()).as("a trapped signal does not stop it").isTrue();

    launcher.forceKill(root.toHandle(), tree);
    awaitDead(child);
  }

  @ParameterizedTest
  @ValueSource(strings = {"KILL", "STOP", "SIGUSR1", "usr1", "9", ""})
  void aSignalNotOnTheListIsRefused(String signal) throws IOException {
    Process p = start(assignment(62, "sleep", "60"));

    assertThatIllegalArgumentException()
        .isThrownBy(() -> launcher.signal(p.toHandle(), signal))
        .withMessageContaining("signal " + signal + " ")
        .withMessageContaining("USR1");
    assertThat(p.isAlive()).as("nothing was sent").isTrue();
  }
}
