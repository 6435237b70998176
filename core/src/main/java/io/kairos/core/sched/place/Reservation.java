package io.kairos.core.sched.place;

import io.kairos.core.model.Job;
import io.kairos.core.model.Placement;

/**
 * A promise made in one pass: {@code job} starts at {@code startSec}, assuming every running job
 * runs to its time limit. Two kinds:
 *
 * <ul>
 *   <li><b>Pinned</b> to {@code placement}'s nodes: for a gang whose tasks need more than one GPU,
 *       whole nodes, a GPU model or not some nodes, where which nodes are free matters. {@code
 *       spare[node]} is how many GPUs stay free on each node at {@code startSec} once this job and
 *       everything else bound to nodes at that instant (running jobs, jobs started in this pass,
 *       other pinned reservations) hold theirs. A job still running at {@code startSec} may use at
 *       most {@code spare[node]} GPUs of a node, and consumes them. The pass may move the promise
 *       to other nodes at the same start ({@link #move}) when that lets a job start now.
 *   <li><b>Floating</b>: for a gang of one-GPU tasks that may share nodes, on any GPU model and any
 *       node (every job of an HPC trace on one-GPU nodes, most of a GPU cluster's). Any free GPU
 *       holds one of its tasks, so the promise is a count: its placement names no node, and nothing
 *       per node is set aside. This is textbook EASY's view (Lifka; Mu'alem and Feitelson): a later
 *       job may start if it ends by the reservation or uses only GPUs that are extra then, wherever
 *       they are.
 * </ul>
 *
 * <p>Both kinds have {@code spareTotal}: the GPUs free at {@code startSec} once everything planned
 * for that instant, floating reservations included, holds its own. A job still running then may use
 * at most that many in total. Checking each reservation at its start is enough, because between
 * reservation starts free GPUs only grow. Mutable during one pass only, by the ledger.
 */
public final class Reservation {
  /** The placement of a floating reservation: no node in particular. */
  private static final Placement ANYWHERE = Placement.adopt(new int[0], new int[0], new long[0]);

  private final Job job;
  private final long startSec;
  private final int modelId;
  private Placement placement;
  private final int[] spare;
  private final boolean countOnly;
  private long spareTotal;

  private Reservation(
      Job job, long startSec, int modelId, Placement placement, int[] spare, long spareTotal) {
    this.job = job;
    this.startSec = startSec;
    this.modelId = modelId;
    this.placement = placement;
    this.spare = spare;
    this.spareTotal = spareTotal;
    var shape = job.spec().gang().shape();
    this.countOnly = spare == null && shape.cpus() == 0 && shape.memoryBytes() == 0;
    if (spareTotal < 0) {
      throw new IllegalStateException("reservation of job " + job.id() + " overbooked");
    }
  }

  /**
   * A reservation on {@code placement}'s nodes, for GPUs of model {@code modelId} (-1 for any).
   *
   * @param spare GPUs left free per node at the start (adopted, not copied)
   * @param spareTotal GPUs left free at the start in all, floating reservations counted
   */
  public static Reservation pinned(
      Job job, long startSec, int modelId, Placement placement, int[] spare, long spareTotal) {
    return new Reservation(job, startSec, modelId, placement, spare, spareTotal);
  }

  /** A count of one-GPU tasks on any GPUs: its placement names no node. */
  public static Reservation floating(Job job, long startSec, long spareTotal) {
    return new Reservation(job, startSec, -1, ANYWHERE, null, spareTotal);
  }

  /**
   * Whether a gang can be promised a count of GPUs rather than nodes: one-GPU tasks that may share
   * a node, on any model ({@code modelId} -1), excluding no node. Any free GPU then holds any task,
   * so a count at each instant is exact.
   */
  public static boolean canFloat(
      int gpusPerTask, boolean distinctNodes, int modelId, long[] excluded) {
    return gpusPerTask == 1 && !distinctNodes && modelId == -1 && excluded == null;
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

  public boolean floating() {
    return spare == null;
  }

  /**
   * Whether this reservation is a count of GPUs and nothing else: floating, for tasks that need no
   * CPU or memory (which the profile does not track), so that the count alone decides whether the
   * job can start at the reserved time.
   */
  public boolean countOnly() {
    return countOnly;
  }

  /** The GPU model the reservation is for ({@code Cluster#modelIdOf}; -1 for any). */
  public int modelId() {
    return modelId;
  }

  /** For a pinned reservation, its nodes; for a floating one, none. */
  public Placement placement() {
    return placement;
  }

  public int gpus() {
    return job.spec().gang().totalGpus();
  }

  public int gpusOn(int placementSlot) {
    return placement.tasksOn(placementSlot) * job.spec().gang().shape().gpus();
  }

  /** GPUs a job running at the start may use on {@code node}; no limit for a floating one. */
  public int spare(int node) {
    return spare == null ? Integer.MAX_VALUE : spare[node];
  }

  /** Spare GPUs in all at the start: the most a job running then may use beside this one. */
  public long spareTotal() {
    return spareTotal;
  }

  /** Records that {@code gpus} more GPUs of {@code node} are held at this reservation's start. */
  public void consume(int node, int gpus) {
    if (spare != null) {
      spare[node] -= gpus;
      if (spare[node] < 0) {
        throw overbooked("on node " + node + " by " + -spare[node] + " GPUs");
      }
    }
    consumeAnywhere(gpus);
  }

  /** Records that {@code gpus} more GPUs, on no node in particular, are held at the start. */
  public void consumeAnywhere(int gpus) {
    spareTotal -= gpus;
    if (spareTotal < 0) {
      throw overbooked("by " + -spareTotal + " GPUs in all");
    }
  }

  /**
   * Moves a pinned reservation to {@code to} at the same start: its spare GPUs grow where it leaves
   * and shrink where it arrives. The caller has checked that {@code to} fits.
   */
  void move(Placement to) {
    int perTask = job.spec().gang().shape().gpus();
    Placement from = placement;
    for (int i = 0; i < from.nodeCount(); i++) {
      spare[from.node(i)] += from.tasksOn(i) * perTask;
    }
    for (int i = 0; i < to.nodeCount(); i++) {
      spare[to.node(i)] -= to.tasksOn(i) * perTask;
      if (spare[to.node(i)] < 0) {
        throw overbooked("on node " + to.node(i) + " after a move");
      }
    }
    placement = to;
  }

  /** As {@link #move} seen from another pinned reservation that starts while this one runs. */
  void shift(Placement from, Placement to, int perTask) {
    for (int i = 0; i < from.nodeCount(); i++) {
      spare[from.node(i)] += from.tasksOn(i) * perTask;
    }
    for (int i = 0; i < to.nodeCount(); i++) {
      spare[to.node(i)] -= to.tasksOn(i) * perTask;
      if (spare[to.node(i)] < 0) {
        throw overbooked("on node " + to.node(i) + " after another reservation moved");
      }
    }
  }

  private IllegalStateException overbooked(String where) {
    return new IllegalStateException("reservation of job " + job.id() + " overbooked " + where);
  }
}
