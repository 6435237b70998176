package io.kairos.control.raft;

import java.time.Duration;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Whether this replica can do its work, for {@code GET /readyz}: cheap (no lock on the state, no
 * log write), from what Ratis already knows.
 *
 * <p>Not ready when:
 *
 * <ol>
 *   <li>the Raft server is not running;
 *   <li>no leader is known (an election, or too few replicas up to hold one);
 *   <li>a follower has not heard from its leader for {@code stuckAfter};
 *   <li>the leader has not yet applied its term's first entry, or has heard from fewer than a
 *       majority of the group within {@code stuckAfter} (it cannot commit);
 *   <li>entries wait for a commit and the commit index has not moved for {@code stuckAfter} (the
 *       leader's log cannot be written or replicated);
 *   <li>committed entries wait to be applied and the applied index has not moved for {@code
 *       stuckAfter} (the apply thread is stuck or dead).
 * </ol>
 *
 * <p>The last two are judged across calls: each call notes since when the index has not moved, so a
 * probe every few seconds sees a stall within {@code stuckAfter} plus one period.
 */
public final class Readiness {
  public static final Duration STUCK_AFTER = Duration.ofSeconds(10);

  /**
   * What Ratis says of this replica now.
   *
   * @param running the server is alive
   * @param leaderKnown some leader is known
   * @param leader this replica leads
   * @param leaderReady this leader has applied its term's first entry
   * @param groupSize replicas in the group
   * @param heardWithin leader: replicas (itself included) heard from within the threshold
   * @param leaderSilentMs follower: how long since its leader last reached it; -1 unknown
   * @param lastIndex the last entry in the log
   * @param committed the commit index
   * @param applied the last applied index
   */
  public record Observation(
      boolean running,
      boolean leaderKnown,
      boolean leader,
      boolean leaderReady,
      int groupSize,
      int heardWithin,
      long leaderSilentMs,
      long lastIndex,
      long committed,
      long applied) {}

  private final long stuckAfterNanos;
  private final LongSupplier nanos;
  private long seenCommitted = Long.MIN_VALUE;
  private long commitWaitSince;
  private long seenApplied = Long.MIN_VALUE;
  private long applyWaitSince;

  public Readiness(Duration stuckAfter, LongSupplier nanos) {
    this.stuckAfterNanos = stuckAfter.toNanos();
    this.nanos = nanos;
  }

  public long stuckAfterMs() {
    return stuckAfterNanos / 1_000_000;
  }

  /** Why this replica is not ready, in words; empty when it is. */
  public synchronized Optional<String> judge(Observation o) {
    long now = nanos.getAsLong();
    // Note since when each index has stood still with work waiting behind it.
    if (o.committed() != seenCommitted || o.lastIndex() <= o.committed()) {
      seenCommitted = o.committed();
      commitWaitSince = now;
    }
    if (o.applied() != seenApplied || o.applied() >= o.committed()) {
      seenApplied = o.applied();
      applyWaitSince = now;
    }
    long stuckSec = stuckAfterNanos / 1_000_000_000L;
    if (!o.running()) {
      return Optional.of("the Raft server is not running");
    }
    if (!o.leaderKnown()) {
      return Optional.of("no leader is known (an election is under way, or too few replicas run)");
    }
    if (o.leader()) {
      if (!o.leaderReady()) {
        return Optional.of("this replica was just elected and has not applied its first entry");
      }
      int majority = o.groupSize() / 2 + 1;
      if (o.heardWithin() < majority) {
        return Optional.of(
            "this leader has heard from "
                + o.heardWithin()
                + " of "
                + o.groupSize()
                + " replicas (itself included) in the last "
                + stuckSec
                + " s: it cannot commit");
      }
    } else if (o.leaderSilentMs() > stuckAfterNanos / 1_000_000) {
      return Optional.of(
          "the leader has not reached this replica for " + o.leaderSilentMs() / 1000 + " s");
    }
    if (o.lastIndex() > o.committed() && now - commitWaitSince > stuckAfterNanos) {
      return Optional.of(
          (o.lastIndex() - o.committed())
              + " log entries have waited more than "
              + stuckSec
              + " s for a commit (commit index "
              + o.committed()
              + ")");
    }
    if (o.applied() < o.committed() && now - applyWaitSince > stuckAfterNanos) {
      return Optional.of(
          "applying has not moved for more than "
              + stuckSec
              + " s (applied "
              + o.applied()
              + ", committed "
              + o.committed()
              + ")");
    }
    return Optional.empty();
  }
}
