package io.kairos.core.sched;

import io.kairos.core.state.PendingJobs;

/**
 * Whether some job after a rank could still start in the free GPUs: one that is not passed over
 * (held until later, or never fitting) and needs no more GPUs than are free. A reservation past the
 * first is only worth computing while that holds.
 *
 * <p>Design note. Within a pass the ranks asked about only grow and the free GPUs only shrink, so a
 * cursor remembers the ranks already known not to qualify: the answers of a whole pass cost O(jobs
 * scanned) together, usually a few jobs (a small job is seldom far), where a table of suffix minima
 * costs a scan of the whole queue in every pass. A question out of that order starts the scan again
 * from its rank, so the answer never depends on the order of questions.
 */
final class LaterFit {
  private final int[] order;
  private final int[] gpus;
  private final long[] eligibleSec;
  private final Exclusions exclusions;
  private final long now;
  // Every rank in [lastFrom, cursor) is passed over or needs more than lastFree GPUs.
  private int lastFrom = Integer.MAX_VALUE;
  private long lastFree;
  private int cursor;

  LaterFit(int[] order, PendingJobs pending, Exclusions exclusions, long now) {
    this.order = order;
    this.gpus = pending.gpus();
    this.eligibleSec = pending.eligibleSec();
    this.exclusions = exclusions;
    this.now = now;
  }

  /** Whether a job at rank {@code from} or later, not passed over, needs at most {@code free}. */
  boolean anyFits(int from, long free) {
    if (from < lastFrom || free > lastFree) {
      cursor = from;
    } else {
      cursor = Math.max(cursor, from);
    }
    lastFrom = from;
    lastFree = free;
    for (; cursor < order.length; cursor++) {
      int slot = order[cursor];
      if (gpus[slot] <= free && eligibleSec[slot] <= now && !exclusions.neverFits(slot)) {
        return true;
      }
    }
    return false;
  }
}
