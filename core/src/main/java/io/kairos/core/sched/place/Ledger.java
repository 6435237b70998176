package io.kairos.core.sched.place;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.Job;
import io.kairos.core.model.Placement;
import io.kairos.core.model.RunningJob;
import io.kairos.core.model.TopologyLevel;
import io.kairos.core.state.ClusterSnapshot;
import java.util.ArrayList;
import java.util.List;

/**
 * One pass's scratch pad over the snapshot: what is free now once this pass's starts are taken, and
 * the reservations made so far.
 *
 * <p>Design note. Indexes, all updated in O(nodes of the placement) per start:
 *
 * <ul>
 *   <li>free GPUs per node as a mask and a count, free CPUs and memory per node;
 *   <li>free GPUs summed per rack, block, zone and cluster (a domain is a node range), which prune
 *       domains that cannot hold a gang;
 *   <li>best-fit buckets: for each free count k, a bit set of nodes with exactly k free GPUs, so
 *       the tightest node for a one-node gang is a couple of {@code nextSetBit} calls;
 *   <li>reservations sorted by start, each with its spare GPUs in all and, when pinned to nodes,
 *       per node (see {@link Reservation}). A job ending at {@code e} must respect the reservations
 *       starting before {@code e}: a prefix of that list.
 * </ul>
 *
 * <p>{@link #version()} changes with every start and reservation, so callers can memoise "this gang
 * shape does not fit" until the ledger changes. Single-threaded, one pass only.
 */
public final class Ledger {
  private static final TopologyLevel[] SUM_LEVELS =
      Cluster.GROUP_LEVELS.toArray(TopologyLevel[]::new);

  private final Cluster cluster;
  private final long nowSec;
  private final long[] freeMask;
  private final int[] freeGpus;
  private final int[] freeCpus;
  private final long[] freeMemoryBytes;
  private long freeTotal;
  private final long[][] domainFree = new long[TopologyLevel.values().length][];
  // buckets[k]: bit set (words) of the nodes with exactly k free GPUs.
  private final long[][] buckets;
  private final int[] bucketCount;
  private final List<Reservation> reservations = new ArrayList<>();
  private final List<Reservation> reservationsMade = new ArrayList<>();
  // The pinned reservations alone, sorted by start: only they bound GPUs per node.
  private final List<Reservation> pinned = new ArrayList<>();
  private final List<RunningJob> started = new ArrayList<>();
  private int version;

  public Ledger(ClusterSnapshot snapshot, long nowSec) {
    this.cluster = snapshot.cluster();
    this.nowSec = nowSec;
    int n = cluster.nodeCount();
    freeMask = new long[n];
    freeGpus = new int[n];
    freeCpus = new int[n];
    freeMemoryBytes = new long[n];
    buckets = new long[cluster.maxGpusPerNode() + 1][(n + 63) >>> 6];
    bucketCount = new int[cluster.maxGpusPerNode() + 1];
    for (int i = 0; i < n; i++) {
      freeMask[i] = snapshot.freeMask(i);
      freeGpus[i] = Long.bitCount(freeMask[i]);
      freeCpus[i] = snapshot.freeCpus(i);
      freeMemoryBytes[i] = snapshot.freeMemoryBytes(i);
      freeTotal += freeGpus[i];
      buckets[freeGpus[i]][i >>> 6] |= 1L << i;
      bucketCount[freeGpus[i]]++;
    }
    // Domains are node ranges: sum each range once, per level.
    for (TopologyLevel level : SUM_LEVELS) {
      long[] sums = new long[cluster.domainCount(level)];
      for (int d = 0; d < sums.length; d++) {
        long sum = 0;
        for (int i = cluster.domainStart(level, d), end = cluster.domainEnd(level, d);
            i < end;
            i++) {
          sum += freeGpus[i];
        }
        sums[d] = sum;
      }
      domainFree[level.ordinal()] = sums;
    }
  }

  public Cluster cluster() {
    return cluster;
  }

  public long nowSec() {
    return nowSec;
  }

  public long freeTotal() {
    return freeTotal;
  }

  public int freeGpus(int node) {
    return freeGpus[node];
  }

  public int version() {
    return version;
  }

  /** Reservations sorted by start (ties in the order they were made). */
  public List<Reservation> reservations() {
    return reservations;
  }

  /** Reservations in the order they were made. */
  public List<Reservation> reservationsInOrderMade() {
    return reservationsMade;
  }

  /** Jobs started in this pass, in order, with their GPU masks. */
  public List<RunningJob> started() {
    return started;
  }

