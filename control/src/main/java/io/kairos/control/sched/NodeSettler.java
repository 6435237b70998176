package io.kairos.control.sched;

import io.kairos.control.raft.RaftReplica;
import io.kairos.control.state.ControlCommand.SettleNodes;
import io.kairos.control.state.ControlState;
import java.time.InstantSource;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registrations mark the scheduler's node store stale rather than rebuild it each ({@link
 * ControlState}); once the burst is over ({@link #SETTLE_AFTER_MS} without a change) or has gone on
 * for {@link #SETTLE_AT_MOST_MS}, the scheduler loop proposes {@link SettleNodes} through this: new
 * nodes take work within about that time whether or not another command comes, and a burst of N
 * registrations costs a handful of rebuilds, not N. Used by the loop's thread only.
 */
final class NodeSettler {
  private static final Logger LOG = LoggerFactory.getLogger(NodeSettler.class);

  /** How long the state must be quiet (no command) before the loop settles a stale store. */
  static final long SETTLE_AFTER_MS = 200;

  /** The longest a burst of registrations leaves the store stale before the loop settles it. */
  static final long SETTLE_AT_MOST_MS = 2_000;

  private final RaftReplica replica;
  private final InstantSource clock;

  /** When the loop first saw the store stale (System.nanoTime), or -1. */
  private long staleSinceNanos = -1;

  /** The state's version when the loop last looked, and when that version was first seen. */
  private long lastVersion = -1;

  private long lastChangeNanos;

  NodeSettler(RaftReplica replica, InstantSource clock) {
    this.replica = replica;
    this.clock = clock;
  }

  /** Whether the store was stale when last looked at (the loop then waits a short while). */
  boolean stale() {
    return staleSinceNanos >= 0;
  }

  /** Looks at the store; proposes {@link SettleNodes} when a stale store's burst is over. */
  void tick() throws InterruptedException {
    long now = System.nanoTime();
    long version = replica.stateMachine().read(ControlState::version);
    if (version != lastVersion) {
      lastVersion = version;
      lastChangeNanos = now;
    }
    if (!replica.stateMachine().read(ControlState::storeIsStale)) {
      staleSinceNanos = -1;
      return;
    }
    if (staleSinceNanos < 0) {
      staleSinceNanos = now;
    }
    boolean quiet = now - lastChangeNanos >= SETTLE_AFTER_MS * 1_000_000L;
    boolean tooLong = now - staleSinceNanos >= SETTLE_AT_MOST_MS * 1_000_000L;
    if (!quiet && !tooLong) {
      return;
    }
    try {
      replica.propose(new SettleNodes(clock.millis())).get(10, TimeUnit.SECONDS);
      staleSinceNanos = -1;
    } catch (ExecutionException | TimeoutException e) {
      LOG.warn("could not settle the registered nodes: {}", e.toString());
    }
  }
}
