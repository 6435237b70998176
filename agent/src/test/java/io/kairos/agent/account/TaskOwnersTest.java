package io.kairos.agent.account;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Which account a task runs as, by the agent's own account and the assignment's runAs. */
class TaskOwnersTest {
  static final Account ROOT = new Account("root", 0, 0, List.of(0), "/root");
  static final Account ALICE = new Account("alice", 1001, 1001, List.of(1001, 27), "/home/alice");
  static final Account BOB = new Account("bob", 1002, 1002, List.of(1002), "/home/bob");
  static final Account TOOR = new Account("toor", 0, 0, List.of(0), "/root");
  static final Account ALIAS = new Account("alice2", 1001, 1001, List.of(1001), "/home/alice");

  static final AccountLookup NODE =
      name ->
          Optional.ofNullable(
              Map.of("root", ROOT, "alice", ALICE, "bob", BOB, "toor", TOOR, "alice2", ALIAS)
                  .get(name));

  static TaskOwners root(boolean allowRootJobs) {
    return new TaskOwners("n1", ROOT, allowRootJobs, NODE);
  }

  @Test
  void aRootAgentRunsEachTaskAsItsJobsAccount() throws IOException {
    assertThat(root(false).ownerOf(5, "alice")).isEqualTo(ALICE);
    assertThat(root(false).ownerOf(6, "bob")).isEqualTo(BOB);
    assertThat(root(false).runsOnlyAs()).isNull();
  }

  @Test
  void aRootAgentRefusesUidZeroByAnyNameUnlessAllowed() throws IOException {
    for (String name : List.of("root", "toor")) {
      assertThatThrownBy(() -> root(false).ownerOf(5, name))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("job 5 runs as " + name + " (uid 0)")
          .hasMessageContaining("refuses root jobs");
      assertThat(root(true).ownerOf(5, name).uid()).isZero();
    }
  }

  /** A controller older than runAs names no account: the task would run as root. */
  @Test
  void anAssignmentWithoutAnAccountRunsAsTheAgentOnlyWhereRootJobsAreAllowed() throws IOException {
    assertThatThrownBy(() -> root(false).ownerOf(5, null))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("names no Unix account");
    assertThat(root(true).ownerOf(5, null)).isEqualTo(ROOT);
    assertThat(new TaskOwners("n1", ALICE, false, NODE).ownerOf(5, null)).isEqualTo(ALICE);
  }

  @Test
  void anAccountTheNodeDoesNotKnowIsRefused() {
    assertThatThrownBy(() -> root(false).ownerOf(5, "carol"))
        .isInstanceOf(IOException.class)
        .hasMessage("job 5 runs as carol, and node n1 has no such account");
  }

  @Test
  void aNonRootAgentRunsOnlyItsOwnAccountsJobsAndSaysSo() throws IOException {
    var alices = new TaskOwners("n1", ALICE, true, NODE);
    assertThat(alices.runsOnlyAs()).isEqualTo("alice");
    assertThat(alices.describe())
        .isEqualTo("agent n1 runs as alice (not root): it runs only alice's jobs");
    assertThat(alices.ownerOf(5, "alice")).isEqualTo(ALICE);
    assertThat(alices.ownerOf(5, "alice2")).as("another name of the same uid").isEqualTo(ALICE);
    for (String other : List.of("bob", "root")) {
      assertThatThrownBy(() -> alices.ownerOf(7, other))
          .isInstanceOf(IOException.class)
          .hasMessage(
              "agent n1 runs as alice (not root): it runs only alice's jobs, and job 7 runs as "
                  + other);
    }
  }

  @Test
  void aLookupThatFailsRefusesTheTaskWithItsReason() {
    var broken =
        new TaskOwners(
            "n1",
            ROOT,
            false,
            name -> {
              throw new IOException("getent passwd alice failed: ldap down");
            });
    assertThatThrownBy(() -> broken.ownerOf(5, "alice")).hasMessageContaining("ldap down");
  }

  @Test
  void thisProcessIsReadFromProc() throws IOException {
    Account self = TaskOwners.thisProcess();
    var proc = java.nio.file.Path.of("/proc/self");
    assertThat(self.uid()).isEqualTo(java.nio.file.Files.getAttribute(proc, "unix:uid"));
    assertThat(self.gid()).isEqualTo(java.nio.file.Files.getAttribute(proc, "unix:gid"));
    assertThat(self.name()).isEqualTo(System.getProperty("user.name"));
    assertThat(self.groups()).startsWith(self.gid());
  }
}
