package io.kairos.core.sched;

/**
 * Why a pending job did not start in a pass. Stable codes: users see them in "why is my job
 * pending", metrics count them, tests assert on them.
 */
public enum Reason {
  /** Fewer GPUs are free than the job needs. */
  INSUFFICIENT_GPUS,
  /** Enough GPUs are free in total, but no set of nodes holds the gang (fragmentation). */
  NO_PLACEMENT,
  /** It would fit, but starting it now could delay a job that holds a reservation. */
  WOULD_DELAY_RESERVATION,
  /** The job holds a reservation and starts when it is due. */
  RESERVED,
  /** Strict order (fcfs): an earlier job is waiting, so this one waits too. */
  WAITING_FOR_EARLIER_JOB;

  private static final Reason[] VALUES = values();

  public static Reason ofCode(int code) {
    return VALUES[code];
  }
}
