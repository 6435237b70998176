package io.kairos.agent.account;

import java.util.List;
import java.util.Objects;

/**
 * A Unix account as the node's NSS knows it, with what a task started as it gets.
 *
 * @param uid its user id
 * @param gid its primary group
 * @param groups every group it is in, the primary one first (the process's supplementary groups)
 * @param home its home directory, the task's {@code HOME}
 */
public record Account(String name, int uid, int gid, List<Integer> groups, String home) {
  public Account {
    Objects.requireNonNull(name, "name");
    groups = List.copyOf(groups);
    Objects.requireNonNull(home, "home");
  }

  public boolean isRoot() {
    return uid == 0;
  }

  /** "alice (uid 1001)". */
  @Override
  public String toString() {
    return name + " (uid " + uid + ")";
  }
}
