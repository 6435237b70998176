package io.kairos.core.sched.order;

import io.kairos.core.state.ClusterSnapshot;
import io.kairos.core.state.PendingJobs;

/**
 * Sorts a snapshot's pending jobs for one pass without boxing: keys go into primitive arrays and a
 * merge sort permutes an {@code int[]} of indexes. O(n log n), three arrays per pass.
 */
public final class PassOrder {
  private PassOrder() {}

  /** Indexes into the snapshot's pending jobs, in the order the pass considers them. */
  public static int[] sort(ClusterSnapshot snapshot, JobOrder order, long nowSec) {
    return sort(snapshot, order, nowSec, null);
  }

  /**
   * As {@link #sort(ClusterSnapshot, JobOrder, long)} with a tier between priority and the key:
   * higher priority first, then lower {@code tier[slot]} (each in {@code [0, 2^31)}), then the key,
   * then id. Priority and tier are packed into one long, so the comparison costs the same.
   */
  public static int[] sort(ClusterSnapshot snapshot, JobOrder order, long nowSec, long[] tier) {
    var pending = snapshot.pendingJobs();
    int n = pending.size();
    int[] prio = pending.priority();
    // Keys count from the eligible time (Slurm's age): a held or requeued job queues from then.
    long[] eligible = pending.eligibleSec();
    long[] limit = pending.limitSec();
    int[] gpus = pending.gpus();
    long[] id = pending.ids();
    long[] priority = new long[n];
    long[] key = new long[n];
    int[] index = new int[n];
    boolean sorted = true;
    boolean expected = order.usesExpectedRun();
    for (int i = 0; i < n; i++) {
      priority[i] = tier == null ? -prio[i] : ((long) -prio[i] << 31) | tier[i];
      long runSec = expected ? snapshot.expectedRunSec(i) : limit[i];
      key[i] = order.key(eligible[i], runSec, gpus[i], nowSec);
      index[i] = i;
      if (i > 0 && sorted && compare(i - 1, i, priority, key, id) > 0) {
        sorted = false;
      }
    }
    if (!sorted && !packedSort(index, priority, key, id)) {
      mergeSort(index, new int[n], 0, n, priority, key, id);
    }
    return index;
  }

  /**
   * The common case as one primitive sort: ids increasing with the index (the pending table is in
   * arrival order), and priority and key ranges that fit beside the index in a long. Sorting {@code
   * (priority - minPriority) << (keyBits + bits) | (key - minKey) << bits | index} then orders by
   * priority, key, then index, which is by id. Returns false, leaving {@code index} alone, when the
   * case does not apply.
   */
  private static boolean packedSort(int[] index, long[] priority, long[] key, long[] id) {
    int n = index.length;
    int bits = 32 - Integer.numberOfLeadingZeros(Math.max(1, n - 1));
    long minKey = Long.MAX_VALUE;
    long maxKey = Long.MIN_VALUE;
    long minPriority = Long.MAX_VALUE;
    long maxPriority = Long.MIN_VALUE;
    for (int i = 0; i < n; i++) {
      if (i > 0 && id[i] <= id[i - 1]) {
        return false;
      }
      minKey = Math.min(minKey, key[i]);
      maxKey = Math.max(maxKey, key[i]);
      minPriority = Math.min(minPriority, priority[i]);
      maxPriority = Math.max(maxPriority, priority[i]);
    }
    long keyRange = maxKey - minKey;
    long priorityRange = maxPriority - minPriority;
    if (keyRange < 0 || priorityRange < 0) {
      return false; // overflow
    }
    int keyBits = 64 - Long.numberOfLeadingZeros(keyRange);
    int priorityBits = 64 - Long.numberOfLeadingZeros(priorityRange);
    if (bits + keyBits + priorityBits > 63) {
      return false;
    }
    long[] packed = new long[n];
    int shift = bits + keyBits;
    for (int i = 0; i < n; i++) {
      packed[i] = ((priority[i] - minPriority) << shift) | ((key[i] - minKey) << bits) | i;
    }
    java.util.Arrays.sort(packed);
    long mask = (1L << bits) - 1;
    for (int i = 0; i < n; i++) {
      index[i] = (int) (packed[i] & mask);
    }
    return true;
  }

