package io.kairos.agent;

import io.kairos.agent.account.Account;
import io.kairos.protocol.agent.TaskAssignment;
import java.io.IOException;
import java.util.List;
import java.util.function.Supplier;

/**
 * Task hooks that forward every call to the hooks {@code target} gives at the time of the call. The
 * agent builds its task table before it opens its {@link NodeIsolation} (in {@link Agent#start}),
 * and no task arrives before that: the table gets these, the isolation answers.
 */
final class ForwardingHooks implements TaskHooks {
  private final Supplier<? extends TaskHooks> target;

  ForwardingHooks(Supplier<? extends TaskHooks> target) {
    this.target = target;
  }

  @Override
  public List<String> healthProblems() {
    return target.get().healthProblems();
  }

  @Override
  public Account owner(TaskAssignment a) throws IOException {
    return target.get().owner(a);
  }

  @Override
  public LaunchSpec isolate(LaunchSpec spec, TaskAssignment a) throws IOException {
    return target.get().isolate(spec, a);
  }

  @Override
  public void started(TaskKey key, Process process) {
    target.get().started(key, process);
  }

  @Override
  public void started(TaskKey key, int local, Process process) {
    target.get().started(key, local, process);
  }

  @Override
  public void adopted(TaskKey key, int processes) {
    target.get().adopted(key, processes);
  }

  @Override
  public void forceKilled(TaskKey key) {
    target.get().forceKilled(key);
  }

  @Override
  public void ended(TaskKey key) {
    target.get().ended(key);
  }
}
