package io.kairos.core.sched;

import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import java.util.Arrays;
import java.util.Optional;

/**
 * Why each job that did not start is waiting, kept compact: one byte per pending job in the pass's
 * order; counts per reason are computed when first asked for. Not thread-safe.
 */
public final class Diagnosis {
  private final Job[] pending;
  private final int[] order;
  private final byte[] reasons;
  private final Details details;
  private int[] counts; // computed on first use: most passes' diagnoses are never read
  // The reasons of the last ranks, written into reasons on first read (null once written): a pass
  // over a long queue settles them all alike and most diagnoses are never read.
  private volatile Tail tail;

  /** Writes the reasons a pass left to be filled in. */
  interface Tail {
    void fill(byte[] reasons);
  }

  /** Builds the detail text of the job at a rank on demand (most are never asked for). */
  interface Details {
    Details NONE = (rank, reason) -> null;

    /** The text, or null for none. */
    String detail(int rank, Reason reason);
  }

  Diagnosis(Job[] pending, int[] order, byte[] reasons) {
    this(pending, order, reasons, Details.NONE);
  }

  Diagnosis(Job[] pending, int[] order, byte[] reasons, Details details) {
    this(pending, order, reasons, details, null);
  }

  /**
   * @param tail null, or what writes the reasons {@code reasons} does not hold yet; it is run on
   *     the first read, so it must read only what stays unchanged while the pass's snapshot is read
   */
  Diagnosis(Job[] pending, int[] order, byte[] reasons, Details details, Tail tail) {
    this.pending = pending;
    this.order = order;
    this.reasons = reasons;
    this.details = details;
    this.tail = tail;
  }

  /** The reasons, the tail written in first. */
  private byte[] reasons() {
    if (tail != null) {
      fillTail();
    }
    return reasons;
  }

  private synchronized void fillTail() {
    Tail t = tail;
    if (t != null) {
      t.fill(reasons);
      tail = null;
    }
  }

  /**
   * The detail of the reason of the job at {@code rank}, for people, where the pass has one: for
   * {@link Reason#QUOTA} the resource and the numbers ({@code gpu:H100: queue research uses 6 of
   * nominal 8, cohort lends 1, job needs 4}); for {@link Reason#PREEMPTING} the jobs it waits for.
   * Built when asked, from the state at the end of the pass.
   */
  public Optional<String> detail(int rank) {
    byte r = reasons()[rank];
    return r < 0 ? Optional.empty() : Optional.ofNullable(details.detail(rank, Reason.ofCode(r)));
  }

  /** {@link #detail(int)} by job id; O(n). */
  public Optional<String> detail(JobId job) {
    for (int rank = 0; rank < order.length; rank++) {
      if (pending[order[rank]].id().equals(job)) {
        return detail(rank);
      }
    }
    return Optional.empty();
  }

  private int[] counts() {
    if (counts == null) {
      int[] c = new int[Reason.values().length + 1];
      for (byte r : reasons()) {
        c[r + 1]++;
      }
      counts = c;
    }
    return counts;
  }

  /** Pending jobs in the order the pass considered them. */
  public int size() {
    return order.length;
  }

  public Job job(int rank) {
    return pending[order[rank]];
  }

  /** The snapshot slot (index into the pass's pending jobs) of the job at {@code rank}. */
  public int slot(int rank) {
    return order[rank];
  }

  /** Why the job at {@code rank} waits, or empty when it started in this pass. */
  public Optional<Reason> reason(int rank) {
    byte r = reasons()[rank];
    return r < 0 ? Optional.empty() : Optional.of(Reason.ofCode(r));
  }

  public int count(Reason reason) {
    return counts()[reason.ordinal() + 1];
  }

  /** Jobs that started in this pass. */
  public int started() {
    return counts()[0];
  }

  /** Whether {@code other} has the same jobs in the same order with the same reasons. O(n). */
  public boolean sameAs(Diagnosis other) {
    if (other.order.length != order.length || !Arrays.equals(reasons(), other.reasons())) {
      return false;
    }
    for (int rank = 0; rank < order.length; rank++) {
      if (!job(rank).id().equals(other.job(rank).id())) {
        return false;
      }
    }
    return true;
  }

  @Override
  public String toString() {
    return "Diagnosis" + Arrays.toString(counts());
  }
}
