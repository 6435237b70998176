package io.kairos.core.sched;

/**
 * Why a pending job did not start in a pass. Stable codes: users see them in "why is my job
 * pending", metrics count them, tests assert on them. New values go at the end.
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
  WAITING_FOR_EARLIER_JOB,
  /**
   * Held until its eligible time (Slurm's "BeginTime"): a begin time the user asked for, or the
   * backoff of a job requeued after a failure. It neither starts, nor gets a reservation, nor holds
   * back other jobs before then; {@code Job.eligibleSec()} says when it may start.
   */
  BEGIN_TIME,
  /**
   * The job can never start on this cluster: even with every node empty, the nodes it may use (of
   * its GPU model, not excluded) cannot hold its gang. Such jobs are refused at submission; a pass
   * reports it rather than letting the job wait forever in silence. It holds back no other job.
   */
  NEVER_FITS,
  /**
   * Its queue has no quota left for it, borrowing included (Kueue's "insufficient quota"): the
   * pass's detail text names the resource and the numbers. It holds back no other job.
   */
  QUOTA,
  /**
   * Running jobs were told to stop to make room for it (preemption); it starts once they have
   * stopped, within their grace period.
   */
  PREEMPTING;

  private static final Reason[] VALUES = values();

  public static Reason ofCode(int code) {
    return VALUES[code];
  }
}
