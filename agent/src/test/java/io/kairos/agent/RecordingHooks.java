package io.kairos.agent;

import io.kairos.protocol.agent.TaskAssignment;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;

/**
 * Task hooks that record every call, in order ({@code "health"}, {@code "isolate 1-1-0"}, {@code
 * "started 1-1-0"}, {@code "forceKilled 1-1-0"}, {@code "ended 1-1-0"}), and report the health
 * problems, wrap the argv or fail the isolation as a test sets them. Thread-safe.
 */
final class RecordingHooks implements TaskHooks {
  final List<String> calls = new CopyOnWriteArrayList<>();

  /** What {@link #healthProblems} returns. */
  volatile List<String> problems = List.of();

  /** How {@link #isolate} changes the argv. */
  volatile UnaryOperator<List<String>> wrap = argv -> argv;

  /** When not null, {@link #isolate} throws an {@link IOException} with this message. */
  volatile String isolationFailure;

  @Override
  public List<String> healthProblems() {
    calls.add("health");
    return problems;
  }

  @Override
  public LaunchSpec isolate(LaunchSpec spec, TaskAssignment assignment) throws IOException {
    calls.add("isolate " + spec.key().dirName());
    if (isolationFailure != null) {
      throw new IOException(isolationFailure);
    }
    return new LaunchSpec(
        spec.key(),
        wrap.apply(spec.argv()),
        spec.env(),
        spec.workdir(),
        spec.taskDir(),
        spec.stdout(),
        spec.stderr());
  }

  @Override
  public void started(TaskKey key, Process process) {
    calls.add("started " + key.dirName());
  }

  @Override
  public void forceKilled(TaskKey key) {
    calls.add("forceKilled " + key.dirName());
  }

  @Override
  public void ended(TaskKey key) {
    calls.add("ended " + key.dirName());
  }

  /** Whether any call names {@code what} ({@code "started"}, {@code "isolate"}, ...). */
  boolean any(String what) {
    return calls.stream().anyMatch(c -> c.startsWith(what + " "));
  }
}
