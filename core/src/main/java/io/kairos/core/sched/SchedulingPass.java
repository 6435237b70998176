package io.kairos.core.sched;

import io.kairos.core.model.Job;
import io.kairos.core.model.Placement;
import io.kairos.core.sched.backfill.AvailabilityProfile;
import io.kairos.core.sched.backfill.ReservationMoves;
import io.kairos.core.sched.order.JobOrder;
import io.kairos.core.sched.order.PassOrder;
import io.kairos.core.sched.place.GangPlacer;
import io.kairos.core.sched.place.Ledger;
import io.kairos.core.sched.place.PlacementStrategy;
import io.kairos.core.sched.place.Reservation;
import io.kairos.core.state.ClusterSnapshot;
import io.kairos.core.state.PendingJobs;
import java.util.ArrayList;
import java.util.List;

/**
 * One scheduling pass. Pure: reads the snapshot, returns decisions, mutates only its ledger; the
 * same input gives the same decisions.
 *
 * <p>Every pending job is considered, in the policy's order (and, with a starvation guard, the
 * oldest starving job first). Most cost O(1) because of shortcuts that never change a decision: a
 * job needing more GPUs than are free is not placed; a gang shape that failed is not tried again
 * for as many tasks or more and a later end ({@link FailureMemo}: capacity only shrinks within a
 * pass, and placement success is monotone in capacity); and per-free-count node counts bound how
 * many tasks the free GPUs could hold at all.
 *
 * <p>Steps, as in DESIGN.md: 1. order; 2. admit by queue quota; 3. place now, respecting the
 * reservations a job must not delay (quota is charged only with a placement, so no job is admitted
 * onto capacity that cannot hold it); 4. reserve for the first blocked jobs; 5. preempt, for one
 * blocked job whose queue allows it. The tenancy's part of steps 1, 2, 3 and 5 is a {@link
 * TenancyStage}: {@link QueueTenancy} with queues, {@link TenancyStage#SINGLE_TENANT} for {@link
 * io.kairos.core.tenancy.Tenants#none()} (every job admitted, nothing preempted), so the steps have
 * one code path.
 *
 * <p>Two kinds of job are passed over before any of that, and hold back no other job (they are
 * never the head of the line, never get a reservation, never stop FCFS): a job held until a later
 * eligible time ({@link Reason#BEGIN_TIME}: a begin time, a requeue backoff), and a job whose
 * excluded nodes leave too few to ever hold it ({@link Reason#NEVER_FITS}). Both checks read flat
 * arrays; excluded nodes are resolved to a node mask once per gang shape per pass ({@link
 * Exclusions}), and a job that excludes nothing is placed exactly as before.
 */
public final class SchedulingPass {
  private final Policy policy;
  private final PlacementStrategy placement;
  private final TenantIndex tenantIndex = new TenantIndex();

  /** What the last pass left for this one (policies with many reservations); may be null. */
  private ScheduleCache cache;

  /** Whether the ranks after the last job that could start or reserve are settled in one go. */
  private boolean settleTail = true;

  public SchedulingPass(Policy policy) {
    this(policy, PlacementStrategy.TOPOLOGY);
  }

  public SchedulingPass(Policy policy, PlacementStrategy placement) {
    this.policy = policy;
    this.placement = placement;
  }

  /**
   * The reference for checks: visits every rank, instead of settling in one go the ranks after the
   * last job that could start or reserve ({@link #settle}). Its decisions and diagnosis must not
   * differ; a check compares a pass that keeps a cache with a fresh pass of this kind.
   */
  public SchedulingPass visitingEveryRank() {
    settleTail = false;
    return this;
  }

  public Policy policy() {
    return policy;
  }

