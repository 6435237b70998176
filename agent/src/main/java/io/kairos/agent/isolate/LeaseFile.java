package io.kairos.agent.isolate;

import io.kairos.agent.TaskKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The agent's side of fencing: publishes its lease and its tasks' processes for the {@link
 * FenceWatchdogMain watchdog}.
 *
 * <p>The deadline is a CLOCK_MONOTONIC value: {@link System#nanoTime()} on Linux is {@code
 * clock_gettime(CLOCK_MONOTONIC)} with no per-JVM offset, so another JVM on the same host reads the
 * same clock (a test checks this with two JVMs). Unlike the wall clock it does not jump when NTP
 * steps the time, which would fence too early or too late.
 *
 * <p>Call {@link #renewUntil} after each heartbeat the controller accepts, {@link #register} right
 * after a task's process starts (before anything else can fail) and {@link #unregister} once it has
 * been reaped. Each call is one small atomic file write. Thread-safe.
 */
public final class LeaseFile {
  private final Path dataDir;
  private final ProcessRef agent;

  /**
   * Writes an already expired lease naming {@code agent}, so a watchdog started now knows whom it
   * guards but lets no task run until the first renewal.
   */
  public LeaseFile(Path dataDir, ProcessHandle agent) throws IOException {
    this.dataDir = dataDir;
    this.agent =
        ProcessRef.of(agent)
            .orElseThrow(() -> new IOException("agent process " + agent.pid() + " not found"));
    var privateDir =
        java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
            java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
    Files.createDirectories(FenceFiles.fenceDir(dataDir), privateDir);
    Files.setPosixFilePermissions(
        FenceFiles.fenceDir(dataDir),
        java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
    Files.createDirectories(FenceFiles.tasksDir(dataDir), privateDir);
    FenceFiles.writeLease(dataDir, new FenceFiles.Lease(System.nanoTime(), this.agent, 0));
  }

  public static LeaseFile forThisAgent(Path dataDir) throws IOException {
    return new LeaseFile(dataDir, ProcessHandle.current());
  }

  /**
   * As {@link #forThisAgent}, but keeping the previous agent's deadline and epoch, when there is
   * one: the tasks this agent adopts were started under that lease, and the watchdog must still
   * kill them when it runs out, unless this agent registers and renews it first.
   */
  public static LeaseFile continuing(Path dataDir) throws IOException {
    Optional<FenceFiles.Lease> previous = FenceFiles.readLease(dataDir);
    var lease = forThisAgent(dataDir);
    if (previous.isPresent()) {
      lease.renewUntil(previous.get().deadlineNanos(), previous.get().epoch());
    }
    return lease;
  }

  /** The cgroup directories registered for {@code key}'s first process; empty for none. */
  public List<Path> cgroupsOf(TaskKey key) {
    for (FenceFiles.Registration r : FenceFiles.readRegistrations(dataDir)) {
      if (r.key().equals(key.dirName())) {
        return r.cgroups();
      }
    }
    return List.of();
  }

  /** Extends the lease to {@code deadlineNanos}, a {@link System#nanoTime()} value. */
  public void renewUntil(long deadlineNanos, long epoch) throws IOException {
    FenceFiles.writeLease(dataDir, new FenceFiles.Lease(deadlineNanos, agent, epoch));
  }

  /** Extends the lease to {@code lease} from now. */
  public void renewFor(Duration lease, long epoch) throws IOException {
    renewUntil(System.nanoTime() + lease.toNanos(), epoch);
  }

  /** Ends the lease now: the watchdog fences within its next tick. */
  public void expireNow(long epoch) throws IOException {
    renewUntil(System.nanoTime(), epoch);
  }

  /**
   * Registers a started task's process and its cgroup (if any) for the watchdog.
   *
   * @return false, registering nothing, when the process has already exited (nothing to guard)
   */
  public boolean register(TaskKey key, ProcessHandle process, Optional<TaskCgroup> cgroup)
      throws IOException {
    return register(key, 0, process, cgroup);
  }

  /**
   * Registers process {@code local} of a task that runs several (tasks per node): each has its own
   * registration, {@code <key>} for the first and {@code <key>+<local>} for the others.
   *
   * @return false, registering nothing, when the process has already exited (nothing to guard)
   */
  public boolean register(
      TaskKey key, int local, ProcessHandle process, Optional<TaskCgroup> cgroup)
      throws IOException {
    Optional<ProcessRef> ref = ProcessRef.of(process);
    if (ref.isEmpty()) {
      return false;
    }
    List<Path> dirs = cgroup.map(TaskCgroup::dirs).orElse(List.of());
    FenceFiles.writeRegistration(
        dataDir, new FenceFiles.Registration(name(key, local), ref.get(), dirs));
    return true;
  }

  public void unregister(TaskKey key) throws IOException {
    unregister(key, 1);
  }

  /** Forgets the registrations of the task's {@code processes} processes. */
  public void unregister(TaskKey key, int processes) throws IOException {
    for (int local = 0; local < processes; local++) {
      Files.deleteIfExists(FenceFiles.tasksDir(dataDir).resolve(name(key, local)));
    }
  }

  private static String name(TaskKey key, int local) {
    return local == 0 ? key.dirName() : key.dirName() + "+" + local;
  }

  public Path dataDir() {
    return dataDir;
  }
}
