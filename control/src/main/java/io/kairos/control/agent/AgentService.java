package io.kairos.control.agent;

import io.kairos.control.raft.RaftReplica;
import io.kairos.control.state.ControlCommand.RegisterNode;
import io.kairos.control.state.ControlCommand.TaskEnded;

import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.HeartbeatReply;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.Registration;
import io.kairos.protocol.agent.TaskReport;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Serves agents on the leader: registers them through the log, answers heartbeats with a
 * reconciliation plan, and commits the task ends they report. A heartbeat with nothing to send
 * back is held (long poll) until the state changes or the agent's wait runs out, so that a new
 * assignment reaches its agent within milliseconds without agents polling fast.
 */
public final class AgentService {
  /** How long an agent's lease lasts without a heartbeat; the agent fences itself after it. */
  public static final long LEASE_MS = 15_000;

  public static final long HEARTBEAT_INTERVAL_MS = 1_000;
  static final long MAX_WAIT_MS = 5_000;

  private final RaftReplica replica;
  private final InstantSource clock;
  private final Map<String, Long> lastSeenMs = new ConcurrentHashMap<>();

  public AgentService(RaftReplica replica, InstantSource clock) {
    this.replica = replica;
    this.clock = clock;
  }

  public Registered register(Registration r) throws InterruptedException {
    var result = commit(new RegisterNode(clock.millis(), r));
    long epoch = result.ids().get(0);
    lastSeenMs.put(r.node(), clock.millis());
    return new Registered(r.node(), epoch, HEARTBEAT_INTERVAL_MS, LEASE_MS);
  }

  public HeartbeatReply heartbeat(Heartbeat hb) throws InterruptedException {
    var watch = replica.stateMachine().watch();
    long waitMs = Math.max(0, Math.min(MAX_WAIT_MS, hb.waitMs()));
    long deadline = System.nanoTime() + waitMs * 1_000_000L;
    while (true) {
      long seen = watch.version();
      Optional<Long> epoch =
          replica.stateMachine().read(s -> s.node(hb.node()).map(n -> n.epoch));
      if (epoch.isEmpty() || epoch.get() != hb.epoch()) {
        return new HeartbeatReply(epoch.orElse(0L), true, List.of(), List.of(), List.of());
      }
      lastSeenMs.put(hb.node(), clock.millis());
      var plan = replica.stateMachine().read(s -> Reconciler.plan(s, hb));
      if (!plan.toRecord().isEmpty()) {
        for (TaskReport r : plan.toRecord()) {
          commit(ended(hb, r));
        }
        plan = replica.stateMachine().read(s -> Reconciler.plan(s, hb));
      }
      long left = (deadline - System.nanoTime()) / 1_000_000L;
      if (!plan.launch().isEmpty() || !plan.kill().isEmpty() || !plan.forget().isEmpty() || left <= 0) {
        return new HeartbeatReply(hb.epoch(), false, plan.launch(), plan.kill(), plan.forget());
      }
      watch.awaitChange(seen, left);
    }
  }

  private TaskEnded ended(Heartbeat hb, TaskReport r) {
    long at = r.endedAtMs() != null ? r.endedAtMs() : clock.millis();
    return new TaskEnded(
        at, hb.node(), hb.epoch(), r.jobId(), r.attempt(), r.task(),
        r.exitCode() == null ? -1 : r.exitCode(), r.reason(), r.message());
  }

  private io.kairos.control.state.ControlResult commit(io.kairos.control.state.ControlCommand c)
      throws InterruptedException {
    try {
      return replica.propose(c).get(10, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException e) {
      throw io.kairos.control.api.ApiError.unavailable(
          "could not commit " + c.getClass().getSimpleName() + ": " + e.getMessage());
    }
  }

  /** When this replica last heard from {@code node} (epoch millis), if ever. */
  public Optional<Long> lastSeen(String node) {
    return Optional.ofNullable(lastSeenMs.get(node));
  }

}
