package io.kairos.core.sched.backfill;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.Placement;
import io.kairos.core.model.RunningJob;
import io.kairos.core.model.TopologyLevel;
import io.kairos.core.sched.place.Capacity;
import io.kairos.core.sched.place.GangPlacer;
import io.kairos.core.sched.place.Ledger;
import io.kairos.core.sched.place.Reservation;
import io.kairos.core.state.ClusterSnapshot;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * Free GPUs per node over time, and the earliest time a blocked gang can start.
 *
 * <p>Design note. The profile is a sweep over events, not a stored grid: running jobs (from the
 * snapshot and from this pass) release their GPUs at their time limits, and reservations take
 * theirs at their start and give them back at their end. The sweep keeps free GPUs per node at the
 * current instant and, incrementally, how many tasks of the gang those free GPUs could hold (an
 * exact feasibility count when nothing else constrains the gang), so a full placement is only
 * attempted at instants where one can exist. At a candidate instant {@code t} the gang must also
 * fit, for its whole time limit, beside the reservations that start after {@code t} and before it
 * would end: their spare GPUs bound what it may use on each node. Between reservation starts free
 * GPUs only grow, so those are the only instants to check.
 *
 * <p>Cost per query: O(E log E) to sort E events (running jobs and reservations), plus O(nodes
 * touched) per event, plus one placement per instant that passes the count. CPU and memory are not
 * tracked over time (GPUs are what jobs wait for).
 */
public final class AvailabilityProfile {
  private final ClusterSnapshot snapshot;
  private final Ledger ledger;
  private final GangPlacer placer;
  private final Cluster cluster;
  private long[] releaseEvents;
  private FreeCount freeCount;
  private Set<JobId> stopping = Set.of();
  private long stopBySec = Long.MAX_VALUE;

  public AvailabilityProfile(ClusterSnapshot snapshot, Ledger ledger, GangPlacer placer) {
    this.snapshot = snapshot;
    this.ledger = ledger;
    this.placer = placer;
    this.cluster = snapshot.cluster();
  }

  /**
   * Running jobs told to stop (preemption victims): they release their GPUs by {@code stopBySec} at
   * the latest, not at their time limits, so the preemptor's reservation falls when they have
   * stopped and backfill cannot take what they free. Call before the first query.
   */
  public void stopping(Set<JobId> jobs, long stopBySec) {
    if (releaseEvents != null || freeCount != null) {
      throw new IllegalStateException("stopping() after the first query");
    }
    this.stopping = jobs;
    this.stopBySec = stopBySec;
  }

  /**
   * Takes over the free count a cached earlier pass kept ({@link FreeCount#carryTo}), instead of
   * building one on the first query. Call before the first query.
   */
  public void carry(FreeCount count) {
    if (releaseEvents != null || freeCount != null) {
      throw new IllegalStateException("carry() after the first query");
    }
    this.freeCount = count;
  }

  /** The free count of this pass, up to date with the ledger; null when no query built one. */
  public FreeCount freeCount() {
    if (freeCount != null) {
      freeCount.catchUp();
    }
    return freeCount;
  }

  /**
   * The earliest reservation for {@code job}, or null when it can never start (it does not fit the
   * cluster even when everything has ended).
   */
  public Reservation earliestStart(Job job) {
    return earliestStart(job, cluster.excludedMask(job.spec().excludedNodes()));
  }

  /**
   * {@link #earliestStart(Job)} with the job's excluded nodes already resolved ({@link
   * Cluster#excludedMask}, null for none): excluded nodes hold none of its tasks at any instant, so
   * the reservation is for nodes the job may use.
   */
  public Reservation earliestStart(Job job, long[] excluded) {
    return earliestStart(job, excluded, cluster.modelIdOf(job.spec().gpuModel()));
  }

