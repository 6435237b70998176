package io.kairos.agent;

import io.kairos.agent.account.Account;
import io.kairos.agent.account.Nss;
import io.kairos.agent.account.TaskOwners;
import io.kairos.agent.isolate.Cgroups;
import io.kairos.agent.isolate.FenceWatchdog;
import io.kairos.agent.isolate.LeaseFile;
import io.kairos.agent.isolate.Orphans;
import io.kairos.agent.isolate.TaskCgroup;
import io.kairos.agent.isolate.TaskLimits;
import io.kairos.protocol.agent.TaskAssignment;
import java.io.IOException;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's hooks around each task: the health check before a start ({@link NodeHealth}), the
 * task's own cgroup (CPU, memory and pids limits, GPU device rules on cgroup v1), and the fence
 * watchdog's registry, so that a task still runs only while the agent holds its lease, even if the
 * agent is frozen or killed.
 *
 * <p>And who each task runs as ({@link TaskOwners}): its job's Unix account when the agent is root,
 * else only the agent's own account's tasks.
 *
 * <p>{@link #open} is the agent's start-up: it kills what a previous agent on this data directory
 * left running and this one does not adopt (orphans), removes their stale cgroups, and starts the
 * watchdog, which keeps the previous agent's lease deadline when tasks are adopted. Thread-safe.
 */
final class NodeIsolation implements TaskHooks, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(NodeIsolation.class);
  private static final long MIB = 1L << 20;

  private final AgentConfig config;
  private final NodeHealth health;
  private final Cgroups cgroups;
  private final LeaseFile lease;
  private final FenceWatchdog watchdog;
  private final TaskOwners owners;
  private final Map<TaskKey, TaskCgroup> groups = new ConcurrentHashMap<>();

  /** How many processes each task registered with the watchdog. */
  private final Map<TaskKey, Integer> registered = new ConcurrentHashMap<>();

  private NodeIsolation(
      AgentConfig config,
      NodeHealth health,
      Cgroups cgroups,
      LeaseFile lease,
      FenceWatchdog watchdog,
      TaskOwners owners) {
    this.config = config;
    this.health = health;
    this.cgroups = cgroups;
    this.lease = lease;
    this.watchdog = watchdog;
    this.owners = owners;
  }

  static NodeIsolation open(AgentConfig config, NodeHealth health) throws IOException {
    return open(config, health, java.util.Set.of());
  }

  /**
   * As {@link #open(AgentConfig, NodeHealth)}, adopting the running tasks named in {@code adopted}
   * (by {@link TaskKey#dirName}): their processes, cgroups and watchdog registrations are kept, and
   * the lease they were started under still holds until this agent renews it.
   */
  static NodeIsolation open(AgentConfig config, NodeHealth health, java.util.Set<String> adopted)
      throws IOException {
    var owners =
        new TaskOwners(
            config.nodeName(),
            TaskOwners.thisProcess(),
            config.allowRootJobs(),
            Nss.system(InstantSource.system()));
    if (owners.agent().isRoot()) {
      log.info("{}", owners.describe());
    } else {
      log.warn("{}", owners.describe());
    }
    AgentFiles.secure(config.dataDir(), owners.agent().isRoot());
    LeaseFile lease = null;
    FenceWatchdog watchdog = null;
    if (config.fenceWatchdog()) {
      for (Orphans.Killed k : Orphans.killAllBut(config.dataDir(), adopted)) {
        log.warn(
            "agent {}: killed {} left by a previous agent (pids {})",
            config.nodeName(),
            k.what(),
            k.pids());
      }
    }
    Cgroups cgroups = null;
    if (config.cgroups()) {
      cgroups = Cgroups.detect(config.nodeName());
      if (cgroups.enforcing()) {
        log.info("agent {}: {}", config.nodeName(), cgroups.describe());
        for (String stale : cgroups.cleanStale(adopted)) {
          log.warn("agent {}: removed a stale cgroup: {}", config.nodeName(), stale);
        }
      } else {
        log.warn("agent {}: {}", config.nodeName(), cgroups.describe());
      }
    } else {
      log.warn(
          "agent {}: cgroups off (--no-cgroups): tasks run without CPU, memory or pids limits;"
              + " they are isolated only by GPU visibility and the kill of their process tree",
          config.nodeName());
    }
    if (config.fenceWatchdog()) {
      lease =
          adopted.isEmpty()
              ? LeaseFile.forThisAgent(config.dataDir())
              : LeaseFile.continuing(config.dataDir());
      watchdog = FenceWatchdog.start(config.dataDir());
      log.info(
          "agent {}: fence watchdog pid {} kills the tasks if the lease runs out",
          config.nodeName(),
          watchdog.process().map(ProcessHandle::pid).orElse(-1L));
    }
    return new NodeIsolation(config, health, cgroups, lease, watchdog, owners);
  }

  /**
   * The controller accepted a heartbeat sent at {@code sentAtNanos}: the watchdog kills the tasks
   * {@code fenceMs} (the lease less the fence margin) after it.
   */
  void renewed(long sentAtNanos, long fenceMs, long epoch) {
    if (lease == null) {
      return;
    }
    try {
      lease.renewUntil(sentAtNanos + fenceMs * 1_000_000L, epoch);
      watchdog.ensureRunning();
    } catch (IOException e) {
      log.error("agent {}: could not renew the fence lease: {}", config.nodeName(), e.toString());
    }
  }

  @Override
  public List<String> healthProblems() {
    return health.checks() ? health.checkNow() : List.of();
  }

  @Override
  public LaunchSpec isolate(LaunchSpec spec, TaskAssignment a) throws IOException {
    if (cgroups == null || !cgroups.enforcing()) {
      return spec;
    }
    TaskCgroup existing = groups.get(spec.key());
    if (existing != null) {
      return spec.withArgv(existing.wrap(spec.argv())); // another process of the same task
    }
    // One cgroup for the task's processes on this node: their CPUs and memory add up.
    int processes = Math.max(1, a.localTasks());
    var limits =
        new TaskLimits(
            a.cpus() * processes,
            a.memoryMb() * MIB * processes,
            0,
            a.gpus() == null ? List.of() : a.gpus());
    Optional<TaskCgroup> group = cgroups.create(spec.key(), limits);
    if (group.isEmpty()) {
      return spec;
    }
    groups.put(spec.key(), group.get());
    for (String note : group.get().notes()) {
      log.info("{}: cgroup: {}", spec.key(), note);
    }
    return spec.withArgv(group.get().wrap(spec.argv()));
  }

  @Override
  public Account owner(TaskAssignment a) throws IOException {
    return owners.ownerOf(a.jobId(), a.runAs());
  }

  /** Who this agent runs tasks as. */
  TaskOwners owners() {
    return owners;
  }

  @Override
  public void started(TaskKey key, Process process) {
    started(key, 0, process);
  }

  @Override
  public void started(TaskKey key, int local, Process process) {
    if (lease == null) {
      return;
    }
    try {
      if (lease.register(key, local, process.toHandle(), Optional.ofNullable(groups.get(key)))) {
        registered.merge(key, local + 1, Math::max);
      } else {
        log.debug("{}: process {} ended before its registration: nothing to guard", key, local);
      }
    } catch (IOException e) {
      registered.merge(key, local + 1, Math::max); // what was written goes with the rest
      log.warn("{}: not registered with the fence watchdog: {}", key, e.getMessage());
    }
  }

  @Override
  public void adopted(TaskKey key, int processes) {
    if (lease == null) {
      return;
    }
    registered.put(key, processes);
    List<java.nio.file.Path> dirs = lease.cgroupsOf(key);
    if (!dirs.isEmpty()) {
      groups.put(key, new TaskCgroup(key, dirs, List.of()));
    }
  }

  @Override
  public void forceKilled(TaskKey key) {
    TaskCgroup group = groups.get(key);
    if (group != null) {
      group.killAll();
    }
  }

  @Override
  public void ended(TaskKey key) {
    if (lease != null) {
      try {
        Integer processes = registered.remove(key);
        if (processes != null) { // else none registered: it ended before it could be
          lease.unregister(key, processes);
        }
      } catch (IOException e) {
        log.warn("{}: could not unregister from the fence watchdog: {}", key, e.getMessage());
      }
    }
    TaskCgroup group = groups.remove(key);
    if (group != null) {
      // Not under the task table's lock: removal waits for the cgroup to empty.
      Thread.ofVirtual()
          .name("kairos-cgroup-rm")
          .start(
              () -> {
                group.killAll();
                if (!group.remove(5_000)) {
                  log.warn("{}: cgroup {} could not be removed", key, group.dirs());
                }
              });
    }
  }

  @Override
  public void close() {
    if (watchdog != null) {
      watchdog.close();
    }
  }
}
