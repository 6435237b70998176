package io.kairos.control.agent;

/**
 * An agent's lease and the margin the controller adds to it before a lost node's GPUs go to another
 * job ({@code kairos server --lease, --lease-margin}).
 *
 * <p>Design note: the safety rule. A node's GPUs may be given away only once its agent has surely
 * killed its tasks. The agent renews its lease with every heartbeat the controller accepts,
 * counting from when it <em>sent</em> that heartbeat, which is no later than when the controller
 * received it; it kills its tasks, and its fence watchdog kills them even if the agent is frozen,
 * once {@code leaseMs} (less its own kill margin, {@code kairos agent --fence-margin}) has passed
 * on its monotonic clock. So, with {@code last} the arrival of the node's last heartbeat on the
 * controller's clock, every task there is dead by {@code last + leaseMs} plus what the agent's
 * clock may run slow over a lease, plus the watchdog's tick (100 ms) and the kill itself. The
 * controller adds {@code marginMs} for those ({@link #safeAfterMs}) and declares the node DOWN then
 * at the latest, whatever the phi-accrual detector says: the lease, not the detector, is the bound.
 * The margin is checked to cover a clock running 1% slow plus {@value #MIN_MARGIN_MS} ms.
 *
 * <p>What the length trades: a lost node's jobs run elsewhere about {@code leaseMs + marginMs}
 * after its last heartbeat (shorter is faster recovery); an agent that cannot reach the leader for
 * about {@code leaseMs} minus two heartbeat intervals (a controller restart, a leader election, a
 * partition, a reply delayed by a stalled controller) kills its tasks, and a restarted agent must
 * register within about as long to keep its tasks (longer rides out more).
 *
 * @param leaseMs how long a lease lasts from the heartbeat that renewed it
 * @param marginMs added to the lease before the node's GPUs may be given away
 */
public record LeaseSettings(long leaseMs, long marginMs) {
  /** The shortest lease: two of the agents' 1 s heartbeats must fit in it, with room. */
  public static final long MIN_LEASE_MS = 2_000;

  public static final long MAX_LEASE_MS = 3_600_000;

  /** The least margin on top of 1% of the lease: the watchdog's tick and the kill. */
  public static final long MIN_MARGIN_MS = 200;

  /**
   * The default: a lost node's gang runs elsewhere about 4 s after the node's last heartbeat (see
   * docs/operations.md); an agent survives 1.5 s of silence beyond its normal heartbeats.
   */
  public static final LeaseSettings DEFAULT = new LeaseSettings(3_500, 500);

  /** For tests whose fake agents pause between heartbeats: an hour. */
  public static final LeaseSettings PATIENT = new LeaseSettings(MAX_LEASE_MS, 36_200);

  public LeaseSettings {
    if (leaseMs < MIN_LEASE_MS || leaseMs > MAX_LEASE_MS) {
      throw new IllegalArgumentException(
          "lease must be between "
              + MIN_LEASE_MS
              + " ms and "
              + MAX_LEASE_MS
              + " ms, got "
              + leaseMs
              + " ms");
    }
    long least = leastMarginMs(leaseMs);
    if (marginMs < least || marginMs > leaseMs) {
      throw new IllegalArgumentException(
          "lease margin must be at least "
              + least
              + " ms for a lease of "
              + leaseMs
              + " ms (1% of it for clock drift, plus "
              + MIN_MARGIN_MS
              + " ms for the fence watchdog's tick and the kill) and at most the lease, got "
              + marginMs
              + " ms");
    }
  }

  /** The least margin allowed with a lease of {@code leaseMs}. */
  public static long leastMarginMs(long leaseMs) {
    return MIN_MARGIN_MS + (leaseMs + 99) / 100;
  }

  /**
   * When the tasks of a node last heard from at {@code lastHeardMs} (the arrival of its last
   * accepted heartbeat, or a new leader's takeover) are surely dead.
   */
  public long safeAfterMs(long lastHeardMs) {
    return lastHeardMs + leaseMs + marginMs;
  }

  /** How long a node may be silent before its lease has surely run out. */
  public long silenceMs() {
    return leaseMs + marginMs;
  }
}
