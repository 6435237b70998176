package io.kairos.agent;

import io.kairos.protocol.agent.Registered;
import java.time.Instant;
import java.time.InstantSource;
import java.util.OptionalLong;

/**
 * The agent's side of its lease: the epoch and timings a registration gave, and when a heartbeat
 * was last accepted. The loop renews it; the ticker asks whether it has lapsed ({@link #lapse}),
 * once per lapse, so that the agent kills its tasks before the controller gives their GPUs away.
 *
 * <p>The lease counts from when the accepted request was <em>sent</em>: the controller renewed it
 * no earlier, so the agent never believes in a lease the controller has already let go. The tasks
 * are killed a fence margin before it ends ({@link #fenceMs}), so that they are dead by its end:
 * the controller gives their GPUs away only after it, plus its own margin for clock drift.
 * Thread-safe.
 */
final class Lease {
  /** The longest lease a controller may grant ({@code kairos server --lease} at most). */
  static final long MAX_LEASE_MS = 3_600_000;

  private final long fenceMarginMs;
  private long epoch;
  private long heartbeatIntervalMs;
  private long leaseMs;
  private Instant renewedAt;
  private boolean lapsed;

  /**
   * A lease whose tasks are killed {@code fenceMarginMs} before it ends (at most a quarter of it).
   */
  Lease(long fenceMarginMs) {
    this.fenceMarginMs = fenceMarginMs;
  }

  /** A lease whose tasks are killed as it ends. */
  Lease() {
    this(0);
  }

  /**
   * How long after a renewal the tasks must be dead: the lease less the fence margin, which takes
   * at most a quarter of it; 0 before the first registration.
   */
  synchronized long fenceMs() {
    return leaseMs - Math.min(fenceMarginMs, leaseMs / 4);
  }

  /** A registration sent at {@code sentAt} was accepted: a new epoch and its timings. */
  synchronized void registered(Registered registered, Instant sentAt) {
    epoch = registered.epoch();
    heartbeatIntervalMs = registered.heartbeatIntervalMs();
    leaseMs = registered.leaseMs();
    renewedAt = sentAt;
    lapsed = false;
  }

  /**
   * As {@link #renewed(Instant)}, for {@code leaseMs} from now on when the controller says so (a
   * restarted controller may grant another; null, or outside 1 ms to an hour, keeps the current
   * one).
   */
  synchronized void renewed(Instant sentAt, Long leaseMs) {
    if (leaseMs != null && leaseMs > 0 && leaseMs <= MAX_LEASE_MS) {
      this.leaseMs = leaseMs;
    }
    renewed(sentAt);
  }

  /** A heartbeat sent at {@code sentAt} was accepted: the controller renewed the lease then. */
  synchronized void renewed(Instant sentAt) {
    if (renewedAt == null || sentAt.isAfter(renewedAt)) {
      renewedAt = sentAt;
    }
    lapsed = false;
  }

  /** The current epoch; 0 before the first registration. */
  synchronized long epoch() {
    return epoch;
  }

  synchronized long leaseMs() {
    return leaseMs;
  }

  /** The heartbeat interval the controller asked for, or 1 s before it said. */
  synchronized long heartbeatIntervalMs() {
    return heartbeatIntervalMs > 0 ? heartbeatIntervalMs : 1_000;
  }

  /**
   * How long the controller may hold a heartbeat: {@code heartbeatWaitMs}, but never longer than
   * the interval, nor a third of the lease (a reply held longer would let the lease lapse here).
   */
  synchronized long longPollMs(long heartbeatWaitMs) {
    long wait = Math.min(heartbeatWaitMs, heartbeatIntervalMs());
    return leaseMs > 0 ? Math.min(wait, leaseMs / 3) : wait;
  }

  /**
   * Whether the lease, less the fence margin ({@link #fenceMs}), still holds at {@code clock}'s
   * time: registered, and renewed no longer ago than that. (Not "for a while yet": a controller
   * that answers every heartbeat just inside the lease keeps its agents' tasks alive, and must be
   * able to start new ones too.)
   */
  synchronized boolean holds(InstantSource clock) {
    return renewedAt != null
        && leaseMs > 0
        && !clock.instant().isAfter(renewedAt.plusMillis(fenceMs()));
  }

  /**
   * Whether the lease, less the fence margin ({@link #fenceMs}), ran out by {@code clock}'s time
   * since the last check: that length in ms the first time it is seen lapsed, empty otherwise (not
   * registered, still valid, or already reported until the next renewal).
   */
  synchronized OptionalLong lapse(InstantSource clock) {
    if (renewedAt == null || lapsed || leaseMs <= 0) {
      return OptionalLong.empty();
    }
    long fenceMs = fenceMs();
    if (!clock.instant().isAfter(renewedAt.plusMillis(fenceMs))) {
      return OptionalLong.empty();
    }
    lapsed = true;
    return OptionalLong.of(fenceMs);
  }
}
