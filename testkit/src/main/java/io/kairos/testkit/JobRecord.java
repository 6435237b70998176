package io.kairos.testkit;

import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.sched.Decision;
import io.kairos.testkit.SchedulerHarness.JobState;
import java.util.OptionalLong;

/**
 * Everything a {@link SchedulerHarness} knows about one job: its spec and runtime, where it is in
 * its life, where and when it started and finished, and the reservations committed passes gave it.
 * Read-only to tests; the harness records each step of the job's life as it applies it.
 */
public final class JobRecord {
  private final JobId id;
  private final JobSpec spec;
  private final long submitSec;
  private final long eligibleSec;
  private final long runtimeSec;
  private JobState state = JobState.ARRIVING;
  private long startSec = -1;
  private long finishSec = -1;
  private Placement placement;
  private Decision.Reserve firstReservation;
  private long firstReservedAtSec = -1;
  private Decision.Reserve lastReservation;
  private int reservationCount;

  JobRecord(JobId id, JobSpec spec, long submitSec, long eligibleSec, long runtimeSec) {
    this.id = id;
    this.spec = spec;
    this.submitSec = submitSec;
    this.eligibleSec = eligibleSec;
    this.runtimeSec = runtimeSec;
  }

  public JobId id() {
    return id;
  }

  public JobSpec spec() {
    return spec;
  }

  public long submitSec() {
    return submitSec;
  }

  public long runtimeSec() {
    return runtimeSec;
  }

  /** When it may start: its submission unless it was held ({@code Job.eligibleSec()}). */
  public long eligibleSec() {
    return eligibleSec;
  }

  public JobState state() {
    return state;
  }

  /** When it started, or empty. */
  public OptionalLong startSec() {
    return startSec < 0 ? OptionalLong.empty() : OptionalLong.of(startSec);
  }

  public OptionalLong finishSec() {
    return finishSec < 0 ? OptionalLong.empty() : OptionalLong.of(finishSec);
  }

  /** The placement it started on (with GPU masks), or null. */
  public Placement placement() {
    return placement;
  }

  /** The first reservation a committed pass gave it, or null. */
  public Decision.Reserve firstReservation() {
    return firstReservation;
  }

  /** When the pass that gave the first reservation ran, or -1. */
  public long firstReservedAtSec() {
    return firstReservedAtSec;
  }

  public Decision.Reserve lastReservation() {
    return lastReservation;
  }

  /** In how many committed passes it got a reservation. */
  public int reservationCount() {
    return reservationCount;
  }

  /** When it finishes if it runs its runtime: its start plus its runtime (once started). */
  long endSec() {
    return startSec + runtimeSec;
  }

  /** It arrived: the store holds it, pending. */
  void arrived() {
    state = JobState.PENDING;
  }

  /** It started at {@code atSec} on {@code where} (with GPU masks). */
  void started(long atSec, Placement where) {
    state = JobState.RUNNING;
    startSec = atSec;
    placement = where;
  }

  /** An elastic job now holds {@code where} (with GPU masks). */
  void resized(Placement where) {
    placement = where;
  }

  /** It ran to its end ({@link JobState#FINISHED}) or was cancelled at {@code atSec}. */
  void ended(JobState how, long atSec) {
    state = how;
    finishSec = atSec;
  }

  /** A pass committed at {@code atSec} gave it {@code reservation}. */
  void reserved(Decision.Reserve reservation, long atSec) {
    if (firstReservation == null) {
      firstReservation = reservation;
      firstReservedAtSec = atSec;
    }
    lastReservation = reservation;
    reservationCount++;
  }

  @Override
  public String toString() {
    return "job "
        + id
        + " "
        + state
        + " gang="
        + spec.gang()
        + " limit="
        + spec.timeLimitSec()
        + " runtime="
        + runtimeSec
        + " submit="
        + submitSec
        + (eligibleSec > submitSec ? " eligible=" + eligibleSec : "")
        + (spec.hasExclusions() ? " exclude=" + spec.excludedNodes() : "")
        + (startSec >= 0 ? " start=" + startSec : "")
        + (firstReservation != null
            ? " firstReserve=" + firstReservation.startSec() + "@" + firstReservedAtSec
            : "");
  }
}