  public PassResult run(PassInput in) {
    var snapshot = in.snapshot();
    long now = in.nowSec();
    var cluster = snapshot.cluster();
    var ledger = new Ledger(snapshot, now);
    var placer = new GangPlacer(cluster, placement);
    var profile = new AvailabilityProfile(snapshot, ledger, placer);
    var moves = new ReservationMoves(ledger, placer);

    // Preemption plans place gangs with the pass's strategy, as the pass does.
    var tenancy = TenancyStage.of(in.tenants(), snapshot, tenantIndex, placement);
    // 1. Order: priority, then (with tenancy) non-borrowing before borrowing and fair share, then
    // the policy's key, then job id; the starvation guards and (with tenancy) the preemptors whose
    // victims are stopping move to the front.
    int[] order = order(tenancy, snapshot, now);
    var pending = snapshot.pendingJobs();
    tenancy.markStopping(profile, now);
    int[] gpus = pending.gpus();
    long[] eligibleSec = pending.eligibleSec();
    var exclusions = new Exclusions(cluster, pending, in.migrations());
    int n = order.length;
    byte[] reasons = new byte[n];
    var starts = new ArrayList<Decision.Start>();
    var reserved = new ArrayList<Reservation>();
    var memo = new FailureMemo(pending.shapeCount());
    boolean blocked = false;
    final byte insufficient = (byte) Reason.INSUFFICIENT_GPUS.ordinal();
    // A reservation past the first only matters if a later job could still start in the free GPUs.
    var laterFit = new LaterFit(order, pending, exclusions, now);

    final boolean backfill = policy.backfill();
    final int maxReservations = policy.reservations();
    int[] flavors = new int[Math.max(1, cluster.gpuModelCount())];
    // With many reservations, the last pass's may carry over unchanged (ScheduleCache).
    boolean cached =
        maxReservations > 1
            && tenancy == TenancyStage.SINGLE_TENANT
            && in.migrations().held().isEmpty();
    ScheduleCache.Replay replay = null;
    if (cached && cache != null) {
      replay =
          cache.replay(
              snapshot,
              now,
              order,
              reasons,
              laterFit,
              maxReservations,
              ledger,
              profile,
              placer,
              starts,
              reserved);
    }
    cache = null;
    int replayed = replay == null ? 0 : replay.ranks();
    blocked = !reserved.isEmpty();
    // Single tenant with backfill: once no later job can use the free GPUs, the rest is settled.
    final boolean closed = settleTail && backfill && tenancy == TenancyStage.SINGLE_TENANT;
    int settled = n;
    for (int rank = replayed; rank < n; rank++) {
      int slot = order[rank];
      // Passed over: it cannot start in this pass, so it neither blocks nor reserves.
      if (exclusions.neverFits(slot)) {
        reasons[rank] = (byte) Reason.NEVER_FITS.ordinal();
        continue;
      }
      if (eligibleSec[slot] > now) {
        reasons[rank] = (byte) Reason.BEGIN_TIME.ordinal();
        continue;
      }
      // 2. Admit: the queue's quota must admit it (on some GPU flavor); if not, it waits without
      // holding back any other job.
      int flavorCount = tenancy.admit(slot, flavors);
      if (flavorCount == 0) {
        reasons[rank] = (byte) Reason.QUOTA.ordinal();
        continue;
      }
      boolean flavorChoice = tenancy.needsFlavorChoice(slot);
      if (flavorChoice) {
        flavorCount = tenancy.everHolding(slot, flavors, flavorCount, exclusions.mask(slot));
        if (flavorCount == 0) {
          reasons[rank] = (byte) Reason.NEVER_FITS.ordinal();
          continue;
        }
      }
      if (blocked && !backfill) {
        reasons[rank] = (byte) Reason.WAITING_FOR_EARLIER_JOB.ordinal();
        continue;
      }
      // Fast path, read from a flat array: more GPUs than are free, and no reservation to
      // compute for it.
      boolean mayReserve =
          reserved.size() < maxReservations
              && (reserved.isEmpty() || laterFit.anyFits(rank + 1, ledger.freeTotal()));
      if (gpus[slot] > ledger.freeTotal() && !mayReserve) {
        reasons[rank] = insufficient;
        blocked = true;
        if (closed && !reserved.isEmpty() && !laterFit.anyFits(rank + 1, ledger.freeTotal())) {
          // No later job can start or reserve: each waits for the GPUs, is held or never fits.
          settled = rank + 1;
          break;
        }
        continue;
      }
      // 3. Place now, respecting the reservations that start before this job would end; a
      // placed job is charged to its queue's quota.
      long[] excluded = exclusions.mask(slot);
      Reason reason =
          !flavorChoice
              ? tryStart(pending, slot, excluded, ledger, placer, moves, memo, starts)
              : tryStartOnFlavors(
                  pending, slot, excluded, ledger, placer, flavors, flavorCount, starts);
      if (reason == null) {
        reasons[rank] = -1;
        tenancy.started(slot, starts.getLast().placement());
        continue;
      }
      blocked = true;
      tenancy.hold(slot, flavors[0]);
      // 4. Reserve: the first blocked jobs get reservations; later jobs must not delay them.
      // Past the first, a reservation is only computed while it can still constrain a start.
      if (mayReserve) {
        Job job = pending.jobs()[slot];
        Reservation reservation =
            flavorChoice
                ? profile.earliestStart(job, excluded, flavors[0])
                : profile.earliestStart(job, excluded);
        if (reservation != null) {
          ledger.reserve(reservation);
          reserved.add(reservation);
          reason = Reason.RESERVED;
        }
      }
      reasons[rank] = (byte) reason.ordinal();
    }
    if (cached) {
      cache =
          ScheduleCache.record(
              snapshot, now, order, reasons, settled, reserved, ledger, profile, replay);
    }
    // 5. Preempt: for the first blocked job that preemption can start, if its queue allows it.
    List<Decision.Preempt> preemptions =
        tenancy.preempt(order, reasons, snapshot, ledger, now, exclusions);
    final int from = settled;
    var diagnosis =
        new Diagnosis(
            pending.jobs(),
            order,
            reasons,
            tenancy.details(order, preemptions),
            from == n ? null : r -> settle(order, from, r, exclusions, eligibleSec, now));
    // Pinned reservations may have moved since they were made: report where they are now.
    var reserves = new ArrayList<Decision.Reserve>(reserved.size());
    for (Reservation r : reserved) {
      reserves.add(new Decision.Reserve(r.job().id(), r.startSec(), r.placement()));
    }
    // 6. Elastic jobs: sized from what the pass left idle, or shrunk for a waiting job.
    var sized =
        ElasticStage.apply(in, new PassResult(starts, reserves, preemptions, diagnosis), placement);
    // 7. Migration (when enabled): move checkpointable jobs when the move pays.
    return MigrationStage.apply(in, sized, placement);
  }

