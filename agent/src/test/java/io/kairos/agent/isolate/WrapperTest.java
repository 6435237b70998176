package io.kairos.agent.isolate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kairos.agent.TaskKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The wrapper script, run for real against plain files standing in for cgroup.procs: it writes its
 * pid (the program's pid after exec) to each, and hands hostile arguments through untouched.
 */
class WrapperTest {
  @TempDir Path tmp;

  TaskCgroup fake(int dirs) throws IOException {
    var list = new ArrayList<Path>();
    for (int i = 0; i < dirs; i++) {
      list.add(Files.createDirectories(tmp.resolve("cg" + i)));
    }
    return new TaskCgroup(new TaskKey(1, 0, 0), list, List.of());
  }

  @Test
  void hostileArgumentsReachTheProgramVerbatim() throws Exception {
    var cg = fake(2);
    Path marker = tmp.resolve("pwned");
    List<String> hostile =
        List.of(
            "it's \"quoted\"",
            "$(touch " + marker + ")",
            "`touch " + marker + "`",
            "a b  c",
            "line1\nline2",
            "--",
            "; touch " + marker,
            "$HOME",
            "");
    var argv = new ArrayList<String>(List.of("/usr/bin/printf", "[%s]\\n"));
    argv.addAll(hostile);
    Path out = tmp.resolve("out");
    Process p =
        new ProcessBuilder(cg.wrap(argv))
            .redirectOutput(out.toFile())
            .redirectErrorStream(true)
            .start();
    assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();

    assertThat(p.exitValue()).isZero();
    var expected = new StringBuilder();
    hostile.forEach(h -> expected.append('[').append(h).append("]\n"));
    assertThat(Files.readString(out)).isEqualTo(expected.toString());
    assertThat(marker).doesNotExist();
    // The pid written is the program's own: exec kept it.
    for (Path procs : cg.procsFiles()) {
      assertThat(Files.readString(procs).strip()).isEqualTo(Long.toString(p.pid()));
    }
  }

  @Test
  void theScriptNeverContainsUserText() {
    var cg = new TaskCgroup(new TaskKey(1, 0, 0), List.of(Path.of("/x")), List.of());
    List<String> wrapped = Cgroups.wrap(cg, List.of("/bin/echo", "$(id)"));
    assertThat(wrapped)
        .containsExactly(
            "/bin/sh",
            "-c",
            Cgroups.WRAPPER_SCRIPT,
            "kairos-task",
            "/x/cgroup.procs",
            "--",
            "/bin/echo",
            "$(id)");
  }

  @Test
  void failingToJoinStopsTheTaskInsteadOfRunningItUnconfined() throws Exception {
    var cg = new TaskCgroup(new TaskKey(1, 0, 0), List.of(tmp.resolve("missing")), List.of());
    Path marker = tmp.resolve("ran");
    Process p =
        new ProcessBuilder(cg.wrap(List.of("/usr/bin/touch", marker.toString())))
            .redirectErrorStream(true)
            .start();
    assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isEqualTo(Cgroups.JOIN_FAILED_EXIT);
    assertThat(marker).doesNotExist();
  }

  @Test
  void aProgramNamedLikeAnOptionIsRefused() {
    var cg = new TaskCgroup(new TaskKey(1, 0, 0), List.of(Path.of("/x")), List.of());
    assertThatThrownBy(() -> cg.wrap(List.of("-c", "id")))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
