package io.kairos.control.sched;

import io.kairos.control.raft.RaftReplica;
import io.kairos.control.state.ControlCommand.Start;
import io.kairos.control.state.ControlCommand.StartJobs;
import io.kairos.core.model.Cluster;
import io.kairos.core.model.Placement;
import io.kairos.core.sched.Decision;
import io.kairos.core.sched.PassInput;
import io.kairos.core.sched.PassResult;
import io.kairos.core.sched.Policy;
import io.kairos.core.sched.Reason;
import io.kairos.core.sched.SchedulingPass;
import io.kairos.core.state.ClusterSnapshot;
import io.kairos.protocol.TaskPlacement;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.io.Closeable;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the core's pass on the leader and commits its starts through the log.
 *
 * <p>One thread. It waits for the state to change (a submit, a task's end, a registration) or
 * for a second to pass, then: snapshot under the read lock, run the pass outside it, propose
 * the starts as one {@link StartJobs} and wait for it to apply, so that the next pass sees them.
 * A decision that went stale meanwhile is refused by the state, and the next pass replans: the
 * loop may be optimistic because the state is not. The time is read here, once per pass, and
 * travels in the command; the pass itself reads no clock.
 */
public final class SchedulerLoop implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(SchedulerLoop.class);

  /** Why a job waits, as the last pass on this replica saw it, and the reservation it holds. */
  public record Pending(Reason reason, long reservedStartSec) {}

  private final RaftReplica replica;
  private final SchedulingPass pass;
  private final InstantSource clock;
  private final Timer passTimer;
  private final Counter starts;
  private final Thread thread;
  private volatile Map<Long, Pending> pending = Map.of();
  private volatile boolean closed;

  public SchedulerLoop(RaftReplica replica, Policy policy, InstantSource clock, MeterRegistry meters) {
    this.replica = replica;
    this.pass = new SchedulingPass(policy);
    this.clock = clock;
    this.passTimer =
        Timer.builder("kairos.scheduler.pass")
            .description("time of one scheduling pass (snapshot, pass, not the commit)")
            .publishPercentiles(0.5, 0.99)
            .register(meters);
    this.starts =
        Counter.builder("kairos.scheduler.decisions")
            .tag("decision", "start")
            .description("jobs the scheduler decided to start")
            .register(meters);
    this.thread = Thread.ofPlatform().name("kairos-scheduler").daemon().unstarted(this::loop);
  }

  public SchedulerLoop start() {
    thread.start();
    return this;
  }

  public Policy policy() {
    return pass.policy();
  }

  /** The last pass's view of a pending job, if it considered it. */
  public Pending pending(long jobId) {
    return pending.get(jobId);
  }

  private void loop() {
    var watch = replica.stateMachine().watch();
    while (!closed) {
      try {
        long seen = watch.version();
        if (!replica.isLeaderReady()) {
          pending = Map.of();
          watch.awaitChange(seen, 250);
          continue;
        }
        runOnce();
        watch.awaitChange(seen, 1000);
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        if (!closed) {
          LOG.warn("scheduler pass failed; retrying in a second", e);
          sleepQuietly(1000);
        }
      }
    }
  }

  /** One pass and its commit. Returns how many jobs it started. */
  int runOnce() throws InterruptedException {
    ClusterSnapshot snapshot =
        replica
            .stateMachine()
            .read(s -> s.store() == null || s.store().pendingCount() == 0 ? null : s.store().snapshot());
    if (snapshot == null) {
      pending = Map.of();
      return 0;
    }
    long nowMs = clock.millis();
    long t0 = System.nanoTime();
    PassResult result = pass.run(new PassInput(snapshot, nowMs / 1000, replica.appliedIndex()));
    passTimer.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
    publish(result);
    if (result.starts().isEmpty()) {
      return 0;
    }
    var decisions = new ArrayList<Start>(result.starts().size());
    Cluster cluster = snapshot.cluster();
    for (Decision.Start s : result.starts()) {
      decisions.add(new Start(s.job().value(), tasks(cluster, s.placement())));
    }
    try {
      var applied = replica.propose(new StartJobs(nowMs, decisions)).get(10, TimeUnit.SECONDS);
      starts.increment(applied.ids().size());
      return applied.ids().size();
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      LOG.warn("could not commit {} starts: {}", decisions.size(), e.toString());
      return 0;
    }
  }

  private void publish(PassResult result) {
    var diagnosis = result.diagnosis();
    var map = new HashMap<Long, Pending>(diagnosis.size() * 2);
    var reserved = new HashMap<Long, Long>();
    for (Decision.Reserve r : result.reservations()) {
      reserved.put(r.job().value(), r.startSec());
    }
    for (int rank = 0; rank < diagnosis.size(); rank++) {
      var reason = diagnosis.reason(rank);
      if (reason.isPresent()) {
        long id = diagnosis.job(rank).id().value();
        map.put(id, new Pending(reason.get(), reserved.getOrDefault(id, -1L)));
      }
    }
    pending = map;
  }

  /** The core's placement as named tasks: one per node, ranks in node order (topology order). */
  static List<TaskPlacement> tasks(Cluster cluster, Placement placement) {
    var tasks = new ArrayList<TaskPlacement>();
    int rank = 0;
    for (int i = 0; i < placement.nodeCount(); i++) {
      String node = cluster.node(placement.node(i)).name();
      long mask = placement.gpuMask(i);
      int perTask = placement.tasksOn(i) == 0 ? 0 : Long.bitCount(mask) / placement.tasksOn(i);
      for (int t = 0; t < placement.tasksOn(i); t++) {
        var gpus = new ArrayList<Integer>(perTask);
        for (int k = 0; k < perTask; k++) {
          int g = Long.numberOfTrailingZeros(mask);
          gpus.add(g);
          mask &= mask - 1;
        }
        tasks.add(new TaskPlacement(rank++, node, gpus));
      }
    }
    return tasks;
  }

  private static void sleepQuietly(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
  }
}
