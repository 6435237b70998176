package io.kairos.agent;

import io.kairos.agent.account.Account;
import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskKill;
import io.kairos.protocol.agent.TaskRef;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SequencedSet;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tasks this agent holds, keyed by (job, attempt, task), and their supervision: launch, stop on
 * request, time and output limits, SIGKILL after the grace period, and reports.
 *
 * <p>Reconciliation rules (see {@code io.kairos.protocol.agent}): a launch for a key already held,
 * or already forgotten, is ignored; a kill for a task not held is ignored; an exited task is
 * reported until a reply's {@code forget} names it. A task the agent stopped keeps the first reason
 * it was stopped for.
 *
 * <p>Time (start and end stamps, limits, grace) comes only from the injected {@link InstantSource};
 * limits and grace are checked by {@link #tick}, which the owner calls every so often (tests call
 * it after advancing a manual clock). Each process has a virtual thread of its own that waits for
 * it to exit. Every change a heartbeat should carry (a launch, an exit) bumps {@link #version} and
 * runs the {@code onChange} callback.
 *
 * <p>Thread-safe: every method locks the table. A task started under a {@link Supervisor} is
 * recorded for the next agent ({@link TaskRecord}), which takes it over with {@link #adopt}.
 */
public final class TaskTable {
  private static final Logger log = LoggerFactory.getLogger(TaskTable.class);

  /** The exit code reported for a task whose process could not be started, as shells do. */
  public static final int LAUNCH_FAILED_EXIT_CODE = 127;

  /** How many forgotten keys are remembered, so a late repeated launch is still ignored. */
  static final int FORGOTTEN_KEPT = 10_000;

  /** How long a step's spooled output outlives the step's end being recorded: srun's last read. */
  static final Duration SPOOL_KEPT = Duration.ofMinutes(2);

  /** How long an exit waits for a step process's pipes to drain (a child may hold them open). */
  static final Duration SPOOL_DRAIN = Duration.ofSeconds(2);

  private final String node;
  private final Path dataDir;
  private final Duration killGrace;
  private final long maxOutputBytes;
  private final Map<String, String> agentEnv;
  private final Map<String, String> kairosEnv;
  private final ProcessLauncher launcher;
  private final InstantSource clock;
  private final Runnable onChange;
  private final TaskHooks hooks;
  private final TreeMap<TaskKey, HeldTask> tasks = new TreeMap<>();
  private final SequencedSet<TaskKey> forgotten = new LinkedHashSet<>();
  // Spool directories of forgotten steps, and when they may go.
  private final Map<Path, Instant> spoolsToDelete = new TreeMap<>();
  private long version;

  /**
   * @param maxOutputBytes stop a task whose stdout plus stderr pass this; 0 for no limit
   * @param agentEnv the environment tasks inherit ({@code System.getenv()} in production)
   * @param onChange called (under the table's lock: keep it short) after every change a heartbeat
   *     should report
   */
  public TaskTable(
      String node,
      Path dataDir,
      Duration killGrace,
      long maxOutputBytes,
      Map<String, String> agentEnv,
      ProcessLauncher launcher,
      InstantSource clock,
      Runnable onChange) {
    this(
        node,
        dataDir,
        killGrace,
        maxOutputBytes,
        agentEnv,
        launcher,
        clock,
        onChange,
        TaskHooks.NONE);
  }

  /**
   * @param hooks the health check before each start, the process's isolation (cgroup) and its
   *     registration with the fence watchdog
   */
  public TaskTable(
      String node,
      Path dataDir,
      Duration killGrace,
      long maxOutputBytes,
      Map<String, String> agentEnv,
      ProcessLauncher launcher,
      InstantSource clock,
      Runnable onChange,
      TaskHooks hooks) {
    this(
        node,
        dataDir,
        killGrace,
        maxOutputBytes,
        agentEnv,
        Map.of(),
        launcher,
        clock,
        onChange,
        hooks);
  }

  /**
   * @param kairosEnv what every task is told about Kairos: the controllers' URLs, the CA, the bin
   *     directory of srun and scontrol ({@link TaskEnvironment})
   */
  public TaskTable(
      String node,
      Path dataDir,
      Duration killGrace,
      long maxOutputBytes,
      Map<String, String> agentEnv,
      Map<String, String> kairosEnv,
      ProcessLauncher launcher,
      InstantSource clock,
      Runnable onChange,
      TaskHooks hooks) {
    this.kairosEnv = Map.copyOf(kairosEnv);
    this.hooks = Objects.requireNonNull(hooks, "hooks");
    this.node = Objects.requireNonNull(node, "node");
    this.dataDir = Objects.requireNonNull(dataDir, "dataDir");
    this.killGrace = Objects.requireNonNull(killGrace, "killGrace");
    this.maxOutputBytes = maxOutputBytes;
    this.agentEnv = Map.copyOf(agentEnv);
    this.launcher = Objects.requireNonNull(launcher, "launcher");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.onChange = Objects.requireNonNull(onChange, "onChange");
  }

  /**
   * Takes the assigned task unless its key is held or forgotten, or a live task still has one of
   * its GPUs ({@link GpuGuard}; taken when sent again). On an unhealthy node it is held as EXITED
   * ({@link ExitReason#NODE_UNHEALTHY}), never started. A gang task with a barrier is held READY
   * until {@link #go}; any other starts at once; one that cannot start is EXITED ({@link
   * ExitReason#LAUNCH_FAILED}).
   *
   * @return false when the assignment was ignored
   */
  public boolean launch(TaskAssignment assignment) {
    TaskKey key;
    try {
      key = TaskKey.of(assignment);
    } catch (IllegalArgumentException e) {
      log.warn("ignoring an assignment with a bad key: {}", e.getMessage());
      return false;
    }
    synchronized (this) {
      if (tasks.containsKey(key)
          || forgotten.contains(key)
          || GpuGuard.mustWait(key, assignment, tasks.values())) {
        return false;
      }
    }
    // Outside the lock: a real health check runs nvidia-smi, and NSS may ask a directory server.
    List<String> problems = hooks.healthProblems();
    Account owner = null;
    String refused = null;
    try {
      owner = problems.isEmpty() ? hooks.owner(assignment) : null;
    } catch (IOException e) {
      refused = String.valueOf(e.getMessage());
    }
    synchronized (this) {
      if (tasks.containsKey(key) || forgotten.contains(key)) {
        return false;
      }
      var task = new HeldTask(key, assignment, killGrace);
      tasks.put(key, task);
      if (!problems.isEmpty()) {
        task.refused(ExitReason.NODE_UNHEALTHY, String.join("; ", problems), clock.instant());
        log.warn("{}: not started, the node is unhealthy: {}", key, problems);
        changed();
        return true;
      }
      try {
        if (refused != null) {
          throw new IllegalArgumentException(refused);
        }
        task.specs = LaunchSpec.all(assignment, node, dataDir, agentEnv, kairosEnv, owner);
      } catch (IllegalArgumentException e) {
        task.refused(ExitReason.LAUNCH_FAILED, String.valueOf(e.getMessage()), clock.instant());
        log.warn("{}: launch failed: {}", key, e.getMessage());
        changed();
        return true;
      }
      if (assignment.barrier()) {
        task.status = TaskStatus.READY;
        log.info("{}: ready, waiting for the rest of its gang", key);
        changed();
        return true;
      }
      startProcess(task);
      return true;
    }
  }

  /**
   * Starts a READY task: its whole gang is ready.
   *
   * @return false when the task is not held or not READY
   */
  public synchronized boolean go(TaskRef ref) {
    HeldTask task = tasks.get(TaskKey.of(ref));
    if (task == null || task.status != TaskStatus.READY) {
      return false;
    }
    startProcess(task);
    return true;
  }

  /**
   * Ends a READY task without starting it: the node's health check failed between its preparation
   * and the gang's go.
   *
   * @return false when the task is not held or not READY
   */
  public synchronized boolean refuse(TaskRef ref, List<String> problems) {
    HeldTask task = tasks.get(TaskKey.of(ref));
    if (task == null || task.status != TaskStatus.READY) {
      return false;
    }
    task.refused(ExitReason.NODE_UNHEALTHY, String.join("; ", problems), clock.instant());
    log.warn("{}: not started at the barrier, the node is unhealthy: {}", task.key, problems);
    changed();
    return true;
  }

  /**
   * Starts the task's processes; called under the lock. When one cannot start, those already
   * started are stopped and the task ends LAUNCH_FAILED once they have exited.
   */
  private void startProcess(HeldTask task) {
    TaskKey key = task.key;
    boolean isolated = false;
    String failed = null;
    try {
      for (int local = 0; local < task.specs.size(); local++) {
        LaunchSpec spec = hooks.isolate(task.specs.get(local), task.assignment);
        isolated = true;
        task.countOutputBefore(spec);
        Process process = launcher.start(spec);
        OutputSpool spool =
            spec.spooled()
                ? OutputSpool.start(
                    process, spec.stdout(), spec.stderr(), "kairos-spool-" + key.dirName())
                : null;
        var proc = new HeldTask.Proc(local, spec, process, spool);
        task.procs.add(proc);
        hooks.started(key, local, process);
        watch(key, proc, null);
      }
    } catch (IllegalArgumentException | IOException e) {
      failed = String.valueOf(e.getMessage());
      log.warn("{}: launch failed: {}", key, e.getMessage());
    } catch (RuntimeException e) {
      // A bug here must still end as a report, not as a task stuck in STARTING.
      failed = "agent error: " + e;
      log.error("{}: launch failed", key, e);
    }
    if (!task.hasProcesses()) {
      task.refused(ExitReason.LAUNCH_FAILED, failed, clock.instant());
      if (isolated) {
        // Isolated but never started: its cgroup must still be removed.
        hooks.ended(key);
      }
      changed();
      return;
    }
    task.started(clock.instant());
    var first = task.procs.getFirst();
    Adoption.record(dataDir, task);
    log.info(
        "{}: started pid {} ({} process(es)){}: {}",
        key,
        first.handle.pid(),
        task.procs.size(),
        first.spec.owner() == null ? "" : " as " + first.spec.owner(),
        task.assignment.command());
    if (failed != null) {
      task.specs = List.copyOf(task.specs.subList(0, task.procs.size()));
      stop(task, ExitReason.LAUNCH_FAILED, failed);
    }
    changed();
  }

  /**
   * Stops every running task of the job attempt {@code kill} names (SIGTERM now, SIGKILL after the
   * grace), with reason {@link ExitReason#KILLED}; a checkpoint request only signals them once.
   *
   * @return how many tasks were asked to stop (or signalled); 0 when none is held
   */
  public synchronized int kill(TaskKill kill) {
    if (kill.checkpointSignal() != null) {
      return HeldTask.askCheckpoint(tasks.values(), kill, launcher, this::changed);
    }
    int stopped = 0;
    for (HeldTask task : tasks.values()) {
      if (task.key.jobId() == kill.jobId()
          && task.key.attempt() == kill.attempt()
          && (kill.step() == null || kill.step() == task.key.step())) {
        if (kill.graceSec() != null && kill.graceSec() >= 0 && task.stopRequestedAt == null) {
          task.grace = Duration.ofSeconds(kill.graceSec());
        }
        stopped += stop(task, ExitReason.KILLED, HeldTask.killedMessage(kill)) ? 1 : 0;
      }
    }
    return stopped;
  }

  /** Stops every running task (fencing, shutdown): the stop signal now, SIGKILL after the grace. */
  public synchronized void killAll(ExitReason reason, String message) {
    for (HeldTask task : tasks.values()) {
      stop(task, reason, message);
    }
  }

  /**
   * SIGKILLs every task now, without a grace (the lease ran out: the controller may already have
   * given the GPUs to another job).
   */
  public synchronized void killAllNow(ExitReason reason, String message) {
    for (HeldTask task : tasks.values()) {
      stop(task, reason, message);
      if (task.hasProcesses() && task.status != TaskStatus.EXITED && !task.forced) {
        forceKill(task);
      }
    }
  }

  /**
   * Drops an exited task the controller has recorded. A running or unknown task is not affected.
   *
   * @return whether a task was dropped
   */
  public synchronized boolean forget(TaskRef ref) {
    TaskKey key = TaskKey.of(ref);
    HeldTask task = tasks.get(key);
    if (task == null || task.status != TaskStatus.EXITED) {
      return false;
    }
    tasks.remove(key);
    forgotten.add(key);
    TaskRecord.delete(dataDir, key);
    if (key.isStep()) {
      spoolsToDelete.put(LaunchSpec.spoolDir(dataDir, key), clock.instant().plus(SPOOL_KEPT));
    }
    if (forgotten.size() > FORGOTTEN_KEPT) {
      forgotten.removeFirst();
    }
    return true;
  }

  /**
   * Enforces time and output limits and sends SIGKILL to tasks whose grace has run out. Call it
   * every ~100 ms; it is cheap when nothing is due.
   */
  public synchronized void tick() {
    Instant now = clock.instant();
    OutputSpool.deleteDue(spoolsToDelete, now);
    for (HeldTask task : tasks.values()) {
      if (!task.hasProcesses()) {
        continue;
      }
      if (task.status == TaskStatus.RUNNING && task.stopRequestedAt == null) {
        task.warnIfDue(now, launcher);
        if (task.deadline != null && !now.isBefore(task.deadline)) {
          stop(task, ExitReason.TIME_LIMIT, "time limit " + task.timeLimitSec + "s reached");
        } else if (maxOutputBytes > 0 && task.outputBytes() > maxOutputBytes) {
          stop(task, ExitReason.OUTPUT_LIMIT, "output passed " + maxOutputBytes + " bytes");
        }
      }
      if (task.stopRequestedAt != null
          && !task.forced
          && !now.isBefore(task.stopRequestedAt.plus(task.grace))) {
        forceKill(task);
      }
    }
  }

  /** Sends SIGKILL now to every task being stopped, without waiting for the grace (shutdown). */
  public synchronized void forceKillStopping() {
    for (HeldTask task : tasks.values()) {
      if (task.stopRequestedAt != null && !task.forced) {
        forceKill(task);
      }
    }
  }

  /** Every task held, in key order: running ones and exited ones not yet forgotten. */
  public synchronized List<TaskReport> reports() {
    List<TaskReport> reports = new ArrayList<>(tasks.size());
    for (HeldTask task : tasks.values()) {
      reports.add(task.report());
    }
    return reports;
  }

  public synchronized Optional<TaskReport> report(TaskKey key) {
    return Optional.ofNullable(tasks.get(key)).map(HeldTask::report);
  }

  /** Whether the task is held and has not exited (its output may still grow). */
  public synchronized boolean isActive(TaskKey key) {
    HeldTask task = tasks.get(key);
    return task != null && task.status != TaskStatus.EXITED;
  }

  /** How many processes the task runs (or ran); 0 when it is not held. */
  public synchronized int processes(TaskKey key) {
    HeldTask task = tasks.get(key);
    return task == null ? 0 : Math.max(task.specs.size(), task.procs.size());
  }

  /** Whether the task has been sent SIGTERM and has not exited yet. */
  synchronized boolean isStopping(TaskKey key) {
    HeldTask task = tasks.get(key);
    return task != null && task.status != TaskStatus.EXITED && task.stopRequestedAt != null;
  }

  /**
   * Marks news for the next heartbeat that is not a task's (the node's health changed), so a held
   * long poll is cut short and the news goes out at once.
   */
  public synchronized void newsOutsideTheTable() {
    changed();
  }

  /** Counts the changes a heartbeat should carry; a heartbeat that saw version v reported them. */
  public synchronized long version() {
    return version;
  }

  /**
   * Waits, at most {@code max} of real time, until no held task is running.
   *
   * @return whether none is
   */
  public synchronized boolean awaitAllExited(Duration max) throws InterruptedException {
    long deadline = System.nanoTime() + max.toNanos();
    while (tasks.values().stream().anyMatch(t -> t.status != TaskStatus.EXITED)) {
      long leftMs = Duration.ofNanos(deadline - System.nanoTime()).toMillis();
      if (leftMs <= 0) {
        return false;
      }
      wait(leftMs);
    }
    return true;
  }

  /**
   * Takes over the tasks a previous agent on this data directory left ({@link TaskRecord#scan}):
   * running ones are watched again, ones that ended meanwhile are held EXITED with the status their
   * supervisor recorded, and all are reported. Call before the first registration.
   *
   * @return the keys of the tasks adopted
   */
  public synchronized List<TaskKey> adopt(List<TaskRecord.Found> found) {
    var adopted = new ArrayList<TaskKey>();
    for (TaskRecord.Found f : found) {
      TaskKey key = f.record().key();
      if (tasks.containsKey(key) || forgotten.contains(key)) {
        continue;
      }
      HeldTask task = Adoption.task(f, node, dataDir, agentEnv, kairosEnv, killGrace, clock);
      tasks.put(key, task);
      adopted.add(key);
      if (task.status != TaskStatus.EXITED) {
        hooks.adopted(key, task.procs.size());
        for (HeldTask.Proc p : task.procs) {
          if (p.exit == null) {
            watch(key, p, f.live().get(p.local).orElseThrow());
          }
        }
      }
      changed();
    }
    return adopted;
  }

  /**
   * Starts a thread that waits for {@code proc} (a thread of its own rather than onExit(), which
   * completes on the common pool): a process started here, or ({@code adopted}) a supervisor left
   * by a previous agent.
   */
  private void watch(TaskKey key, HeldTask.Proc proc, io.kairos.agent.isolate.ProcessRef adopted) {
    Thread.ofVirtual()
        .name("kairos-task-" + key.dirName() + "-" + proc.local)
        .start(
            () -> {
              exited(key, proc, Adoption.awaitExit(dataDir, key, proc, adopted, SPOOL_DRAIN));
            });
  }

  private synchronized void exited(TaskKey key, HeldTask.Proc proc, Adoption.Ended end) {
    HeldTask task = tasks.get(key);
    if (task == null
        || !task.procs.contains(proc)
        || proc.exit != null
        || task.status == TaskStatus.EXITED) {
      return;
    }
    proc.exit = end.code();
    proc.setup = end.setup();
    task.lostUnwatched(end.lost());
    if (!task.allExited() || task.procs.size() < task.specs.size()) {
      return; // others of the entry still run
    }
    task.exited(clock.instant());
    task.failedSetup();
    hooks.ended(key);
    log.info(
        "{}: exited with code {}{}",
        key,
        task.exitCode,
        task.reason == null ? "" : " (" + task.reason + ")");
    changed();
  }

  /**
   * The job's stop signal (SIGTERM unless it chose another) to the task's tree, unless it has
   * exited or is already being stopped; a READY task, which has no process, just ends.
   */
  private boolean stop(HeldTask task, ExitReason reason, String message) {
    if (task.status == TaskStatus.READY) {
      task.refused(reason, message, clock.instant());
      task.exitCode = 128 + 15;
      log.info("{}: dropped before it started ({}: {})", task.key, reason, message);
      changed();
      return true;
    }
    if (task.status != TaskStatus.RUNNING || task.stopRequestedAt != null) {
      return false;
    }
    task.reason = reason;
    task.message = message;
    task.stopRequestedAt = clock.instant();
    String signal = task.assignment.killSignal();
    // A step whose srun was signalled: SIGKILL at once, as Slurm's (no stop signal first).
    boolean now = task.grace.isZero() && task.key.isStep();
    for (HeldTask.Proc p : task.procs) {
      if (p.exit == null) {
        p.tree = now ? List.of() : launcher.signal(p.handle, signal);
      }
    }
    log.info(
        "{}: SIG{} ({}: {}); SIGKILL in {} ms",
        task.key,
        signal == null ? "TERM" : signal,
        reason,
        message,
        task.grace.toMillis());
    if (task.grace.isZero()) {
      forceKill(task);
    }
    return true;
  }

  private void forceKill(HeldTask task) {
    log.info("{}: sending SIGKILL to its process tree", task.key);
    for (HeldTask.Proc p : task.procs) {
      if (p.handle != null) {
        launcher.forceKill(p.handle, p.tree, p.supervised);
      }
    }
    hooks.forceKilled(task.key);
    task.forced = true;
  }

  private void changed() {
    version++;
    notifyAll();
    onChange.run();
  }
}