  /** Whether any of the first {@code prefix} reservations is pinned to nodes. O(1). */
  public boolean pinnedReservationsBefore(int prefix) {
    return pinnedPrefix(prefix) > 0;
  }

  /** How many pinned reservations are among the first {@code prefix} reservations. */
  private int pinnedPrefix(int prefix) {
    return prefix == 0 || pinned.isEmpty()
        ? 0
        : startingBefore(pinned, reservations.get(prefix - 1).startSec() + 1);
  }

  /** How many reservations start strictly before {@code endSec}: the ones a job must respect. */
  public int reservationsStartingBefore(long endSec) {
    return startingBefore(reservations, endSec);
  }

  private static int startingBefore(List<Reservation> sorted, long endSec) {
    int lo = 0;
    int hi = sorted.size();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (sorted.get(mid).startSec() < endSec) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /**
   * The earliest end time at which a job respects at least the first {@code prefix} reservations
   * (the start of the last of them plus one; {@code Long.MIN_VALUE} for none). A gang that failed
   * with an end that respects {@code prefix} reservations fails for every end from here on: the
   * capacity it sees depends on the end only through that prefix.
   */
  public long earliestEndRespecting(int prefix) {
    return prefix == 0 ? Long.MIN_VALUE : reservations.get(prefix - 1).startSec() + 1;
  }

  /**
   * The most GPUs in all a job respecting the first {@code prefix} reservations may use now: the
   * free GPUs, and no more than any of them leaves spare (a floating reservation holds a count, so
   * this is a limit, not only a bound). O(prefix).
   */
  public long usableUpperBound(int prefix) {
    long bound = freeTotal;
    for (int r = 0; r < prefix; r++) {
      bound = Math.min(bound, reservations.get(r).spareTotal());
    }
    return bound;
  }

  /**
   * An upper bound of the tasks of {@code gpusPerTask} GPUs the free GPUs could hold now (one per
   * node when {@code distinct}), from the per-free-count node counts: O(GPUs per node). Usable GPUs
   * never exceed free GPUs, so this bounds every reservation prefix too.
   */
  public long tasksUpperBound(int gpusPerTask, boolean distinct) {
    if (gpusPerTask == 0) {
      return Long.MAX_VALUE;
    }
    long tasks = 0;
    for (int k = gpusPerTask; k < bucketCount.length; k++) {
      tasks += (long) bucketCount[k] * (distinct ? 1 : k / gpusPerTask);
    }
    return tasks;
  }

  /** What a job that must respect the first {@code prefix} reservations may use now. */
  public Capacity now(int prefix) {
    return new NowCapacity(pinnedPrefix(prefix));
  }

  /**
   * Starts {@code job} now on {@code placement} (no masks): chooses GPUs on each node, updates
   * every index, and charges the job to each reservation that starts before it ends (on its nodes
   * for a pinned one, in all for every one).
   *
   * @return the placement with GPU masks
   */
  public Placement start(Job job, Placement placement) {
    return start(job, placement, reservationsStartingBefore(nowSec + job.timeLimitSec()));
  }

  /**
   * Starts {@code job} now on {@code placement}, as {@link #start}, where a floating reservation of
   * its own for now stood: it holds what that reservation held, so no reservation is charged.
   */
  public Placement startReserved(Job job, Placement placement) {
    return start(job, placement, 0);
  }

  /** Starts a job, charging it to the first {@code prefix} reservations. */
  private Placement start(Job job, Placement placement, int prefix) {
    var shape = job.spec().gang().shape();
    long[] masks = new long[placement.nodeCount()];
    for (int i = 0; i < placement.nodeCount(); i++) {
      int node = placement.node(i);
      int tasks = placement.tasksOn(i);
      int gpus = tasks * shape.gpus();
      masks[i] =
          GpuPicker.pick(
              freeMask[node],
              cluster.gpuCount(node),
              cluster.nvlinkDomainSize(node),
              tasks,
              shape.gpus());
      freeMask[node] &= ~masks[i];
      take(node, gpus);
      freeCpus[node] -= tasks * shape.cpus();
      freeMemoryBytes[node] -= tasks * shape.memoryBytes();
      for (int r = 0; r < prefix; r++) {
        reservations.get(r).consume(node, gpus);
      }
    }
    var withMasks = placement.withGpuMasks(masks);
    started.add(new RunningJob(job, withMasks, nowSec));
    version++;
    return withMasks;
  }

  private void take(int node, int gpus) {
    if (gpus == 0) {
      return;
    }
    buckets[freeGpus[node]][node >>> 6] &= ~(1L << node);
    bucketCount[freeGpus[node]]--;
    freeGpus[node] -= gpus;
    buckets[freeGpus[node]][node >>> 6] |= 1L << node;
    bucketCount[freeGpus[node]]++;
    freeTotal -= gpus;
    for (TopologyLevel level : SUM_LEVELS) {
      domainFree[level.ordinal()][cluster.domainOf(level, node)] -= gpus;
    }
  }

  /**
   * Adds a reservation and charges it to every reservation that starts while it holds its GPUs: on
   * its nodes when pinned, in all when floating.
   */
  public void reserve(Reservation reservation) {
    long start = reservation.startSec();
    long end = reservation.endSec();
    var placement = reservation.placement();
    for (Reservation other : reservations) {
      if (other.startSec() >= start && other.startSec() < end) {
        if (reservation.floating()) {
          other.consumeAnywhere(reservation.gpus());
          continue;
        }
        for (int i = 0; i < placement.nodeCount(); i++) {
          other.consume(placement.node(i), reservation.gpusOn(i));
        }
      }
    }
    int at = reservationsStartingBefore(start + 1);
    reservations.add(at, reservation);
    reservationsMade.add(reservation);
    if (!reservation.floating()) {
      pinned.add(startingBefore(pinned, start + 1), reservation);
    }
    version++;
  }

  /**
   * Adds reservations made by an earlier pass whose spare counts already hold everything this pass
   * has and will have planned up to them ({@code ScheduleCache}): nothing is charged. Only before
   * any other reservation.
   *
   * @param byStart them sorted by start, ties in the order made
   * @param inOrderMade them in the order they were made
   */
  public void adopt(List<Reservation> byStart, List<Reservation> inOrderMade) {
    if (!reservations.isEmpty()) {
      throw new IllegalStateException("adopt() after a reservation");
    }
    reservations.addAll(byStart);
    reservationsMade.addAll(inOrderMade);
    for (Reservation r : byStart) {
      if (!r.floating()) {
        pinned.add(r);
      }
    }
    version++;
  }

  /**
   * Moves the pinned reservation at {@code index} to {@code to} at the same start, and shifts its
   * GPUs on the pinned reservations that start while it runs ({@link #reservationsDuring}). The
   * caller has checked that {@code to} fits beside all of them.
   */
  public void move(int index, Placement to) {
    Reservation moved = reservations.get(index);
    Placement from = moved.placement();
    int perTask = moved.job().spec().gang().shape().gpus();
    int end = reservationsDuring(index);
    for (int r = 0; r < end; r++) {
      Reservation other = reservations.get(r);
      if (r != index && other.startSec() >= moved.startSec() && !other.floating()) {
        other.shift(from, to, perTask);
      }
    }
    moved.move(to);
    version++;
  }

  /**
   * The reservations that start while the one at {@code index} runs are those at indexes below the
   * returned bound with a start at or after its own (they are sorted by start).
   */
  public int reservationsDuring(int index) {
    return reservationsStartingBefore(reservations.get(index).endSec());
  }

  /** Free GPUs now, bounded per node by the first {@code pinnedPrefix} pinned reservations. */
  private final class NowCapacity implements Capacity {
    private final int pinnedPrefix;

    NowCapacity(int pinnedPrefix) {
      this.pinnedPrefix = pinnedPrefix;
    }

    @Override
    public int usableGpus(int node) {
      int usable = freeGpus[node];
      for (int r = 0; r < pinnedPrefix && usable > 0; r++) {
        usable = Math.min(usable, pinned.get(r).spare(node));
      }
      return usable;
    }

    @Override
    public int freeCpus(int node) {
      return freeCpus[node];
    }

    @Override
    public long freeMemoryBytes(int node) {
      return freeMemoryBytes[node];
    }

    @Override
    public long domainUpperBound(TopologyLevel level, int domain) {
      return domainFree[level.ordinal()][domain];
    }

    @Override
    public int nextNodeWithFree(int k, int from) {
      long[] words = buckets[k];
      int w = from >>> 6;
      if (w >= words.length) {
        return -1;
      }
      long word = words[w] & (-1L << from);
      while (word == 0) {
        if (++w == words.length) {
          return -1;
        }
        word = words[w];
      }
      return (w << 6) + Long.numberOfTrailingZeros(word);
    }

    @Override
    public boolean hasBuckets() {
      return true;
    }
  }
}
