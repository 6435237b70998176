package io.kairos.agent.account;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Which account each task runs as on this node, and which it refuses.
 *
 * <ul>
 *   <li>An agent running as root starts each task as its job's account ({@code runAs}, resolved
 *       through {@link AccountLookup}), dropping to it with {@link Setpriv}. An account with uid 0
 *       is refused unless {@code allowRootJobs}; so is an assignment that names none (a controller
 *       older than {@code runAs}), which would run as root.
 *   <li>An agent not running as root can start processes only as itself: it runs only its own
 *       account's jobs (it registers {@code runsOnlyAs}, so the controller places no other there),
 *       and refuses any other account's.
 * </ul>
 *
 * <p>A refusal is an {@link IOException} whose message says why, for the task's failure. Thread-
 * safe when the lookup is.
 */
public final class TaskOwners {
  private final String node;
  private final Account agent;
  private final boolean allowRootJobs;
  private final AccountLookup lookup;

  public TaskOwners(String node, Account agent, boolean allowRootJobs, AccountLookup lookup) {
    this.node = Objects.requireNonNull(node, "node");
    this.agent = Objects.requireNonNull(agent, "agent");
    this.allowRootJobs = allowRootJobs;
    this.lookup = Objects.requireNonNull(lookup, "lookup");
  }

  /** The agent's own account. */
  public Account agent() {
    return agent;
  }

  /** For the registration: null when this agent can run any account's jobs, else its account. */
  public String runsOnlyAs() {
    return agent.isRoot() ? null : agent.name();
  }

  /** One line for the agent's log at start, saying plainly whose jobs it runs. */
  public String describe() {
    if (!agent.isRoot()) {
      return "agent "
          + node
          + " runs as "
          + agent.name()
          + " (not root): it runs only "
          + agent.name()
          + "'s jobs";
    }
    return "agent "
        + node
        + " runs as root: it starts each task as its job's Unix account"
        + (Setpriv.available() ? "" : " (BUT setpriv is missing: every such task will fail)")
        + "; root jobs "
        + (allowRootJobs ? "ALLOWED (--allow-root-jobs)" : "refused");
  }

  /**
   * The account job {@code jobId}'s task runs as, given the assignment's {@code runAs} (null from
   * controllers before it).
   *
   * @throws IOException saying why the task must not start: an account this agent cannot or may not
   *     run, or one the node does not know
   */
  public Account ownerOf(long jobId, String runAs) throws IOException {
    if (runAs == null) {
      if (agent.isRoot() && !allowRootJobs) {
        throw new IOException(
            "job "
                + jobId
                + " names no Unix account (its controller is older than this agent), so it would"
                + " run as root, and agent "
                + node
                + " refuses root jobs");
      }
      return agent;
    }
    if (!agent.isRoot()) {
      if (runAs.equals(agent.name()) || sameUid(runAs)) {
        return agent;
      }
      throw new IOException(
          "agent "
              + node
              + " runs as "
              + agent.name()
              + " (not root): it runs only "
              + agent.name()
              + "'s jobs, and job "
              + jobId
              + " runs as "
              + runAs);
    }
    Optional<Account> found = lookup.find(runAs);
    if (found.isEmpty()) {
      throw new IOException(
          "job " + jobId + " runs as " + runAs + ", and node " + node + " has no such account");
    }
    Account account = found.get();
    if (account.isRoot() && !allowRootJobs) {
      throw new IOException(
          "job "
              + jobId
              + " runs as "
              + account
              + ", and agent "
              + node
              + " refuses root jobs (--allow-root-jobs is for a single-user machine)");
    }
    if (account.uid() != agent.uid() && !Setpriv.available()) {
      throw new IOException(
          "node " + node + " has no setpriv (util-linux) to start job " + jobId + " as " + runAs);
    }
    return account;
  }

  private boolean sameUid(String runAs) {
    try {
      return lookup.find(runAs).map(a -> a.uid() == agent.uid()).orElse(false);
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * The account this process runs as: uid, gid and groups from {@code /proc/self/status} (exact,
   * even without a passwd entry), name and home from the JVM.
   */
  public static Account thisProcess() {
    try {
      List<String> status = Files.readAllLines(Path.of("/proc/self/status"));
      int uid = Integer.parseInt(field(status, "Uid:").get(1));
      int gid = Integer.parseInt(field(status, "Gid:").get(1));
      var groups = new ArrayList<Integer>();
      groups.add(gid);
      for (String g : field(status, "Groups:")) {
        int group = Integer.parseInt(g);
        if (!groups.contains(group)) {
          groups.add(group);
        }
      }
      return new Account(
          System.getProperty("user.name"), uid, gid, groups, System.getProperty("user.home"));
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("cannot read this process's ids from /proc/self/status", e);
    }
  }

  private static List<String> field(List<String> status, String name) {
    for (String line : status) {
      if (line.startsWith(name)) {
        String rest = line.substring(name.length()).strip();
        return rest.isEmpty() ? List.of() : List.of(rest.split("\\s+"));
      }
    }
    throw new IllegalStateException("no " + name + " in /proc/self/status");
  }
}
