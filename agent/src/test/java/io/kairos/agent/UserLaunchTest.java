package io.kairos.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kairos.agent.account.Account;
import io.kairos.agent.account.Setpriv;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The argv and environment of a task started as its owner. */
class UserLaunchTest {
  static final Account ALICE = new Account("alice", 1001, 1001, List.of(1001, 27), "/home/alice");
  static final Path DATA = Path.of("/var/lib/kairos/agent");

  static LaunchSpec spec(String... argv) {
    var a = Assignments.assignment(42, argv);
    return LaunchSpec.of(a, "n1", DATA, Map.of("PATH", "/usr/bin:/bin", "HOME", "/root"));
  }

  @Test
  void anotherAccountIsDroppedToWithSetprivThenItsShellOpensTheFiles() {
    LaunchSpec spec = spec("python3", "train.py", "--out", "$(rm -rf /)");
    LaunchSpec wrapped = UserLaunch.wrap(spec, ALICE, 0, Map.of());

    Path taskDir = DATA.resolve("tasks/42-1-0");
    assertThat(wrapped.argv())
        .containsExactly(
            Setpriv.binary("setpriv"),
            "--reuid=1001",
            "--regid=1001",
            "--groups=1001,27",
            "--inh-caps=-all",
            "--",
            "/bin/sh",
            "-c",
            UserLaunch.SCRIPT,
            "kairos-task",
            "/home/alice",
            "alice",
            taskDir.resolve("stdout.log").toString(),
            taskDir.resolve("stderr.log").toString(),
            taskDir.toString(),
            "",
            "python3",
            "train.py",
            "--out",
            "$(rm -rf /)");
    assertThat(wrapped.owner()).isEqualTo(ALICE);
    assertThat(wrapped.env())
        .containsEntry("HOME", "/home/alice")
        .containsEntry("USER", "alice")
        .containsEntry("LOGNAME", "alice")
        .containsEntry("PATH", "/usr/bin:/bin");
    // Everything else is the spec's: the task's directory, files and key.
    assertThat(wrapped.withArgv(spec.argv()).withOwner(null, spec.argv(), spec.env()))
        .isEqualTo(spec);
  }

  @Test
  void theAgentsOwnAccountNeedsNoSetprivAndAnEmptyGroupListIsCleared() {
    LaunchSpec own = UserLaunch.wrap(spec("id"), ALICE, 1001, Map.of());
    assertThat(own.argv().getFirst()).isEqualTo("/bin/sh");
    var lonely = new Account("svc", 998, 997, List.of(), "/");
    assertThat(UserLaunch.wrap(spec("id"), lonely, 0, Map.of()).argv())
        .contains("--clear-groups")
        .doesNotContain("--groups=");
  }

  @Test
  void theJobsOwnHomeUserOrLognameWins() {
    LaunchSpec spec = spec("id");
    var env = Map.of("HOME", "/scratch/alice");
    var withHome =
        new LaunchSpec(
            spec.key(),
            spec.argv(),
            new java.util.TreeMap<>(Map.of("HOME", "/scratch/alice")),
            spec.workdir(),
            spec.taskDir(),
            spec.stdout(),
            spec.stderr());
    assertThat(UserLaunch.wrap(withHome, ALICE, 0, env).env())
        .containsEntry("HOME", "/scratch/alice")
        .containsEntry("USER", "alice");
  }

  /** The shell's exec would read a program named "-c" as an option. */
  @Test
  void aProgramStartingWithADashIsRefused() {
    assertThatThrownBy(() -> UserLaunch.wrap(spec("-c", "id"), ALICE, 0, Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not start with '-'");
  }
}
