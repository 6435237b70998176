package io.kairos.control.agent;

import io.kairos.control.Fatal;
import io.kairos.control.api.ApiError;
import io.kairos.control.auth.Principal;
import io.kairos.control.health.FailureDetectors;
import io.kairos.control.health.PhiAccrualDetector;
import io.kairos.control.raft.RaftReplica;
import io.kairos.control.raft.RegisterBatcher;
import io.kairos.control.sched.SchedulerLoop;
import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlCommand.DrainNode;
import io.kairos.control.state.ControlCommand.NodeDown;
import io.kairos.control.state.ControlCommand.RegisterNode;
import io.kairos.control.state.ControlCommand.ResetNode;
import io.kairos.control.state.ControlResult;
import io.kairos.control.state.TokenRecord;
import io.kairos.protocol.NodeState;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.HeartbeatReply;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.Registration;
import io.kairos.protocol.agent.TaskRef;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves agents on the leader: registers them through the log, answers heartbeats with a
 * reconciliation plan, commits the task ends they report, and watches their liveness.
 *
 * <p><b>Long poll.</b> A heartbeat with nothing to send back is held until the state changes or the
 * agent's wait runs out, so that a new assignment reaches its agent within milliseconds without
 * agents polling fast. Agents hold it at most one heartbeat interval, so arrivals stay about a
 * second apart, which is what the failure detector learns.
 *
 * <p><b>Failure detection.</b> Each heartbeat feeds a phi-accrual detector per node ({@link
 * FailureDetectors}). A monitor thread evaluates them every {@link #MONITOR_PERIOD_MS}: a node
 * whose phi passes the suspect level shows SUSPECT in {@code kairos nodes}; past the threshold it
 * is DOWN, and the leader commits {@link NodeDown}, which fences the node's epoch and requeues its
 * jobs, not before the lost agent's lease has run out ({@code safeAfterMs}). A node silent until
 * its lease has surely run out ({@link LeaseSettings}) is DOWN then, whatever its phi: its agent
 * has fenced itself. A heartbeat that arrives while its node is being declared DOWN is answered
 * {@code fenced} ({@link #arrived}), so no lease is renewed past the {@code safeAfterMs} committed.
 * Liveness is leader state, not replicated: a new leader starts every node afresh, as if heard from
 * when it took over, so its first verdicts come a detection time later.
 *
 * <p><b>Gang barrier.</b> Tasks of a multi-node gang are assigned with {@code barrier}: each agent
 * prepares its task and reports it READY; once every task of the attempt has reported READY, the
 * replies to each agent name its tasks in {@code go}, and the processes start together. The ready
 * sets are leader state too: agents keep reporting READY until told to go, so a new leader rebuilds
 * them from the next heartbeats ({@link GangBarrier}: a rank added by a grow, or one whose gang
 * already runs, does not wait for ranks that will never report READY again).
 *
 * <p><b>Health.</b> A heartbeat that carries problems (a failed GPU health check) drains its node
 * through the log, with the problems as the reason, and requeues the jobs running there.
 *
 * <p><b>Step credentials.</b> Every task of a job gets the job's step credential, so that its
 * {@code srun} may start steps in that job and no other: a bearer token whose scope is "job N's
 * steps, while attempt A runs" ({@link TokenRecord#jobScope}). The leader mints one when it first
 * launches a task of the attempt, commits only its hash (an {@code AddToken}, refused once the
 * attempt has stopped), and keeps the token itself in memory to hand to the attempt's later
 * launches; the state drops the hash when the attempt stops. A new leader mints another for the
 * launches it makes: the ones already handed out stay valid. {@link StepCredentials} keeps them.
 */
public final class AgentService implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(AgentService.class);

  public static final long HEARTBEAT_INTERVAL_MS = 1_000;
  static final long MAX_WAIT_MS = 5_000;
  static final long MONITOR_PERIOD_MS = 100;

  /** How a node drained by its own health report is told apart from an admin's drain. */
  static final String UNHEALTHY = "unhealthy: ";

  /** What the leader's detector says of one node, for the API. */
  public record Liveness(String state, double phi) {}

  private final RaftReplica replica;
  private final RegisterBatcher registrations;
  private final io.kairos.control.raft.EndBatcher taskEnds;
  private final InstantSource clock;
  private final LeaseSettings lease;

  /**
   * Until when leases granted before this start ({@link PriorLeases}) may still hold: no lost
   * node's jobs start elsewhere before it. Then {@code priorLeasesOver} runs, once.
   */
  private final long priorSafeAfterMs;

  private Runnable priorLeasesOver;
  private final NodeIdentity identity;
  private final NodeWatch heard;

  /** The step credentials this leader minted and is minting. */
  private final StepCredentials credentials;

  /** Checkpoint requests already sent ({@link CheckpointAsks}), so a long poll does not spin. */
  private final java.util.Set<String> asked = ConcurrentHashMap.newKeySet();

  /** The gang start barrier ({@link GangBarrier}). */
  private final GangBarrier gangs;

  private final Thread monitor;
  private volatile boolean closed;
  private boolean wasLeader;
  private long leaderSinceMs;

  public AgentService(
      RaftReplica replica,
      InstantSource clock,
      PhiAccrualDetector.Settings detection,
      LeaseSettings lease,
      long priorLeaseMs,
      Runnable priorLeasesOver,
      NodeIdentity identity) {
    this.replica = replica;
    this.gangs = new GangBarrier(replica);
    this.clock = clock;
    this.lease = lease;
    this.priorSafeAfterMs =
        clock.millis() + priorLeaseMs + LeaseSettings.leastMarginMs(priorLeaseMs);
    this.priorLeasesOver = priorLeasesOver;
    this.identity = identity;
    this.credentials = new StepCredentials(replica, clock);
    this.registrations = new RegisterBatcher(replica, clock);
    this.taskEnds = new io.kairos.control.raft.EndBatcher(replica);
    this.heard = new NodeWatch(detection, lease);
    this.monitor =
        Thread.ofPlatform()
            .name("kairos-liveness")
            .daemon()
            .uncaughtExceptionHandler(Fatal.EXIT)
            .unstarted(this::monitor);
  }

  private final Exchanges exchanges = new Exchanges();

  /** Heartbeats kept few: their counts, and the scheduler's passes to await. */
  public Exchanges exchanges() {
    return exchanges;
  }

  /** The scheduler's {@link SchedulerLoop.StartHook}: see {@link StepCredentials#premint}. */
  public Runnable premint(List<SchedulerLoop.StartHook.Starting> jobs) {
    return credentials.premint(jobs);
  }

  /** Starts the liveness monitor. */
  public AgentService start() {
    monitor.start();
    return this;
  }

  @Override
  public void close() {
    closed = true;
    monitor.interrupt();
    registrations.close();
    taskEnds.close();
    credentials.close();
  }

  /**
   * Registers a node ({@link NodeIdentity} decides whether {@code who} may, and what the node is
   * bound to): a new epoch, committed through the log.
   *
   * @param remoteAddress where the request came from
   * @param overTls whether it came over HTTPS
   */
  public Registered register(Registration r, Principal who, String remoteAddress, boolean overTls)
      throws InterruptedException {
    String bound =
        replica.stateMachine().read(s -> s.node(r.node()).map(n -> n.credential).orElse(null));
    NodeIdentity.Admission admitted = identity.admit(r, who, bound, remoteAddress, overTls);
    var command =
        new RegisterNode(
            clock.millis(), admitted.stored().withTasks(null), admitted.credential(), adopted(r));
    var result = await(registrations.register(command), command);
    if (!result.isOk()) {
      // Another registration of the name, or of the credential, committed first.
      throw ApiError.conflict(result.error());
    }
    long epoch = result.ids().get(0);
    long now = clock.millis();
    heard.registered(r.node(), now);
    return new Registered(
        r.node(),
        epoch,
        HEARTBEAT_INTERVAL_MS,
        lease.leaseMs(),
        admitted.certificate().map(identity::chainPem).orElse(null),
        admitted.certificate().map(c -> identity.caPem()).orElse(null));
  }

  /** The tasks a restarted agent says it adopted: the job's own tasks, live or ended. */
  private static List<TaskRef> adopted(Registration r) {
    if (r.tasks() == null) {
      return List.of();
    }
    var refs = new ArrayList<TaskRef>();
    for (TaskReport t : r.tasks()) {
      if (t.step() == null
          && (t.status() == TaskStatus.RUNNING || t.status() == TaskStatus.EXITED)) {
        refs.add(new TaskRef(t.jobId(), t.attempt(), t.task()));
      }
    }
    return refs;
  }

  /**
   * An admin's reset of a node: its credential is forgotten and its agent fenced; its jobs are
   * requeued once the fenced agent's lease has surely run out.
   */
  public ControlResult reset(String node) throws InterruptedException {
    long now = clock.millis();
    return commit(new ResetNode(now, node, Math.max(lease.safeAfterMs(now), priorSafeAfterMs)));
  }

  public HeartbeatReply heartbeat(Heartbeat hb) throws InterruptedException {
    var watch = replica.stateMachine().watch();
    long number = exchanges.arrived(hb.node());
    long waitMs = Math.max(0, Math.min(MAX_WAIT_MS, hb.waitMs()));
    long deadline = System.nanoTime() + waitMs * 1_000_000L;
    boolean first = true;
    while (true) {
      long seen = watch.version();
      if (!first && exchanges.superseded(hb.node(), number)) {
        return new HeartbeatReply(hb.epoch(), false, List.of(), List.of(), List.of());
      }
      // The node's epoch, and whether a health report should drain it (1): it is UP, or drained
      // by an admin with jobs still running there, which must not stay on a failing GPU.
      long[] node =
          replica
              .stateMachine()
              .read(
                  s ->
                      s.node(hb.node())
                          .map(
                              n ->
                                  new long[] {
                                    n.epoch,
                                    n.state == NodeState.UP
                                            || (n.state == NodeState.DRAINED
                                                && (n.reason == null
                                                    || !n.reason.startsWith(UNHEALTHY)))
                                        ? 1
                                        : 0
                                  })
                          .orElse(null));
      if (node == null || node[0] != hb.epoch()) {
        return new HeartbeatReply(
            node == null ? 0L : node[0], true, List.of(), List.of(), List.of());
      }
      if (first) {
        first = false;
        // Arrived, and then the epoch read again: a DOWN committed between the read above and the
        // arrival is seen here, so its reply fences the agent rather than renewing its lease.
        if (!arrived(hb.node()) || !sameEpoch(hb)) {
          return new HeartbeatReply(hb.epoch(), true, List.of(), List.of(), List.of());
        }
        if (hb.problems() != null && !hb.problems().isEmpty() && node[1] == 1) {
          drainUnhealthy(hb);
        }
        if (hb.gpuProblems() != null && !hb.gpuProblems().isEmpty()) {
          takeOutUnhealthyGpus(hb);
        }
      }
      var plan =
          replica
              .stateMachine()
              .read(s -> Reconciler.plan(s, hb, credentials::tokenOf, clock.millis()));
      if (!plan.toRecord().isEmpty()) {
        var ends = new ArrayList<ControlCommand>(plan.toRecord().size());
        for (TaskReport r : plan.toRecord()) {
          ends.add(Reconciler.ended(hb, r, clock.millis()));
        }
        commitAll(ends);
        exchanges.awaitPass(watch.version());
        plan =
            replica
                .stateMachine()
                .read(s -> Reconciler.plan(s, hb, credentials::tokenOf, clock.millis()));
      }
      if (credentials.mint(plan.launch())) {
        plan =
            replica
                .stateMachine()
                .read(s -> Reconciler.plan(s, hb, credentials::tokenOf, clock.millis()));
      }
      List<TaskRef> go = gangs.go(hb);
      long left = (deadline - System.nanoTime()) / 1_000_000L;
      if (!plan.launch().isEmpty()
          || CheckpointAsks.news(asked, hb.node(), plan.kill())
          || !plan.forget().isEmpty()
          || !go.isEmpty()
          || left <= 0) {
        return new HeartbeatReply(
            hb.epoch(), false, plan.launch(), plan.kill(), plan.forget(), go, lease.leaseMs());
      }
      watch.awaitChange(seen, left);
    }
  }

  private boolean sameEpoch(Heartbeat hb) {
    return replica
        .stateMachine()
        .read(s -> s.node(hb.node()).map(n -> n.epoch == hb.epoch()).orElse(false));
  }

  /**
   * Records a heartbeat's arrival; false while its node is being declared DOWN ({@link NodeWatch}).
   */
  private boolean arrived(String node) {
    return heard.arrived(node, clock.millis());
  }

  private void drainUnhealthy(Heartbeat hb) throws InterruptedException {
    DrainNode drain = HealthReports.drain(hb, UNHEALTHY, clock.millis());
    log.warn(
        "node {} reports problems, draining it and requeueing its jobs: {}",
        hb.node(),
        drain.reason());
    commit(drain);
  }

  private void takeOutUnhealthyGpus(Heartbeat hb) throws InterruptedException {
    var known =
        replica
            .stateMachine()
            .read(
                s ->
                    s.node(hb.node())
                        .map(n -> java.util.Set.copyOf(n.gpusOutOfService.keySet()))
                        .orElse(java.util.Set.of()));
    var out = HealthReports.gpusOut(hb, known, clock.millis());
    if (out.isPresent()) {
      log.warn(
          "node {} reports unhealthy GPUs, taking them out of service: {}",
          hb.node(),
          out.get().problems());
      commit(out.get());
    }
  }

  private ControlResult commit(ControlCommand c) throws InterruptedException {
    return await(replica.propose(c), c);
  }

  private static ControlResult await(CompletableFuture<ControlResult> proposed, ControlCommand c)
      throws InterruptedException {
    try {
      return proposed.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException e) {
      throw ApiError.unavailable(
          "could not commit " + c.getClass().getSimpleName() + ": " + e.getMessage());
    }
  }

  /** Commits task ends (shared entries: {@code EndBatcher}) and waits for all of them. */
  private List<ControlResult> commitAll(List<ControlCommand> commands) throws InterruptedException {
    var futures = new ArrayList<CompletableFuture<ControlResult>>();
    for (ControlCommand c : commands) {
      futures.add(c instanceof ControlCommand.TaskEnded e ? taskEnds.end(e) : replica.propose(c));
    }
    var results = new ArrayList<ControlResult>(futures.size());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    for (int i = 0; i < futures.size(); i++) {
      try {
        long left = Math.max(0, deadline - System.nanoTime());
        results.add(futures.get(i).get(left, TimeUnit.NANOSECONDS));
      } catch (ExecutionException | TimeoutException e) {
        throw ApiError.unavailable(
            "could not commit "
                + commands.get(i).getClass().getSimpleName()
                + ": "
                + e.getMessage());
      }
    }
    return results;
  }

  /** When this replica last heard from {@code node} (epoch millis), if ever. */
  public Optional<Long> lastSeen(String node) {
    return heard.lastSeen(node);
  }

  /**
   * The failure detector's verdict on {@code node}; empty on a follower or for a node not watched.
   */
  public Optional<Liveness> liveness(String node) {
    if (!replica.isLeader()) {
      return Optional.empty();
    }
    return heard.liveness(node, clock.millis());
  }

  // ---- the monitor ----

  private void monitor() {
    while (!closed) {
      try {
        Thread.sleep(MONITOR_PERIOD_MS);
        evaluate();
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        if (!closed) {
          log.warn("liveness monitor: {}", e.toString());
        }
      }
    }
  }

  private void evaluate() throws InterruptedException {
    boolean leader = replica.isLeader();
    long now = clock.millis();
    if (leader && !wasLeader) {
      adoptNodes(now);
    }
    wasLeader = leader;
    if (!leader) {
      return;
    }
    List<FailureDetectors.Transition> transitions = heard.evaluate(now);
    for (var t : transitions) {
      if (t.to() == FailureDetectors.Liveness.SUSPECT) {
        log.warn(
            "node {} is suspect: phi {} ({} ms since its last heartbeat)",
            t.node(),
            String.format("%.1f", t.phi()),
            now - heard.lastSeen(t.node()).orElse(now));
      } else if (t.to() == FailureDetectors.Liveness.DOWN) {
        down(t, now);
      }
    }
    gangs.prune();
    credentials.prune();
    if (priorLeasesOver != null && now > priorSafeAfterMs) {
      priorLeasesOver.run();
      priorLeasesOver = null;
    }
  }

  /** A new leader watches every live node as if it had just heard from it. */
  private void adoptNodes(long now) {
    leaderSinceMs = now;
    List<String> live =
        replica
            .stateMachine()
            .read(
                s ->
                    s.nodes().stream()
                        .filter(n -> n.state != NodeState.DOWN && n.registration != null)
                        .map(n -> n.name)
                        .toList());
    heard.adopt(live, now);
    log.info("leader: watching {} nodes' heartbeats", live.size());
  }

  private void down(FailureDetectors.Transition t, long now) throws InterruptedException {
    Optional<Long> epoch =
        replica
            .stateMachine()
            .read(s -> s.node(t.node()).filter(n -> n.state != NodeState.DOWN).map(n -> n.epoch));
    if (epoch.isEmpty()) {
      return;
    }
    long last = heard.beginDown(t.node(), leaderSinceMs);
    try {
      if (last > now) {
        // Judged at `now`, but a heartbeat came in since (the commits of a burst of DOWNs take
        // time).
        log.info("node {}: a heartbeat arrived after it was judged down; not down", t.node());
        heard.registered(t.node(), last); // watched afresh: the verdict DOWN was sticky
        return;
      }
      String reason =
          now - last >= lease.silenceMs()
              ? String.format(
                  "no heartbeat for %.1f s: its lease has run out (phi %.1f)",
                  (now - last) / 1000.0, t.phi())
              : String.format("no heartbeat for %.1f s (phi %.1f)", (now - last) / 1000.0, t.phi());
      log.warn("node {} is down: {}; requeueing its jobs", t.node(), reason);
      long safeAfterMs = Math.max(lease.safeAfterMs(last), priorSafeAfterMs);
      var result = commit(new NodeDown(now, t.node(), epoch.get(), reason, safeAfterMs));
      if (!result.isOk()) {
        log.info("node {}: {}", t.node(), result.error());
      }
    } finally {
      heard.endDown(t.node());
    }
  }
}