  /**
   * Moves the longest-waiting job (earliest eligible time, then lowest id) to the front of its
   * priority level if the guard says it is starving. Waiting counts from the eligible time, so a
   * job held until later (a begin time, a requeue backoff) is not waiting yet. O(n).
   */
  public static void promoteOldest(
      int[] order, PendingJobs pending, long nowSec, StarvationGuard guard) {
    int n = order.length;
    if (n < 2) {
      return;
    }
    long[] eligible = pending.eligibleSec();
    long[] id = pending.ids();
    int oldest = 0;
    for (int i = 1; i < n; i++) {
      if (eligible[i] < eligible[oldest]
          || (eligible[i] == eligible[oldest] && id[i] < id[oldest])) {
        oldest = i;
      }
    }
    if (eligible[oldest] > nowSec
        || !guard.isStarving(nowSec - eligible[oldest], pending.limitSec()[oldest])) {
      return;
    }
    moveToFrontOfItsPriority(order, pending, oldest);
  }

  /**
   * The large-gang starvation guard: moves the longest-waiting job of at least {@code minGpus} GPUs
   * that has waited {@code maxWaitSec} or more to the front of its priority level, so it holds the
   * reservation that smaller jobs may backfill around but not delay. O(n).
   */
  public static void promoteOldestLarge(
      int[] order, PendingJobs pending, long nowSec, int minGpus, long maxWaitSec) {
    int n = order.length;
    long[] eligible = pending.eligibleSec();
    long[] id = pending.ids();
    int[] gpus = pending.gpus();
    int oldest = -1;
    for (int i = 0; i < n; i++) {
      if (gpus[i] >= minGpus
          && eligible[i] <= nowSec
          && (oldest < 0
              || eligible[i] < eligible[oldest]
              || (eligible[i] == eligible[oldest] && id[i] < id[oldest]))) {
        oldest = i;
      }
    }
    if (oldest < 0 || nowSec - eligible[oldest] < maxWaitSec) {
      return;
    }
    moveToFrontOfItsPriority(order, pending, oldest);
  }

  /** Moves {@code slot} before every job of its priority, keeping the rest in order. O(n). */
  private static void moveToFrontOfItsPriority(int[] order, PendingJobs pending, int slot) {
    int at = 0;
    while (order[at] != slot) {
      at++;
    }
    int priority = pending.priority()[slot];
    int front = at;
    while (front > 0 && pending.priority()[order[front - 1]] == priority) {
      front--;
    }
    System.arraycopy(order, front, order, front + 1, at - front);
    order[front] = slot;
  }

  private static int compare(int a, int b, long[] priority, long[] key, long[] id) {
    int c = Long.compare(priority[a], priority[b]);
    if (c != 0) {
      return c;
    }
    c = Long.compare(key[a], key[b]);
    return c != 0 ? c : Long.compare(id[a], id[b]);
  }

  private static void mergeSort(
      int[] a, int[] tmp, int from, int to, long[] priority, long[] key, long[] id) {
    if (to - from < 24) {
      for (int i = from + 1; i < to; i++) {
        int v = a[i];
        int j = i - 1;
        while (j >= from && compare(a[j], v, priority, key, id) > 0) {
          a[j + 1] = a[j];
          j--;
        }
        a[j + 1] = v;
      }
      return;
    }
    int mid = (from + to) >>> 1;
    mergeSort(a, tmp, from, mid, priority, key, id);
    mergeSort(a, tmp, mid, to, priority, key, id);
    if (compare(a[mid - 1], a[mid], priority, key, id) <= 0) {
      return;
    }
    System.arraycopy(a, from, tmp, from, to - from);
    int i = from;
    int j = mid;
    for (int k = from; k < to; k++) {
      if (j >= to || (i < mid && compare(tmp[i], tmp[j], priority, key, id) <= 0)) {
        a[k] = tmp[i++];
      } else {
        a[k] = tmp[j++];
      }
    }
  }
}
