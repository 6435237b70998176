package io.kairos.core.sched;

import io.kairos.core.model.Job;
import io.kairos.core.model.Placement;
import io.kairos.core.sched.backfill.AvailabilityProfile;
import io.kairos.core.sched.backfill.Reservation;
import io.kairos.core.sched.order.PassOrder;
import io.kairos.core.sched.place.GangPlacer;
import io.kairos.core.sched.place.Ledger;
import java.util.ArrayList;
import java.util.List;

/**
 * One scheduling pass. Pure: reads the snapshot, returns decisions, mutates only its ledger; the
 * same input gives the same decisions.
 *
 * <p>Every pending job is considered, in the policy's order; most cost O(1) because of two
 * shortcuts that never change a decision: a job needing more GPUs than are free is not placed,
 * and a gang shape that failed to place is not tried again until the ledger changes (placement
 * success is monotone in capacity, so the same shape under the same or more reservations fails
 * too).
 */
public final class SchedulingPass {
  private final Policy policy;

  public SchedulingPass(Policy policy) {
    this.policy = policy;
  }

  public Policy policy() {
    return policy;
  }

  public PassResult run(PassInput in) {
    var snapshot = in.snapshot();
    long now = in.nowSec();
    var cluster = snapshot.cluster();
    var ledger = new Ledger(snapshot, now);
    var placer = new GangPlacer(cluster);
    var profile = new AvailabilityProfile(snapshot, ledger, placer);

    // 1. Order: priority, then the policy's key, then job id.
    int[] order = PassOrder.sort(snapshot, policy.order(), now);
    var pending = snapshot.pendingJobs();
    int[] gpus = pending.gpus();
    int n = order.length;
    byte[] reasons = new byte[n];
    var starts = new ArrayList<Decision.Start>();
    var reserves = new ArrayList<Decision.Reserve>();
    var failed = new FailureMemo();
    boolean blocked = false;
    final byte insufficient = (byte) Reason.INSUFFICIENT_GPUS.ordinal();

    for (int rank = 0; rank < n; rank++) {
      int slot = order[rank];
      if (blocked && !policy.backfill()) {
        reasons[rank] = (byte) Reason.WAITING_FOR_EARLIER_JOB.ordinal();
        continue;
      }
      // Fast path, read from a flat array: more GPUs than are free, and no reservation to
      // compute for it.
      boolean mayReserve =
          reserves.size() < policy.reservations() && (reserves.isEmpty() || ledger.freeTotal() > 0);
      if (gpus[slot] > ledger.freeTotal() && !mayReserve) {
        reasons[rank] = insufficient;
        blocked = true;
        continue;
      }
      Job job = pending.jobs()[slot];
      // 2. Admit: quotas come with queues (not yet): every job is admitted.
      // 3. Place now, respecting the reservations that start before this job would end.
      Reason reason = tryStart(job, ledger, placer, failed, starts);
      if (reason == null) {
        reasons[rank] = -1;
        continue;
      }
      blocked = true;
      // 4. Reserve: the first blocked jobs get reservations; later jobs must not delay them.
      // Past the first, a reservation only matters while some GPU is free to backfill into.
      if (mayReserve) {
        Reservation reservation = profile.earliestStart(job);
        if (reservation != null) {
          ledger.reserve(reservation);
          reserves.add(
              new Decision.Reserve(job.id(), reservation.startSec(), reservation.placement()));
          reason = Reason.RESERVED;
        }
      }
      reasons[rank] = (byte) reason.ordinal();
    }
    return new PassResult(starts, reserves, new Diagnosis(pending.jobs(), order, reasons));
  }

  /** Starts the job if it fits now; returns null when started, else why not. */
  private static Reason tryStart(
      Job job,
      Ledger ledger,
      GangPlacer placer,
      FailureMemo failed,
      List<Decision.Start> starts) {
    var gang = job.spec().gang();
    if (gang.totalGpus() > ledger.freeTotal()) {
      return Reason.INSUFFICIENT_GPUS;
    }
    int prefix = ledger.reservationsStartingBefore(ledger.nowSec() + job.timeLimitSec());
    Reason blocked = prefix > 0 ? Reason.WOULD_DELAY_RESERVATION : Reason.NO_PLACEMENT;
    if (prefix > 0 && gang.totalGpus() > ledger.usableUpperBound(prefix)) {
      return blocked;
    }
    boolean anyModel = job.spec().gpuModel().isEmpty();
    if (anyModel && failed.knownToFail(gang, prefix, ledger.version())) {
      return blocked;
    }
    int modelId = ledger.cluster().modelIdOf(job.spec().gpuModel());
    Placement placement = placer.place(gang, modelId, ledger.now(prefix), true);
    if (placement == null) {
      if (anyModel) {
        failed.record(gang, prefix, ledger.version());
      }
      return blocked;
    }
    starts.add(new Decision.Start(job.id(), ledger.start(job, placement)));
    return null;
  }
}
