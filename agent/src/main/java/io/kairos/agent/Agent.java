package io.kairos.agent;

import io.kairos.agent.ControllerClient.Outcome;
import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.HeartbeatReply;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.Registration;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskKill;
import io.kairos.protocol.agent.TaskRef;
import io.kairos.protocol.agent.TaskReport;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node agent: registers the node, heartbeats, and runs what the controller assigns.
 *
 * <p>Use:
 *
 * <pre>{@code
 * var agent = new Agent(config, InstantSource.system(), new SplittableRandom());
 * agent.start();                       // binds the log server; registration runs in background
 * Runtime.getRuntime().addShutdownHook(new Thread(agent::close));
 * AgentExit exit = agent.awaitStop();  // until close(), or the controller refuses the token
 * System.exit(exit.isFailure() ? 1 : 0);
 * }</pre>
 *
 * <p>The loop, on one thread: register (retrying with {@link Backoff} until a controller answers),
 * then heartbeat. A heartbeat carries every task's report and asks the controller to hold its reply
 * (a long poll) up to {@code min(heartbeatWaitMs, heartbeatIntervalMs, leaseMs / 3)}, or not at all
 * when there is news (a task started or exited). A task that changes state while a long poll is in
 * flight abandons it and reports at once; the protocol being a reconciliation, the controller sends
 * whatever that reply held again. Each reply is applied (launch, kill, forget). A reply saying
 * {@code fenced} kills every task and registers again for a new epoch. A 421 moves to the leader it
 * names; a connection failure to the next controller URL, after a backoff. With {@code
 * heartbeatWaitMs} 0 it heartbeats every {@code heartbeatIntervalMs} instead, and at once on news.
 *
 * <p>Calls carry the node's own credential, or the join token to join ({@link AgentIdentity}). A
 * heartbeat refused (401, 403) kills every task and registers again; a registration refused with
 * the join token stops the agent.
 *
 * <p>Fencing on the agent's side: a ticker (every {@link #TICK}) enforces task limits and, when no
 * heartbeat has been accepted for longer than the lease ({@link Lease}), kills every task at once,
 * since the controller may already have given their GPUs to others.
 *
 * <p>Time for leases and limits comes from the injected {@link InstantSource}; jitter from the
 * injected {@link RandomGenerator}, which only the loop thread uses. Pacing and backoff waits are
 * real time. Thread-safe.
 */
