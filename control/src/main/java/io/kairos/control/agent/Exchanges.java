package io.kairos.control.agent;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Keeps the work of agents' heartbeat exchanges small when short jobs turn over: the agents'
 * service asks it two things.
 *
 * <ul>
 *   <li><b>Superseded long polls.</b> An agent with news while its long poll is held gives up on
 *       the poll and sends the news at once; the controller's side of the old poll would go on
 *       waiting, computing a plan at every state change, until its wait ran out. Each heartbeat of
 *       a node gets the next number; a held heartbeat that wakes and finds a newer one of its node
 *       answers at once, empty.
 *   <li><b>The pass after the ends</b> (off by default: {@link #PASS_WAIT_MS}). A heartbeat that
 *       reported task ends commits them, then waits for the scheduling pass they trigger to commit
 *       its starts, so that its reply carries the jobs placed on the GPUs it freed.
 * </ul>
 *
 * <p>A node's number is bumped only by heartbeats that authenticated as that node: one node cannot
 * cut another's long poll short. Thread-safe.
 */
public final class Exchanges {
  /** Waits for a scheduling pass that began at a state version or later ({@code SchedulerLoop}). */
  @FunctionalInterface
  public interface PassWait {
    PassWait NONE = (version, timeoutMs) -> true;

    boolean await(long version, long timeoutMs) throws InterruptedException;
  }

  /**
   * The longest a heartbeat that reported ends waits for the pass; 0 (the default): it does not
   * wait, and the next long poll brings the starts. Measured with an agent that did not abort its
   * polls (scripts/turnover.sh, 16 agents, 2,000 jobs, a loaded 2-core machine): waiting up to 250
   * ms made fewer exchanges (0.24 per job instead of 0.36) but a slower turnover (70-83 jobs/s
   * instead of 106), since the agent reports its next ends only after that reply. The system
   * property {@code kairos.agents.passWaitMs} sets it, for benchmarks on other machines.
   */
  static final long PASS_WAIT_MS = Math.max(0, Long.getLong("kairos.agents.passWaitMs", 0));

  private final Map<String, AtomicLong> latest = new ConcurrentHashMap<>();
  private final LongAdder heartbeats = new LongAdder();
  private final LongAdder superseded = new LongAdder();
  private final LongAdder passWaits = new LongAdder();
  private volatile PassWait passes = PassWait.NONE;

  public void passesFrom(PassWait wait) {
    passes = java.util.Objects.requireNonNull(wait, "wait");
  }

  /** A heartbeat of {@code node} arrived (authenticated as it); returns its number. */
  long arrived(String node) {
    heartbeats.increment();
    return latest.computeIfAbsent(node, n -> new AtomicLong()).incrementAndGet();
  }

  /** Whether a newer heartbeat of {@code node} than {@code number} has arrived. */
  boolean superseded(String node, long number) {
    AtomicLong newest = latest.get(node);
    if (newest == null || newest.get() == number) {
      return false;
    }
    superseded.increment();
    return true;
  }

  /** Waits for the pass that follows state version {@code version} (the ends just committed). */
  void awaitPass(long version) throws InterruptedException {
    if (PASS_WAIT_MS > 0) {
      passWaits.increment();
      passes.await(version, PASS_WAIT_MS);
    }
  }

  /** {@code kairos_agent_heartbeats_total} and its companions, for exchanges per job. */
  public void register(MeterRegistry meters) {
    FunctionCounter.builder("kairos.agent.heartbeats", this, Exchanges::heartbeats)
        .description("agent heartbeats served (each an HTTP exchange)")
        .register(meters);
    FunctionCounter.builder("kairos.agent.heartbeats.superseded", this, Exchanges::superseded)
        .description("held heartbeats answered early: a newer one of their node had arrived")
        .register(meters);
    FunctionCounter.builder("kairos.agent.heartbeats.pass.waits", this, Exchanges::passWaits)
        .description("heartbeats that reported ends and waited for the pass they triggered")
        .register(meters);
  }

  /** Heartbeats served since start. */
  public long heartbeats() {
    return heartbeats.sum();
  }

  /** Held heartbeats answered early because a newer one of their node arrived. */
  public long superseded() {
    return superseded.sum();
  }

  /** Heartbeats that waited for the pass after the ends they reported. */
  public long passWaits() {
    return passWaits.sum();
  }
}
