package io.kairos.core.sched.place;

import io.kairos.core.model.Job;
import io.kairos.core.model.Placement;

/**
 * A promise made in one pass: {@code job} starts at {@code startSec} on {@code placement}'s nodes,
 * assuming every running job runs to its time limit.
 *
 * <p>{@code spare[node]} is how many GPUs stay free on each node at {@code startSec} once this job
 * and everything else planned to run at that instant (running jobs, jobs started in this pass,
 * other reservations) hold theirs. A job that is still running at {@code startSec} may use at most
 * {@code spare[node]} GPUs of a node, and consumes them; that single check at each reservation's
 * start is enough, because between reservation starts free GPUs only grow. Mutable during one pass
 * only, by the ledger.
 */
public final class Reservation {
  private final Job job;
  private final long startSec;
  private final Placement placement;
  private final int[] spare;
  private long spareTotal;

  public Reservation(Job job, long startSec, Placement placement, int[] spare) {
    this.job = job;
    this.startSec = startSec;
    this.placement = placement;
    this.spare = spare;
    for (int s : spare) {
      spareTotal += s;
    }
  }

  public Job job() {
    return job;
  }

  public long startSec() {
    return startSec;
  }

  public long endSec() {
    return startSec + job.timeLimitSec();
  }

  public Placement placement() {
    return placement;
  }

  public int gpusOn(int placementSlot) {
    return placement.tasksOn(placementSlot) * job.spec().gang().shape().gpus();
  }

  public int spare(int node) {
    return spare[node];
  }

  /** Spare GPUs summed over all nodes: an upper bound of what a job may use beside this one. */
  public long spareTotal() {
    return spareTotal;
  }

  /** Records that {@code gpus} more GPUs of {@code node} are held at this reservation's start. */
  public void consume(int node, int gpus) {
    spare[node] -= gpus;
    spareTotal -= gpus;
    if (spare[node] < 0) {
      throw new IllegalStateException(
          "reservation of job "
              + job.id()
              + " overbooked on node "
              + node
              + " by "
              + -spare[node]
              + " GPUs");
    }
  }
}
