package io.kairos.testkit;

import io.kairos.testkit.SchedulerHarness.JobState;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.PriorityQueue;

/**
 * What is still to happen in a {@link SchedulerHarness} run: arrivals submitted for a later time
 * (kept in submission order, which the harness keeps in time order), running jobs by the time they
 * finish, and pending jobs held until a later eligible time. Ties go to the lower job id.
 *
 * <p>The harness changes the store and the job records; this only says what is due and when the
 * next thing happens. Not thread-safe, like the harness.
 */
final class Timeline {
  /** No next event. */
  static final long NONE = Long.MAX_VALUE;

  private final ArrayDeque<JobRecord> arrivals = new ArrayDeque<>();
  private final PriorityQueue<JobRecord> finishes =
      new PriorityQueue<>(Comparator.comparingLong(JobRecord::endSec).thenComparing(JobRecord::id));
  // Pending jobs held until a later time: the loop runs a pass when each becomes eligible.
  private final PriorityQueue<JobRecord> holds =
      new PriorityQueue<>(
          Comparator.comparingLong(JobRecord::eligibleSec).thenComparing(JobRecord::id));

  /** Whether no arrival is waiting for its time. */
  boolean noArrivalsWaiting() {
    return arrivals.isEmpty();
  }

  /** The time of the last arrival queued, or {@link Long#MIN_VALUE} when none waits. */
  long lastArrivalSec() {
    return arrivals.isEmpty() ? Long.MIN_VALUE : arrivals.peekLast().submitSec();
  }

  /** Queues an arrival; it must not come before the last one queued. */
  void arriveLater(JobRecord record) {
    arrivals.addLast(record);
  }

  /** The first arrival due at or before {@code nowSec}, taken off the queue; null when none. */
  JobRecord pollArrival(long nowSec) {
    return !arrivals.isEmpty() && arrivals.peekFirst().submitSec() <= nowSec
        ? arrivals.pollFirst()
        : null;
  }

  /** A job started: it finishes at {@link JobRecord#endSec()}. */
  void running(JobRecord record) {
    finishes.add(record);
  }

  /** A running job was stopped before its finish. */
  void stopped(JobRecord record) {
    finishes.remove(record);
  }

  /** The first job whose finish is due at or before {@code nowSec}, taken off; null when none. */
  JobRecord pollFinish(long nowSec) {
    return !finishes.isEmpty() && finishes.peek().endSec() <= nowSec ? finishes.poll() : null;
  }

  /** A pending job held until its eligible time, later than now. */
  void hold(JobRecord record) {
    holds.add(record);
  }

  /**
   * When the next finish, arrival or end of a hold (a pending job becoming eligible) after {@code
   * nowSec} happens, or {@link #NONE}.
   */
  long nextEventSec(long nowSec) {
    while (!holds.isEmpty()
        && (holds.peek().state() != JobState.PENDING || holds.peek().eligibleSec() <= nowSec)) {
      holds.poll(); // started, cancelled or already eligible: nothing left to wait for
    }
    long next = holds.isEmpty() ? NONE : holds.peek().eligibleSec();
    if (!finishes.isEmpty()) {
      next = Math.min(next, finishes.peek().endSec());
    }
    if (!arrivals.isEmpty()) {
      next = Math.min(next, arrivals.peekFirst().submitSec());
    }
    return next;
  }
}