  /**
   * {@link #earliestStart(Job, long[])} on GPUs of model {@code modelId} ({@link
   * Cluster#modelIdOf}; -1 for any): for a job that names no model but is placed on one flavor.
   */
  public Reservation earliestStart(Job job, long[] excluded, int modelId) {
    long now = ledger.nowSec();
    var gang = job.spec().gang();
    int gpusPerTask = gang.shape().gpus();
    long gpus = gang.totalGpus();
    if (Reservation.canFloat(gpusPerTask, gang.distinctNodes(), modelId, excluded)) {
      if (freeCount == null) {
        freeCount = new FreeCount(snapshot, ledger, stopping, stopBySec);
      }
      long[] available = new long[1];
      long t = freeCount.earliest(gpus, job.timeLimitSec(), available);
      return t < 0 ? null : Reservation.floating(job, t, available[0] - gpus);
    }
    var sweep = new Sweep(gang.distinctNodes(), gpusPerTask, modelId, excluded);
    // Events: (time, kind, index) packed in a long and sorted. Kinds: 0 release of a snapshot
    // job, 1 release of a job started in this pass, 2 reservation start, 3 reservation end.
    long[] events = events(now);
    List<Reservation> reservations = ledger.reservations();
    var view = new ProfileCapacity(sweep.free, reservations, excluded);
    int e = 0;
    long t = now;
    while (true) {
      // Apply every event at or before t.
      while (e < events.length && timeOf(events[e]) <= t) {
        sweep.apply(events[e]);
        e++;
      }
      if (sweep.taskCount >= gang.tasks()
          && sweep.available() >= gpus
          && view.window(t, t + job.timeLimitSec(), gpus)
          && view.holds(gang, modelId)) {
        Placement placement = placer.place(gang, modelId, view, false, excluded);
        if (placement != null) {
          long spareTotal = sweep.available() - gpus;
          int[] spare = sweep.free.clone();
          for (int i = 0; i < placement.nodeCount(); i++) {
            spare[placement.node(i)] -= placement.tasksOn(i) * gpusPerTask;
          }
          return Reservation.pinned(job, t, modelId, placement, spare, spareTotal);
        }
      }
      if (e >= events.length) {
        return null;
      }
      t = timeOf(events[e]);
    }
  }

  /**
   * The sweep's state at one instant: free GPUs per node once the node-bound holds (running jobs,
   * jobs started in this pass, pinned reservations) are taken, their sum, the GPUs floating
   * reservations hold somewhere, and how many tasks of the gang the free GPUs could hold.
   */
  private final class Sweep {
    final int[] free;
    long freeSum;
    long floating;
    long taskCount;
    private final boolean distinct;
    private final int gpusPerTask;
    private final int modelId;
    private final long[] excluded;

    Sweep(boolean distinct, int gpusPerTask, int modelId, long[] excluded) {
      this.distinct = distinct;
      this.gpusPerTask = gpusPerTask;
      this.modelId = modelId;
      this.excluded = excluded;
      int n = cluster.nodeCount();
      free = new int[n];
      for (int node = 0; node < n; node++) {
        free[node] = ledger.freeGpus(node);
        freeSum += free[node];
        taskCount += tasksOn(free[node], node, distinct, gpusPerTask, modelId, excluded);
      }
    }

    /** GPUs free at this instant that no reservation holds. */
    long available() {
      return freeSum - floating;
    }

    /** Applies one event. */
    void apply(long event) {
      int kind = (int) ((event >>> INDEX_BITS) & 3);
      int index = (int) (event & ((1 << INDEX_BITS) - 1));
      Placement placement;
      int perTask;
      int direction;
      switch (kind) {
        case 0 -> {
          RunningJob job = snapshot.running(index);
          placement = job.placement();
          perTask = job.job().spec().gang().shape().gpus();
          direction = +1;
        }
        case 1 -> {
          RunningJob job = ledger.started().get(index);
          placement = job.placement();
          perTask = job.job().spec().gang().shape().gpus();
          direction = +1;
        }
        default -> {
          Reservation r = ledger.reservations().get(index);
          direction = kind == 2 ? -1 : +1;
          if (r.floating()) {
            floating -= direction * (long) r.gpus();
            return;
          }
          placement = r.placement();
          perTask = r.job().spec().gang().shape().gpus();
        }
      }
      for (int i = 0; i < placement.nodeCount(); i++) {
        int node = placement.node(i);
        int before = tasksOn(free[node], node, distinct, gpusPerTask, modelId, excluded);
        int gpus = direction * placement.tasksOn(i) * perTask;
        free[node] += gpus;
        freeSum += gpus;
        taskCount += tasksOn(free[node], node, distinct, gpusPerTask, modelId, excluded) - before;
      }
    }
  }

  private static final int KIND_BITS = 2;
  private static final int INDEX_BITS = 24;

  private static long timeOf(long event) {
    return event >>> (KIND_BITS + INDEX_BITS);
  }

