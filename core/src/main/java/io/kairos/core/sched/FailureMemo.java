package io.kairos.core.sched;

import java.util.Arrays;

/**
 * Remembers, within one pass, which gang shapes did and did not fit, so that jobs whose outcome
 * follows are not placed again.
 *
 * <p>Why this is sound. Within a pass capacity only shrinks: starts take GPUs, reservations add
 * constraints (except when a pinned reservation moves to other nodes to let a job start: then the
 * failures that respected reservations are forgotten, {@link #reservationsMoved}). Placement
 * succeeds exactly when the usable tasks add up to the gang, and a job ending later must respect
 * more reservations. So for one shape (task shape, distinct nodes, GPU model), once {@code k} tasks
 * ending at {@code e} failed, {@code k' >= k} tasks ending at {@code e' >= e} fail for the rest of
 * the pass; "failed ignoring reservations" is stored with {@code e = Long.MIN_VALUE}. A fit
 * ignoring reservations only holds until the ledger changes, so it carries the ledger version. One
 * entry of each kind per shape: the most recent.
 *
 * <p>Arrays indexed by the shape ids interned at submission: no hashing in the pass.
 */
final class FailureMemo {
  private final long[] failedEndSec;
  private final int[] failedTasks;
  private final int[] fitVersion;
  private final int[] fitTasks;

  FailureMemo(int shapes) {
    failedEndSec = new long[shapes];
    failedTasks = new int[shapes];
    fitVersion = new int[shapes];
    fitTasks = new int[shapes];
    Arrays.fill(failedTasks, Integer.MAX_VALUE);
    Arrays.fill(fitVersion, -1);
  }

  /**
   * Whether {@code tasks} tasks of the shape, respecting reservations up to {@code endSec}, fail.
   */
  boolean knownToFail(int shape, int tasks, long endSec) {
    return failedTasks[shape] <= tasks && failedEndSec[shape] <= endSec;
  }

  /**
   * A pinned reservation moved to other nodes: spare GPUs grew on some nodes, so failures that
   * respected reservations may not hold any more; failures ignoring them still do.
   */
  void reservationsMoved() {
    for (int shape = 0; shape < failedTasks.length; shape++) {
      if (failedEndSec[shape] != Long.MIN_VALUE) {
        failedTasks[shape] = Integer.MAX_VALUE;
      }
    }
  }

  void recordFailure(int shape, int tasks, long endSec) {
    failedTasks[shape] = tasks;
    failedEndSec[shape] = endSec;
  }

  /** Whether {@code tasks} tasks of the shape are known to fit when no reservation is respected. */
  boolean knownToFit(int shape, int tasks, int version) {
    return fitVersion[shape] == version && fitTasks[shape] >= tasks;
  }

  void recordFit(int shape, int tasks, int version) {
    fitVersion[shape] = version;
    fitTasks[shape] = tasks;
  }
}