public final class Agent implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Agent.class);

  /** How often limits, grace periods and the lease are checked. */
  public static final Duration TICK = Duration.ofMillis(100);

  private final AgentConfig config;
  private final InstantSource clock;
  private final Backoff backoff;
  private final ControllerClient client;
  private final TaskTable table;
  private final NodeHealth health;
  private volatile NodeIsolation isolation;
  private ScheduledExecutorService healthChecks;
  private final Wakeup wakeup = new Wakeup();
  private final AtomicReference<AgentExit> exit = new AtomicReference<>();
  private final AtomicBoolean shutDown = new AtomicBoolean();
  private final CountDownLatch terminated = new CountDownLatch(1);
  private volatile boolean stopping;

  // Stop leaving the tasks to the next agent (detach); report those adopted at start.
  private volatile boolean detaching;
  private volatile boolean reportAdopted;

  private LogServer logServer;
  private ScheduledExecutorService ticker;
  private Thread loop;
  private volatile String address;

  private final Lease lease;
  // Retry state, used by the loop thread only.
  private final Retries retries;
  private int fencesInARow;

  /** The node's credential and which one the next call presents. */
  private final AgentIdentity identity;

  public Agent(AgentConfig config, InstantSource clock, RandomGenerator random) {
    this.config = Objects.requireNonNull(config, "config");
    this.lease = new Lease(config.fenceMarginMs());
    this.clock = Objects.requireNonNull(clock, "clock");
    this.backoff = new Backoff(random);
    this.identity = new AgentIdentity(config);
    this.client =
        new ControllerClient(
            config.controllers(), ControllerTrust.of(config), identity.keyManager());
    this.retries = new Retries(config.nodeName(), config.controllers(), backoff, client);
    try {
      this.health = NodeHealth.of(config);
    } catch (io.kairos.agent.gpu.NvidiaSmiException e) {
      throw new IllegalStateException("GPU discovery failed: " + e.getMessage(), e);
    }
    this.table =
        new TaskTable(
            config.nodeName(),
            config.dataDir(),
            Duration.ofMillis(config.killGraceMs()),
            config.maxTaskOutputBytes(),
            System.getenv(),
            KairosEnv.forTasks(config),
            new ProcessLauncher(),
            clock,
            wakeup::signal,
            new ForwardingHooks(() -> isolation)); // opened in start(), before any task
  }

  /** Whether {@code dataDir} holds a node's own credential, so its agent needs no join token. */
  public static boolean holdsCredential(java.nio.file.Path dataDir) {
    return NodeKeys.existIn(dataDir);
  }

  /**
   * Starts the log server (so its address can be registered), the ticker and the loop, and returns;
   * registration and heartbeats run in the background.
   *
   * @throws IOException when the log server cannot bind its host and port
   */
  public synchronized void start() throws IOException {
    if (loop != null || stopping) {
      throw new IllegalStateException(
          "agent " + config.nodeName() + " was already started or closed");
    }
    // Tasks a previous agent left under their supervisors are adopted, not killed.
    List<TaskRecord.Found> found = TaskRecord.scan(config.dataDir());
    isolation = NodeIsolation.open(config, health, TaskRecord.running(found));
    reportAdopted = !table.adopt(found).isEmpty();
    logServer = identity.open(config.listenHost(), config.listenPort(), config.dataDir(), table);
    address = identity.address(config.listenHost(), logServer.port());
    ticker =
        Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("kairos-agent-tick").daemon().factory());
    ticker.scheduleWithFixedDelay(this::tick, 0, TICK.toMillis(), TimeUnit.MILLISECONDS);
    if (health.checks()) {
      healthChecks =
          Executors.newSingleThreadScheduledExecutor(
              Thread.ofPlatform().name("kairos-agent-health").daemon().factory());
      healthChecks.scheduleWithFixedDelay(
          this::checkHealth, 0, config.healthIntervalMs(), TimeUnit.MILLISECONDS);
    }
    loop = Thread.ofPlatform().name("kairos-agent-" + config.nodeName()).start(this::run);
    log.info(
        "agent {} started; logs at {}; controllers {}",
        config.nodeName(),
        address,
        config.controllers());
  }

  /**
   * Blocks until the agent has stopped and every task has been stopped.
   *
   * @return whether it was closed or failed (the controller refused the join token)
   */
  public AgentExit awaitStop() throws InterruptedException {
    terminated.await();
    return exit.get();
  }

  /**
   * Stops the agent: ends the loop, stops every task (SIGTERM, then SIGKILL after the grace) and
   * the log server. Blocks until done; idempotent.
   */
  @Override
  public void close() {
    exit.compareAndSet(null, AgentExit.closed());
    stopping = true;
    wakeup.signal();
    boolean interrupted = false;
    Thread running;
    synchronized (this) {
      running = loop;
    }
    if (running != null && running != Thread.currentThread()) {
      try {
        running.join();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    shutdown();
    try {
      terminated.await();
    } catch (InterruptedException e) {
      interrupted = true;
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Stops the agent but not its tasks (an upgrade, a restart): they run on under their supervisors
   * and the fence watchdog, which kills them if the lease runs out, until the next agent on this
   * data directory adopts them. Without a watchdog this is {@link #close}. Blocks until done.
   */
  public void detach() {
    detaching = config.fenceWatchdog();
    close();
  }

  /**
   * The log server's base URL, as registered ({@code http://127.0.0.1:41234}); null before start.
   */
  public String address() {
    return address;
  }

  /** Whose jobs this agent runs, in words (after {@link #start}). */
  public String runsAs() {
    return isolation.owners().describe();
  }

  /** The current lease epoch; 0 before the first registration. */
  public long epoch() {
    return lease.epoch();
  }

  /** Every task held, as the next heartbeat will report them. */
  public List<TaskReport> tasks() {
    return table.reports();
  }

  private void run() {
    try {
      while (!stopping) {
        if (register()) {
          heartbeatUntilFenced();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      log.error("agent {} loop failed", config.nodeName(), e);
      fail("agent loop failed: " + e);
    } finally {
      if (exit.get() != null && exit.get().isFailure()) {
        shutdown();
      }
    }
  }

  /** Registers until a controller accepts; false when stopping instead. */
  private boolean register() throws InterruptedException {
    var registration =
        new Registration(
            config.nodeName(),
            address,
            health.devices(config),
            config.cpus(),
            config.memoryBytes(),
            config.labels(),
            config.zone(),
            config.block(),
            config.rack(),
            health.nvlinkDomainSize(config),
            identity.logToken(),
            isolation.owners().runsOnlyAs(),
            identity.credential(),
            reportAdopted ? table.reports() : null);
    while (!stopping) {
      identity.authorize(client);
      Instant sentAt = clock.instant();
      long sentAtNanos = System.nanoTime();
      Optional<Outcome<Registered>> outcome =
          call(ControllerClient.REGISTER, registration, Registered.class, 0, -1);
      if (outcome.isEmpty()) {
        return false;
      }
      if (outcome.get() instanceof Outcome.Ok<Registered>(Registered registered)) {
        Optional<String> unusable = identity.identify(registered, client);
        if (unusable.isPresent()) {
          fail(unusable.get() + "; stopping");
          return false;
        }
        registered(registered, sentAt);
        reportAdopted = false;
        isolation.renewed(sentAtNanos, lease.fenceMs(), registered.epoch());
        return true;
      }
      if (outcome.get() instanceof Outcome.Rejected<Registered>(int status, String body)) {
        Optional<String> stop = identity.refused(status, body);
        if (stop.isPresent()) {
          fail(stop.get());
          return false;
        }
        continue; // with the join token
      }
      retryAfter(outcome.get());
    }
    return false;
  }

  /** Heartbeats until a reply says {@code fenced}, or the agent stops. */
  private void heartbeatUntilFenced() throws InterruptedException {
    long reported = -1;
    while (!stopping) {
      long version = table.version();
      long waitMs = version == reported ? lease.longPollMs(config.heartbeatWaitMs()) : 0;
      long sentAtNanos = System.nanoTime();
      Instant sentAt = clock.instant();
      List<String> problems = health.latest();
      var heartbeat =
          new Heartbeat(
              config.nodeName(),
              epoch(),
              table.reports(),
              waitMs,
              problems.isEmpty() ? null : problems,
              health.latestGpuProblems().isEmpty() ? null : health.latestGpuProblems());
      Optional<Outcome<HeartbeatReply>> outcome =
          call(
              ControllerClient.HEARTBEAT,
              heartbeat,
              HeartbeatReply.class,
              waitMs,
              waitMs > 0 ? version : -1);
      if (outcome.isEmpty()) {
        continue; // news while the long poll was held: report it at once
      }
      if (outcome.get() instanceof Outcome.Rejected<HeartbeatReply>(int status, String body)) {
        // The node's credential no longer counts (an admin reset the node): its tasks may be
        // anyone's now. Stop them and register again.
        log.warn(
            "agent {}: the controller refused this node's credential ({}: {}): killing every task"
                + " and registering again",
            config.nodeName(),
            status,
            body);
        table.killAllNow(ExitReason.KILLED, "the controller refused this node's credential");
        pause(backoff.delay(++fencesInARow));
        return;
      }
      if (!(outcome.get() instanceof Outcome.Ok<HeartbeatReply>(HeartbeatReply reply))) {
        retryAfter(outcome.get());
        continue;
      }
      lease.renewed(sentAt, reply.leaseMs());
      retries.reachedLeader();
      isolation.renewed(sentAtNanos, lease.fenceMs(), epoch());
      reported = version;
      if (reply.fenced()) {
        fenced();
        return;
      }
      retries.succeeded();
      fencesInARow = 0;
      apply(reply);
      // A long poll that came back early without news, or a periodic heartbeat: wait for the
      // rest of the period (or news) so that a controller that does not hold replies is not
      // flooded. After a news heartbeat (waitMs 0), the long poll follows at once.
      long gapMs =
          waitMs > 0 ? waitMs : config.heartbeatWaitMs() == 0 ? lease.heartbeatIntervalMs() : 0;
      pace(sentAtNanos, gapMs, version);
    }
  }

  private void apply(HeartbeatReply reply) {
    // After the lease it renews was over (a slow round trip), a reply's launches would be fenced
    // at once (checkLease logs it): the next heartbeat brings them again.
    boolean leaseHolds = lease.holds(clock);
    for (TaskAssignment assignment :
        leaseHolds ? orEmpty(reply.launch()) : List.<TaskAssignment>of()) {
      table.launch(assignment);
    }
    for (TaskKill kill : orEmpty(reply.kill())) {
      table.kill(kill);
    }
    for (TaskRef ref : orEmpty(reply.forget())) {
      table.forget(ref);
    }
    if (leaseHolds && !orEmpty(reply.go()).isEmpty()) {
      // The node was checked when the tasks were prepared; check again before they start.
      List<String> problems = health.checks() ? health.checkNow() : List.of();
      for (TaskRef ref : reply.go()) {
        if (problems.isEmpty()) {
          table.go(ref);
        } else {
          table.refuse(ref, problems);
        }
      }
    }
  }

  private void fenced() throws InterruptedException {
    long stale = epoch();
    log.warn(
        "agent {}: the controller fenced epoch {}: killing every task and registering again",
        config.nodeName(),
        stale);
    table.killAllNow(ExitReason.KILLED, "fenced by the controller: epoch " + stale + " is stale");
    // A controller that fences every new epoch at once would otherwise be hammered.
    pause(backoff.delay(++fencesInARow));
  }

  /**
   * Sends one call and waits for its outcome, or gives up on it (cancelling the exchange) when the
   * agent stops or, if {@code watchVersion} is not -1, when the task table moves past it.
   */
  private <T> Optional<Outcome<T>> call(
      String path, Object body, Class<T> type, long waitMs, long watchVersion)
      throws InterruptedException {
    CompletableFuture<Outcome<T>> future = client.post(path, body, type, waitMs);
    future.whenComplete((o, e) -> wakeup.signal());
    while (true) {
      long generation = wakeup.generation();
      if (future.isDone()) {
        return Optional.of(future.join());
      }
      if (stopping || (watchVersion != -1 && table.version() != watchVersion)) {
        future.cancel(true);
        return Optional.empty();
      }
      wakeup.await(generation, TICK.toMillis());
    }
  }

  /** After a call that did not succeed: follow a redirect at once, otherwise back off. */
  private void retryAfter(Outcome<?> outcome) throws InterruptedException {
    if (outcome instanceof Outcome.Rejected<?> r) {
      fail(
          "controller refused the join token (HTTP "
              + r.status()
              + "): check the agent's join token; stopping");
      return;
    }
    pause(retries.after(outcome));
  }

  /** Waits until {@code sentAtNanos + gapMs}, or until the table moves past {@code version}. */
  private void pace(long sentAtNanos, long gapMs, long version) throws InterruptedException {
    long until = sentAtNanos + gapMs * 1_000_000;
    while (true) {
      long generation = wakeup.generation();
      long leftMs = (until - System.nanoTime()) / 1_000_000;
      if (stopping || table.version() != version || leftMs <= 0) {
        return;
      }
      wakeup.await(generation, leftMs);
    }
  }

  /** Sleeps {@code delay} of real time, or less if the agent stops. */
  private void pause(Duration delay) throws InterruptedException {
    long until = System.nanoTime() + delay.toNanos();
    while (!stopping) {
      long generation = wakeup.generation();
      long leftMs = (until - System.nanoTime()) / 1_000_000;
      if (leftMs <= 0) {
        return;
      }
      wakeup.await(generation, leftMs);
    }
  }

  private void fail(String message) {
    log.error("agent {}: {}", config.nodeName(), message);
    exit.compareAndSet(null, AgentExit.failed(message));
    stopping = true;
    wakeup.signal();
  }

  private void registered(Registered registered, Instant sentAt) {
    lease.registered(registered, sentAt);
    retries.succeeded();
    log.info(
        "agent {} registered with {}: epoch {}, heartbeat every {} ms, lease {} ms (fence {} ms)",
        config.nodeName(),
        client.current(),
        registered.epoch(),
        registered.heartbeatIntervalMs(),
        registered.leaseMs(),
        lease.fenceMs());
  }

  /**
   * A scheduled health check; a change in the problems goes out with the next heartbeat at once.
   */
  private void checkHealth() {
    try {
      List<String> before = health.latest();
      var gpusBefore = health.latestGpuProblems();
      if (!health.checkNow().equals(before) || !health.latestGpuProblems().equals(gpusBefore)) {
        table.newsOutsideTheTable();
      }
    } catch (RuntimeException e) {
      log.error("agent {}: health check failed", config.nodeName(), e);
    }
  }

  private void tick() {
    try {
      table.tick();
      checkLease();
    } catch (RuntimeException e) {
      // An exception would cancel the ticker, and with it every limit and the lease.
      log.error("agent {}: tick failed", config.nodeName(), e);
    }
  }

  private void checkLease() {
    OptionalLong lapsed = lease.lapse(clock);
    if (lapsed.isEmpty()) {
      return;
    }
    String why = "lease expired: no heartbeat accepted for " + lapsed.getAsLong() + " ms";
    log.error(
        "agent {}: LEASE EXPIRED: {}; killing every task (the controller may give their GPUs away)",
        config.nodeName(),
        why);
    table.killAllNow(ExitReason.NODE_UNHEALTHY, why); // the node's fault: its jobs are requeued
  }

  private void shutdown() {
    if (!shutDown.compareAndSet(false, true)) {
      return;
    }
    try {
      String name = config.nodeName();
      if (detaching) {
        int held = table.reports().size();
        log.info("agent {}: stopping, leaving {} task(s) to the next agent", name, held);
        return;
      }
      table.killAll(ExitReason.KILLED, "agent " + name + " stopping");
      if (!table.awaitAllExited(Duration.ofMillis(config.killGraceMs()))) {
        log.warn("agent {}: tasks outlived the grace; sending SIGKILL", name);
      }
      table.forceKillStopping();
      table.awaitAllExited(Duration.ofSeconds(2));
    } catch (InterruptedException e) {
      table.forceKillStopping();
      Thread.currentThread().interrupt();
    } finally {
      synchronized (this) {
        if (ticker != null) {
          ticker.shutdownNow();
        }
        if (healthChecks != null) {
          healthChecks.shutdownNow();
        }
        if (isolation != null && !detaching) {
          isolation.close(); // its watchdog guards the tasks left behind
        }
        if (logServer != null) {
          logServer.close();
        }
      }
      client.close();
      log.info("agent {} stopped: {}", config.nodeName(), exit.get());
      terminated.countDown();
    }
  }

  private static <T> List<T> orEmpty(List<T> list) {
    return list == null ? List.of() : list;
  }
}
