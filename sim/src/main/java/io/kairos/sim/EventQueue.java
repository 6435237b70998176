package io.kairos.sim;

/**
 * A 4-ary min-heap of simulator events ordered by (time, kind, sequence).
 *
 * <p>Kinds order events at the same instant: completions ({@link #FINISH}), then preempted jobs
 * stopping at the end of their grace ({@link #STOP}), then arrivals ({@link #ARRIVAL}), then pass
 * ticks ({@link #TICK}), so a job arriving when another ends sees the freed GPUs, and a job that
 * ends as its grace runs out finishes rather than being requeued. The sequence number (insertion
 * order) makes the order total. A 4-ary heap does log4(n) levels per operation and keeps children
 * in one cache line; entries live in parallel primitive arrays, so the queue allocates only when it
 * grows.
 */
final class EventQueue {
  static final int FINISH = 0;
  static final int STOP = 1;
  static final int ARRIVAL = 2;
  static final int TICK = 3;

  private static final int D = 4;

  private long[] keys = new long[64]; // time << 2 | kind
  private long[] seqs = new long[64];
  private int[] payloads = new int[64];
  private int size;
  private long nextSeq;

  void add(long timeSec, int kind, int payload) {
    if (timeSec < 0 || timeSec >= 1L << 61) {
      throw new IllegalArgumentException("event time out of range [0, 2^61): " + timeSec);
    }
    if (size == keys.length) {
      keys = java.util.Arrays.copyOf(keys, size * 2);
      seqs = java.util.Arrays.copyOf(seqs, size * 2);
      payloads = java.util.Arrays.copyOf(payloads, size * 2);
    }
    long key = (timeSec << 2) | kind;
    long seq = nextSeq++;
    int i = size++;
    while (i > 0) {
      int parent = (i - 1) / D;
      if (!less(key, seq, keys[parent], seqs[parent])) {
        break;
      }
      keys[i] = keys[parent];
      seqs[i] = seqs[parent];
      payloads[i] = payloads[parent];
      i = parent;
    }
    keys[i] = key;
    seqs[i] = seq;
    payloads[i] = payload;
  }

  boolean isEmpty() {
    return size == 0;
  }

  int size() {
    return size;
  }

  long peekTime() {
    return keys[0] >>> 2;
  }

  int peekKind() {
    return (int) (keys[0] & 3);
  }

  int peekPayload() {
    return payloads[0];
  }

  void poll() {
    size--;
    if (size == 0) {
      return;
    }
    long key = keys[size];
    long seq = seqs[size];
    int payload = payloads[size];
    int i = 0;
    while (true) {
      int first = i * D + 1;
      if (first >= size) {
        break;
      }
      int best = first;
      int last = Math.min(first + D, size);
      for (int c = first + 1; c < last; c++) {
        if (less(keys[c], seqs[c], keys[best], seqs[best])) {
          best = c;
        }
      }
      if (!less(keys[best], seqs[best], key, seq)) {
        break;
      }
      keys[i] = keys[best];
      seqs[i] = seqs[best];
      payloads[i] = payloads[best];
      i = best;
    }
    keys[i] = key;
    seqs[i] = seq;
    payloads[i] = payload;
  }

  private static boolean less(long keyA, long seqA, long keyB, long seqB) {
    return keyA < keyB || (keyA == keyB && seqA < seqB);
  }
}