  /**
   * The reasons of the ranks from {@code from} on once no later job fits the free GPUs ({@link
   * LaterFit}) and a reservation exists, for a single tenant (every job admitted, none placed by
   * flavor): the loop of {@link #run} would give each of them exactly this, since one that is
   * neither passed over nor held needs more GPUs than are free and may not reserve, and nothing
   * changes on the way. The pass stops there and its diagnosis runs this on its first read (most
   * are never read): on a queue of thousands this tail is most of the queue, in every pass.
   */
  private static void settle(
      int[] order, int from, byte[] reasons, Exclusions exclusions, long[] eligibleSec, long now) {
    final byte neverFits = (byte) Reason.NEVER_FITS.ordinal();
    final byte beginTime = (byte) Reason.BEGIN_TIME.ordinal();
    final byte insufficient = (byte) Reason.INSUFFICIENT_GPUS.ordinal();
    for (int rank = from; rank < order.length; rank++) {
      int slot = order[rank];
      reasons[rank] =
          exclusions.neverFits(slot)
              ? neverFits
              : eligibleSec[slot] > now ? beginTime : insufficient;
    }
  }

  /** 0, 1, ..., n - 1: the order of jobs already in arrival order. */
  private static int[] identity(int n) {
    int[] order = new int[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    return order;
  }

  /**
   * Predicted starts of the pending jobs of {@code in}'s snapshot, by slot, without running a pass
   * ({@link StartForecast}): for a driver whose last pass's decisions are already in the snapshot
   * (the simulator, between events). The order is the pass's step 1.
   */
  public long[] forecast(PassInput in) {
    var snapshot = in.snapshot();
    var tenancy = TenancyStage.of(in.tenants(), snapshot, tenantIndex, placement);
    return StartForecast.predict(
        snapshot,
        in.nowSec(),
        order(tenancy, snapshot, in.nowSec()),
        null,
        new long[0],
        policy.backfill());
  }

  /** Step 1: the pending slots in the order the pass considers them. */
  private int[] order(TenancyStage tenancy, ClusterSnapshot snapshot, long now) {
    int[] order =
        policy.order() == JobOrder.ARRIVAL
                && snapshot.pendingInArrivalOrder()
                && tenancy == TenancyStage.SINGLE_TENANT
            ? identity(snapshot.pendingCount())
            : tenancy.sort(snapshot, policy.order(), now);
    var pending = snapshot.pendingJobs();
    policy
        .starvationGuard()
        .ifPresent(guard -> PassOrder.promoteOldest(order, pending, now, guard));
    tenancy.promote(order, now);
    return order;
  }

  /**
   * Starts a job that names no GPU model on a cluster of several models on the first of its
   * admitted flavors that places it (Kueue's flavor assignment): placed on that model's nodes only,
   * so its quota is charged to the right flavor. Not memoised: the memo is per gang shape, and a
   * shape without a model spans flavors.
   */
  private static Reason tryStartOnFlavors(
      PendingJobs pending,
      int slot,
      long[] excluded,
      Ledger ledger,
      GangPlacer placer,
      int[] flavors,
      int count,
      List<Decision.Start> starts) {
    if (pending.gpus()[slot] > ledger.freeTotal()) {
      return Reason.INSUFFICIENT_GPUS;
    }
    Job job = pending.jobs()[slot];
    long endSec = ledger.nowSec() + pending.limitSec()[slot];
    int prefix = ledger.reservationsStartingBefore(endSec);
    // Floating reservations hold a count: the job must fit under every one it runs past.
    boolean overCount = prefix > 0 && pending.gpus()[slot] > ledger.usableUpperBound(prefix);
    boolean blockedByReservation = false;
    for (int i = 0; i < count; i++) {
      Placement placement =
          overCount
              ? null
              : placer.place(job.spec().gang(), flavors[i], ledger.now(prefix), true, excluded);
      if (placement != null) {
        starts.add(new Decision.Start(job.id(), ledger.start(job, placement)));
        return null;
      }
      blockedByReservation |=
          prefix > 0
              && placer.place(job.spec().gang(), flavors[i], ledger.now(0), true, excluded) != null;
    }
    return blockedByReservation ? Reason.WOULD_DELAY_RESERVATION : Reason.NO_PLACEMENT;
  }

  /**
   * Starts the job in {@code slot} if it fits now; returns null when started, else why not. Cheap
   * checks first, all on flat arrays: GPUs free in total, the memo, the per-free-count bound; the
   * job record is read only when a placement is tried.
   */
  private static Reason tryStart(
      PendingJobs pending,
      int slot,
      long[] excluded,
      Ledger ledger,
      GangPlacer placer,
      ReservationMoves moves,
      FailureMemo memo,
      List<Decision.Start> starts) {
    if (pending.gpus()[slot] > ledger.freeTotal()) {
      return Reason.INSUFFICIENT_GPUS;
    }
    int shape = pending.shapeIds()[slot];
    int tasks = pending.tasks()[slot];
    long endSec = ledger.nowSec() + pending.limitSec()[slot];
    if (memo.knownToFail(shape, tasks, endSec)) {
      return whyBlocked(pending, slot, excluded, ledger, placer, memo);
    }
    Job job = pending.jobs()[slot];
    var gang = job.spec().gang();
    int prefix = ledger.reservationsStartingBefore(endSec);
    if (tasks > ledger.tasksUpperBound(gang.shape().gpus(), gang.distinctNodes())
        || (prefix > 0 && gang.totalGpus() > ledger.usableUpperBound(prefix))) {
      memo.recordFailure(shape, tasks, ledger.earliestEndRespecting(prefix));
      return whyBlocked(pending, slot, excluded, ledger, placer, memo);
    }
    int modelId = ledger.cluster().modelIdOf(job.spec().gpuModel());
    Placement placement = placer.place(gang, modelId, ledger.now(prefix), true, excluded);
    if (placement == null && ledger.pinnedReservationsBefore(prefix)) {
      // It may cross only where pinned reservations happen to be: move them if they can.
      Placement anywhere = placer.place(gang, modelId, ledger.now(0), true, excluded);
      if (anywhere != null && moves.makeRoom(anywhere, gang.shape().gpus(), endSec)) {
        memo.reservationsMoved();
        placement = anywhere;
      }
    }
    if (placement == null) {
      memo.recordFailure(shape, tasks, ledger.earliestEndRespecting(prefix));
      return prefix > 0
          ? whyBlocked(pending, slot, excluded, ledger, placer, memo)
          : Reason.NO_PLACEMENT;
    }
    starts.add(new Decision.Start(job.id(), ledger.start(job, placement)));
    return null;
  }

  /**
   * A job that does not fit now: is it the reservations (it would fit without them) or the cluster
   * (it would not fit anyway)? At most one extra placement per gang shape per ledger change,
   * memoised both ways.
   */
  private static Reason whyBlocked(
      PendingJobs pending,
      int slot,
      long[] excluded,
      Ledger ledger,
      GangPlacer placer,
      FailureMemo memo) {
    int shape = pending.shapeIds()[slot];
    int tasks = pending.tasks()[slot];
    int version = ledger.version();
    if (memo.knownToFail(shape, tasks, Long.MIN_VALUE)) {
      return Reason.NO_PLACEMENT;
    }
    if (memo.knownToFit(shape, tasks, version)) {
      return Reason.WOULD_DELAY_RESERVATION;
    }
    Job job = pending.jobs()[slot];
    var gang = job.spec().gang();
    var shapeSpec = gang.shape();
    boolean withinBound =
        !ledger.reservations().isEmpty()
            && tasks <= ledger.tasksUpperBound(shapeSpec.gpus(), gang.distinctNodes());
    // For a GPU-only gang on any model and any node the bound is exact (placement succeeds
    // exactly when the tasks the free GPUs hold add up to the gang); otherwise try a placement.
    boolean exact =
        shapeSpec.gpus() > 0
            && shapeSpec.cpus() == 0
            && shapeSpec.memoryBytes() == 0
            && job.spec().gpuModel().isEmpty()
            && excluded == null;
    boolean fits =
        withinBound
            && (exact
                || placer.place(
                        gang,
                        ledger.cluster().modelIdOf(job.spec().gpuModel()),
                        ledger.now(0),
                        true,
                        excluded)
                    != null);
    if (fits) {
      memo.recordFit(shape, tasks, version);
    } else {
      memo.recordFailure(shape, tasks, Long.MIN_VALUE);
    }
    return fits ? Reason.WOULD_DELAY_RESERVATION : Reason.NO_PLACEMENT;
  }
}