  private long[] events(long now) {
    if (releaseEvents == null) {
      int count = snapshot.runningCount();
      releaseEvents = new long[count];
      for (int i = 0; i < count; i++) {
        RunningJob r = snapshot.running(i);
        long release = releaseTime(r, now);
        if (!stopping.isEmpty() && stopping.contains(r.id())) {
          release = Math.max(now + 1, Math.min(release, stopBySec));
        }
        releaseEvents[i] = pack(release, 0, i);
      }
      Arrays.sort(releaseEvents);
    }
    List<RunningJob> started = ledger.started();
    List<Reservation> reservations = ledger.reservations();
    int extra = started.size() + 2 * reservations.size();
    if (extra == 0) {
      return releaseEvents;
    }
    long[] more = new long[extra];
    int k = 0;
    for (int i = 0; i < started.size(); i++) {
      more[k++] = pack(releaseTime(started.get(i), now), 1, i);
    }
    for (int i = 0; i < reservations.size(); i++) {
      more[k++] = pack(reservations.get(i).startSec(), 2, i);
      more[k++] = pack(reservations.get(i).endSec(), 3, i);
    }
    Arrays.sort(more);
    long[] all = new long[releaseEvents.length + more.length];
    int a = 0;
    int b = 0;
    for (int i = 0; i < all.length; i++) {
      all[i] =
          b >= more.length || (a < releaseEvents.length && releaseEvents[a] <= more[b])
              ? releaseEvents[a++]
              : more[b++];
    }
    return all;
  }

  static long releaseTime(RunningJob job, long now) {
    // A job past its limit is about to be stopped: count it as ending one second from now.
    return Math.max(job.endLimitSec(), now + 1);
  }

  private static long pack(long time, int kind, int index) {
    if (index >= 1 << INDEX_BITS) {
      throw new IllegalStateException("too many events for the profile: " + index);
    }
    return (time << (KIND_BITS + INDEX_BITS)) | ((long) kind << INDEX_BITS) | index;
  }

  private int tasksOn(
      int freeGpus, int node, boolean distinct, int gpusPerTask, int modelId, long[] excluded) {
    if (excluded != null && Cluster.isSet(excluded, node)) {
      return 0;
    }
    if (gpusPerTask == 0) {
      return Integer.MAX_VALUE / 4;
    }
    if (modelId >= 0 && cluster.gpuModelId(node) != modelId) {
      return 0;
    }
    if (modelId == -2 || freeGpus <= 0) {
      return 0;
    }
    int fit = freeGpus / gpusPerTask;
    return distinct ? Math.min(fit, 1) : fit;
  }

  /** Free GPUs at one instant, bounded by the spare GPUs of reservations starting in a window. */
  private final class ProfileCapacity implements Capacity {
    private final int[] free;
    private final List<Reservation> reservations;
    private final long[] excluded;
    private int from;
    private int to;

    ProfileCapacity(int[] free, List<Reservation> reservations, long[] excluded) {
      this.free = free;
      this.reservations = reservations;
      this.excluded = excluded;
    }

    /**
     * Constrains the view by the reservations starting in (startSec, endSec); returns false when
     * one of them leaves fewer than {@code gpus} spare GPUs in total (nothing can fit).
     */
    boolean window(long startSec, long endSec, long gpus) {
      from = firstStartingAfter(startSec);
      to = firstStartingAfter(endSec - 1);
      for (int r = from; r < to; r++) {
        if (reservations.get(r).spareTotal() < gpus) {
          return false;
        }
      }
      return true;
    }

    /** Index of the first reservation starting after {@code timeSec} (reservations are sorted). */
    private int firstStartingAfter(long timeSec) {
      int lo = 0;
      int hi = reservations.size();
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (reservations.get(mid).startSec() <= timeSec) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo;
    }

    /** Whether the usable GPUs of all nodes hold the gang's tasks: exact, one scan. */
    boolean holds(GangSpec gang, int modelId) {
      if (from == to) {
        return true; // the incremental count already said so
      }
      int perTask = gang.shape().gpus();
      long tasks = 0;
      for (int node = 0; node < free.length && tasks < gang.tasks(); node++) {
        tasks += tasksOn(usableGpus(node), node, gang.distinctNodes(), perTask, modelId, excluded);
      }
      return tasks >= gang.tasks();
    }

    @Override
    public int usableGpus(int node) {
      int usable = free[node];
      for (int r = from; r < to && usable > 0; r++) {
        usable = Math.min(usable, reservations.get(r).spare(node));
      }
      return Math.max(usable, 0);
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
