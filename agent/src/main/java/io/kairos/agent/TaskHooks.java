package io.kairos.agent;

import io.kairos.agent.account.Account;
import io.kairos.protocol.agent.TaskAssignment;
import java.io.IOException;
import java.util.List;

/**
 * What the {@link TaskTable} asks of the node around each task: a health check before the start,
 * the isolation of the process (its cgroup), and its registration with the fence watchdog that
 * kills it should the agent lose its lease while frozen. The table calls them in this order: {@link
 * #healthProblems}, {@link #owner}, {@link #isolate}, {@link #started}, and {@link #ended} once the
 * process has exited (or, after {@link #isolate}, once its start has failed).
 */
public interface TaskHooks {
  /** Nothing checked, nothing isolated: emulated nodes and unit tests. */
  TaskHooks NONE = new TaskHooks() {};

  /** The node's problems right now; empty when healthy. Called outside the table's lock. */
  default List<String> healthProblems() {
    return List.of();
  }

  /**
   * The account the task runs as, whose own shell opens its files ({@link UserLaunch}); null for
   * none: the agent opens them (unit tests). Called before the task is prepared, outside the
   * table's lock (NSS may ask a directory server).
   *
   * @throws IOException saying why the task must not start (an account this agent cannot or may not
   *     run); the task fails with that message
   */
  default Account owner(TaskAssignment assignment) throws IOException {
    return null;
  }

  /**
   * The spec to start: the same, or one whose argv first moves the process into the task's cgroup.
   *
   * @throws IOException when the isolation cannot be set up (the launch fails, naming why)
   */
  default LaunchSpec isolate(LaunchSpec spec, TaskAssignment assignment) throws IOException {
    return spec;
  }

  /** The process started. */
  default void started(TaskKey key, Process process) {}

  /**
   * Process {@code local} of a task that runs several (tasks per node) started; by default the
   * first is {@link #started(TaskKey, Process)} and the others are not registered.
   */
  default void started(TaskKey key, int local, Process process) {
    if (local == 0) {
      started(key, process);
    }
  }

  /**
   * A task a previous agent started, with {@code processes} processes, was adopted ({@link
   * TaskTable#adopt}): its cgroup and watchdog registrations are this agent's to end now.
   */
  default void adopted(TaskKey key, int processes) {}

  /** The grace ran out and the task's tree got SIGKILL: kill what escaped the tree too. */
  default void forceKilled(TaskKey key) {}

  /**
   * The process exited, or the task was isolated but its process could not start; its cgroup may be
   * removed and the watchdog forget it.
   */
  default void ended(TaskKey key) {}
}
