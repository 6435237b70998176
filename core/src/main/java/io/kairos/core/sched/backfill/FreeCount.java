package io.kairos.core.sched.backfill;

import io.kairos.core.model.JobId;
import io.kairos.core.model.RunningJob;
import io.kairos.core.sched.place.Ledger;
import io.kairos.core.sched.place.Reservation;
import io.kairos.core.state.ClusterSnapshot;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * GPUs free in all over time, for gangs that hold a count rather than nodes ({@link
 * Reservation#canFloat}): how many are free now, and when that count changes. Running jobs (from
 * the snapshot and from this pass) give theirs back at their time limits; reservations, pinned or
 * floating, take theirs at their start and give them back at their end.
 *
 * <p>Design note. The changes are one sorted array of {@code (time, change)} pairs packed in longs,
 * built on the first query of a pass (O(E log E) for E running jobs and reservations) and kept in
 * step with the ledger afterwards: what it started and reserved since the last query is added, in
 * one sort and a merge in place from the back (no new array unless it is full). A query is one
 * sweep from now with no work per node: the count of free GPUs nothing holds is exact for such
 * gangs, because any free GPU holds any of their tasks. The sweep steps over whole blocks of 64
 * changes where the count stays at or above what the gang needs (while a start is a candidate) or
 * below it (while none is), using each block's sum and least and greatest running sum; those are
 * computed lazily and, after a merge, again only from the first position it wrote (issue 16.4: with
 * thousands of reservations a new one's sweep crossed all of them).
 *
 * <p>A later pass may take the array over ({@link #carryTo}) when every job ran as predicted: the
 * changes it still needs are then exactly those after its own now (see {@code ScheduleCache}).
 */
public final class FreeCount {
  private static final int CHANGE_BITS = 22;
  private static final long CHANGE_OFFSET = 1L << (CHANGE_BITS - 1);

  private Ledger ledger;
  private long[] changes;
  private int from;
  private int size;
  private int startsSeen;
  private int reservationsSeen;
  // Blocks of BLOCK changes (by position in changes): the sum of a block's changes and the least
  // and greatest running sum within it. Valid for the blocks below indexed (and at or past the
  // block of from: those before it are never read); a merge invalidates from where it wrote.
  private static final int BLOCK_BITS = 6;
  private static final int BLOCK = 1 << BLOCK_BITS;
  private long[] blockSum = new long[0];
  private long[] blockMin = new long[0];
  private long[] blockMax = new long[0];
  private int indexed;

  FreeCount(ClusterSnapshot snapshot, Ledger ledger, Set<JobId> stopping, long stopBySec) {
    this.ledger = ledger;
    long now = ledger.nowSec();
    int count = snapshot.runningCount();
    changes = new long[Math.max(16, count * 2)];
    for (int i = 0; i < count; i++) {
      RunningJob r = snapshot.running(i);
      long release = AvailabilityProfile.releaseTime(r, now);
      if (!stopping.isEmpty() && stopping.contains(r.id())) {
        release = Math.max(now + 1, Math.min(release, stopBySec));
      }
      changes[size++] = pack(release, r.job().totalGpus());
    }
    Arrays.sort(changes, 0, size);
  }

  /**
   * Hands this count to a later pass's {@code ledger}, which already started {@code startsHeld}
   * jobs in place of reservations of this count (so their releases are here already, as the ends of
   * those reservations) and adopted {@code reservationsHeld} reservations that are here too.
   * Changes at or before the later pass's now are dropped: they happened.
   */
  public FreeCount carryTo(Ledger later, int startsHeld, int reservationsHeld) {
    this.ledger = later;
    this.startsSeen = startsHeld;
    this.reservationsSeen = reservationsHeld;
    long now = later.nowSec();
    while (from < size && timeOf(changes[from]) <= now) {
      from++;
    }
    return this;
  }

  /**
   * The earliest instant, now or a time at which the count changes, from which at least {@code
   * gpus} GPUs stay free for {@code lengthSec}; -1 when that never happens. {@code availableAt[0]}
   * gets the count free at that instant.
   */
  long earliest(long gpus, long lengthSec, long[] availableAt) {
    catchUp();
    index();
    long now = ledger.nowSec();
    long available = ledger.freeTotal();
    int e = from;
    while (e < size && timeOf(changes[e]) <= now) {
      available += changeOf(changes[e++]);
    }
    long candidate = available >= gpus ? now : -1;
    long candidateAvailable = available;
    while (true) {
      // A whole block where the count stays at or above gpus (with a candidate) or below it
      // (without) changes nothing but the count: skip it, unless the candidate's window ends in it.
      if ((e & (BLOCK - 1)) == 0 && e + BLOCK <= size) {
        int k = e >>> BLOCK_BITS;
        if (candidate >= 0 && available + blockMin[k] >= gpus) {
          if (timeOf(changes[e + BLOCK - 1]) - candidate >= lengthSec) {
            availableAt[0] = candidateAvailable;
            return candidate;
          }
          available += blockSum[k];
          e += BLOCK;
          continue;
        }
        if (candidate < 0 && available + blockMax[k] < gpus) {
          available += blockSum[k];
          e += BLOCK;
          continue;
        }
      }
      long next = e < size ? timeOf(changes[e]) : Long.MAX_VALUE;
      if (candidate >= 0 && next - candidate >= lengthSec) {
        availableAt[0] = candidateAvailable;
        return candidate;
      }
      if (e >= size) {
        return -1;
      }
      while (e < size && timeOf(changes[e]) == next) {
        available += changeOf(changes[e++]);
      }
      if (available < gpus) {
        candidate = -1;
      } else if (candidate < 0) {
        candidate = next;
        candidateAvailable = available;
      }
    }
  }

  /** Adds what the ledger started and reserved since the last query: one sort and one merge. */
  public void catchUp() {
    long now = ledger.nowSec();
    List<RunningJob> started = ledger.started();
    List<Reservation> made = ledger.reservationsInOrderMade();
    int added = (started.size() - startsSeen) + 2 * (made.size() - reservationsSeen);
    if (added == 0) {
      return;
    }
    long[] more = new long[added];
    int k = 0;
    for (; startsSeen < started.size(); startsSeen++) {
      RunningJob r = started.get(startsSeen);
      more[k++] = pack(AvailabilityProfile.releaseTime(r, now), r.job().totalGpus());
    }
    for (; reservationsSeen < made.size(); reservationsSeen++) {
      Reservation r = made.get(reservationsSeen);
      more[k++] = pack(r.startSec(), -r.gpus());
      more[k++] = pack(r.endSec(), r.gpus());
    }
    Arrays.sort(more);
    if (size + added > changes.length) {
      // Grow, dropping the changes already past.
      long[] grown = new long[Math.max(16, (size - from + added) * 3 / 2)];
      System.arraycopy(changes, from, grown, 0, size - from);
      changes = grown;
      size -= from;
      from = 0;
      indexed = 0;
    }
    // Merge in place from the back: each change moves at most once.
    int a = size - 1;
    int b = added - 1;
    int n = size + added - 1;
    while (b >= 0) {
      changes[n--] = a >= from && changes[a] > more[b] ? changes[a--] : more[b--];
    }
    size += added;
    indexed = Math.min(indexed, (n + 1) >>> BLOCK_BITS);
  }

  /** Computes the blocks not yet valid, from the block of {@code from} on: O(changes there). */
  private void index() {
    int blocks = size >>> BLOCK_BITS;
    if (blocks > blockSum.length) {
      int capacity = Math.max(16, blocks * 3 / 2);
      blockSum = Arrays.copyOf(blockSum, capacity);
      blockMin = Arrays.copyOf(blockMin, capacity);
      blockMax = Arrays.copyOf(blockMax, capacity);
    }
    for (int k = Math.max(indexed, from >>> BLOCK_BITS); k < blocks; k++) {
      long sum = 0;
      long min = Long.MAX_VALUE;
      long max = Long.MIN_VALUE;
      for (int i = k << BLOCK_BITS, end = i + BLOCK; i < end; i++) {
        sum += changeOf(changes[i]);
        min = Math.min(min, sum);
        max = Math.max(max, sum);
      }
      blockSum[k] = sum;
      blockMin[k] = min;
      blockMax[k] = max;
    }
    indexed = Math.max(indexed, blocks);
  }

  private static long pack(long timeSec, long change) {
    if (change <= -CHANGE_OFFSET || change >= CHANGE_OFFSET) {
      throw new IllegalStateException("too many GPUs for the profile: " + change);
    }
    return (timeSec << CHANGE_BITS) | (change + CHANGE_OFFSET);
  }

  private static long timeOf(long packed) {
    return packed >>> CHANGE_BITS;
  }

  private static long changeOf(long packed) {
    return (packed & ((1L << CHANGE_BITS) - 1)) - CHANGE_OFFSET;
  }
}
