package io.kairos.core.sched.preempt;

import io.kairos.core.Checks;
import java.util.ArrayList;

/**
 * Anti-thrashing: when a running job may be chosen as a victim again.
 *
 * <ol>
 *   <li>every job runs at least {@code graceSec} after it (re)starts before it can be preempted, so
 *       a job requeued by a preemption is not preempted again the moment it restarts;
 *   <li>a job preempted {@code maxPreemptionsPerWindow} times within {@code windowSec} (counted
 *       back from its latest preemption) is protected for {@code protectAfterPreemptionsSec} after
 *       that latest preemption.
 * </ol>
 *
 * <p>Example (defaults: grace 30 s, 3 preemptions in 3,600 s protect for 3,600 s): preempted at
 * t=100, 700 and 1,500, the job is protected until 1,500 + 3,600 = 5,100, and whenever it restarts,
 * for 30 s after the restart.
 *
 * <p>Pure functions over a {@link PreemptionHistory}; the caller feeds the result into {@link
 * VictimCandidate#protectedUntilSec()}.
 */
public record ProtectionPolicy(
    long graceSec, long windowSec, int maxPreemptionsPerWindow, long protectAfterPreemptionsSec) {
  public static final ProtectionPolicy DEFAULT = new ProtectionPolicy(30, 3_600, 3, 3_600);

  public ProtectionPolicy {
    Checks.nonNegative(graceSec, "graceSec");
    Checks.nonNegative(windowSec, "windowSec");
    Checks.positive(maxPreemptionsPerWindow, "maxPreemptionsPerWindow");
    Checks.nonNegative(protectAfterPreemptionsSec, "protectAfterPreemptionsSec");
  }

  /**
   * The history after one more preemption at {@code atSec}: times older than the window before
   * {@code atSec} are dropped, and at most {@code maxPreemptionsPerWindow} of the latest are kept.
   */
  public PreemptionHistory record(PreemptionHistory history, long atSec) {
    Checks.argument(
        atSec >= history.lastSec(),
        () -> "preemption at t=" + atSec + " is before the last one, t=" + history.lastSec());
    var kept = new ArrayList<Long>(maxPreemptionsPerWindow);
    for (long t : history.preemptedAtSec()) {
      if (atSec - t <= windowSec) {
        kept.add(t);
      }
    }
    kept.add(atSec);
    while (kept.size() > maxPreemptionsPerWindow) {
      kept.removeFirst();
    }
    return new PreemptionHistory(kept);
  }

  /** How many of the history's preemptions lie in the window ending at its latest one. */
  public int preemptionsInWindow(PreemptionHistory history) {
    long last = history.lastSec();
    int count = 0;
    for (long t : history.preemptedAtSec()) {
      if (last - t <= windowSec) {
        count++;
      }
    }
    return count;
  }

  /**
   * Until when a job that (re)started at {@code startSec} with this history may not be preempted:
   * the later of its grace after the start and, when it was preempted too often, the protection
   * after its latest preemption.
   */
  public long protectedUntilSec(PreemptionHistory history, long startSec) {
    long until = startSec + graceSec;
    if (preemptionsInWindow(history) >= maxPreemptionsPerWindow) {
      until = Math.max(until, history.lastSec() + protectAfterPreemptionsSec);
    }
    return until;
  }

  /** Whether the job is protected at {@code nowSec}. */
  public boolean isProtected(PreemptionHistory history, long startSec, long nowSec) {
    return nowSec < protectedUntilSec(history, startSec);
  }
}
