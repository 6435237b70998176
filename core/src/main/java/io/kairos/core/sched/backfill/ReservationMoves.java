package io.kairos.core.sched.backfill;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.Placement;
import io.kairos.core.model.TopologyLevel;
import io.kairos.core.sched.place.Capacity;
import io.kairos.core.sched.place.GangPlacer;
import io.kairos.core.sched.place.Ledger;
import io.kairos.core.sched.place.Reservation;

/**
 * Lets a job start now when it conflicts only with which nodes a pinned reservation took: the
 * reservation moves to other nodes at the same start, so the reserved job is not delayed.
 *
 * <p>Design note. A pinned reservation names nodes, chosen by best fit when it was made; a job that
 * would run past its start may use only the GPUs that reservation leaves spare on each node. Often
 * another choice of nodes would leave exactly the GPUs that job needs (capacity that frees by the
 * start could hold the reservation instead of capacity free now). So for a candidate placement that
 * is free now but crosses reservations, each pinned reservation it crosses, in start order, is
 * placed again at its own start on what is free then without the candidate: on each node, the
 * reservation's spare GPUs plus its own minus the candidate's, and no more than the spare GPUs
 * (plus its own) of every pinned reservation that starts while it runs, minus the candidate's if
 * the candidate still runs then. That keeps every spare count non-negative, which is all the
 * ledger's promises rest on; total counts do not change, since the reservation holds as many GPUs
 * as before. If any crossed reservation has no such placement, every move is undone and the
 * candidate does not start.
 *
 * <p>Cost per attempt: O(nodes x pinned reservations during the moved one) per crossed reservation,
 * plus one placement; the pass attempts it at most once per gang shape per outcome ({@code
 * FailureMemo}). Floating reservations never need a move: they hold a count, not nodes.
 */
public final class ReservationMoves {
  private final Ledger ledger;
  private final GangPlacer placer;
  private final Cluster cluster;

  public ReservationMoves(Ledger ledger, GangPlacer placer) {
    this.ledger = ledger;
    this.placer = placer;
    this.cluster = ledger.cluster();
  }

  /**
   * Moves every pinned reservation that a job placed on {@code placement} with {@code gpusPerTask}
   * GPUs per task until {@code endSec} would cross, so that it no longer does. Returns true when
   * done (the caller starts the job on {@code placement}); false, with nothing changed, when some
   * reservation cannot move.
   */
  public boolean makeRoom(Placement placement, int gpusPerTask, long endSec) {
    var reservations = ledger.reservations();
    int prefix = ledger.reservationsStartingBefore(endSec);
    int n = cluster.nodeCount();
    int[] job = new int[n];
    for (int i = 0; i < placement.nodeCount(); i++) {
      job[placement.node(i)] = placement.tasksOn(i) * gpusPerTask;
    }
    int[] movedIndex = new int[prefix];
    Placement[] movedFrom = new Placement[prefix];
    int moves = 0;
    for (int r = 0; r < prefix; r++) {
      Reservation reservation = reservations.get(r);
      if (reservation.floating() || !crosses(reservation, placement, job)) {
        continue;
      }
      Placement to = placeAgain(r, job, endSec);
      if (to == null) {
        for (int m = moves - 1; m >= 0; m--) {
          ledger.move(movedIndex[m], movedFrom[m]);
        }
        return false;
      }
      movedIndex[moves] = r;
      movedFrom[moves++] = reservation.placement();
      ledger.move(r, to);
    }
    return true;
  }

  private static boolean crosses(Reservation reservation, Placement placement, int[] job) {
    for (int i = 0; i < placement.nodeCount(); i++) {
      int node = placement.node(i);
      if (job[node] > reservation.spare(node)) {
        return true;
      }
    }
    return false;
  }

  /**
   * A placement for the reservation at {@code index}, at its start, that leaves the job's GPUs
   * ({@code job[node]}, held until {@code endSec}) to the job; null when there is none.
   */
  private Placement placeAgain(int index, int[] job, long endSec) {
    var reservations = ledger.reservations();
    Reservation moving = reservations.get(index);
    int n = cluster.nodeCount();
    int[] own = new int[n];
    Placement from = moving.placement();
    for (int i = 0; i < from.nodeCount(); i++) {
      own[from.node(i)] = moving.gpusOn(i);
    }
    int[] usable = new int[n];
    for (int node = 0; node < n; node++) {
      usable[node] = moving.spare(node) + own[node] - job[node];
    }
    int during = ledger.reservationsDuring(index);
    for (int r = 0; r < during; r++) {
      Reservation other = reservations.get(r);
      if (r == index || other.floating() || other.startSec() < moving.startSec()) {
        continue;
      }
      boolean jobRunsThen = other.startSec() < endSec;
      for (int node = 0; node < n; node++) {
        int left = other.spare(node) + own[node] - (jobRunsThen ? job[node] : 0);
        usable[node] = Math.min(usable[node], left);
      }
    }
    for (int node = 0; node < n; node++) {
      usable[node] = Math.max(0, usable[node]);
    }
    var gang = moving.job().spec().gang();
    long[] excluded = cluster.excludedMask(moving.job().spec().excludedNodes());
    return placer.place(gang, moving.modelId(), new Fixed(usable), false, excluded);
  }

  /** GPUs per node from an array; CPU and memory are not tracked for reservations. */
  private record Fixed(int[] usable) implements Capacity {
    @Override
    public int usableGpus(int node) {
      return usable[node];
    }

    @Override
    public int freeCpus(int node) {
      return Integer.MAX_VALUE;
    }

    @Override
    public long freeMemoryBytes(int node) {
      return Long.MAX_VALUE;
    }

    @Override
    public long domainUpperBound(TopologyLevel level, int domain) {
      return Long.MAX_VALUE;
    }

    @Override
    public int nextNodeWithFree(int k, int from) {
      return -1;
    }

    @Override
    public boolean hasBuckets() {
      return false;
    }
  }
}
