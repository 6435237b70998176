package io.kairos.core.sched;

import io.kairos.core.model.Placement;
import io.kairos.core.sched.backfill.AvailabilityProfile;
import io.kairos.core.sched.order.JobOrder;
import io.kairos.core.sched.place.Ledger;
import io.kairos.core.sched.place.PlacementStrategy;
import io.kairos.core.state.ClusterSnapshot;
import io.kairos.core.state.PendingJobs;
import io.kairos.core.tenancy.QuotaLedger;
import io.kairos.core.tenancy.Tenants;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The {@link TenancyStage} of a pass with queues: quota per queue, the order's tenancy tier, the
 * GPU flavor a job is admitted on, and preemption. Created per pass from {@link Tenants} and the
 * snapshot; each concern is its own class:
 *
 * <ul>
 *   <li>{@link QuotaAdmission}: quota with placement (admit, flavors, hold, charge);
 *   <li>{@link TenancyOrder}: the tier of each job (borrowing, fair share) and who goes first;
 *   <li>{@link VictimSelection}: who is preempted for whom, after the pass;
 *   <li>{@link TenancyDiagnosis}: the detail texts of quota refusals and preemptors.
 * </ul>
 *
 * <p>Design note. The pending jobs' tenant keys (queue, account, priority class, user) are resolved
 * to queue and account ids through the {@link TenantIndex} memo shared across passes, so set-up
 * reads flat arrays. Preemptions under way ({@link Tenants#preempting}) bind the parts: their
 * preemptors go first in the order, are admitted against the quota their victims free, and are
 * reported {@link Reason#PREEMPTING}; no new preemption is planned while any is under way.
 *
 * <p>Cost of set-up: O(r x p) to charge r running jobs of p placement nodes, O(a log a) to rank a
 * fair-share accounts, O(n) per pending job table of n jobs. The per-job calls are O(1) on flat
 * arrays (O(flavors) on a cluster of several GPU models).
 */
final class QueueTenancy implements TenancyStage {
  private final Tenants tenants;
  private final PendingJobs pending;
  private final QuotaAdmission admission;
  private final TenancyOrder ordering;
  private final VictimSelection victims;
  private final TenancyDiagnosis diagnosis;

  QueueTenancy(
      Tenants tenants, ClusterSnapshot snapshot, TenantIndex index, PlacementStrategy strategy) {
    this.tenants = tenants;
    this.pending = snapshot.pendingJobs();
    var quota = new QuotaLedger(tenants.config());
    int[] tenantIds = pending.tenantIds();
    int tenantCount = 0;
    for (int slot = 0; slot < pending.size(); slot++) {
      tenantCount = Math.max(tenantCount, tenantIds[slot] + 1);
    }
    var fair = tenants.fairShare();
    int[][] resolved =
        index.resolve(
            tenants.config(),
            quota,
            fair == null ? null : fair.tree(),
            pending.tenantKeys(),
            tenantCount);
    Set<Long> waiting = new HashSet<>();
    tenants.preempting().values().forEach(id -> waiting.add(id.value()));
    this.admission = new QuotaAdmission(tenants, snapshot, quota, resolved[0], waiting);
    this.ordering =
        new TenancyOrder(tenants, pending, admission, resolved[1], tenantCount, waiting);
    this.victims = new VictimSelection(tenants, snapshot, admission, ordering, strategy);
    this.diagnosis = new TenancyDiagnosis(tenants, pending, admission);
  }

  @Override
  public int[] sort(ClusterSnapshot snapshot, JobOrder jobOrder, long nowSec) {
    return ordering.sort(snapshot, jobOrder, nowSec);
  }

  @Override
  public void promote(int[] order, long nowSec) {
    ordering.promote(order, nowSec);
  }

  /**
   * Victims free their GPUs within the grace period, not at their limits: the preemptor's
   * reservation falls then, and backfill may not take what they free.
   */
  @Override
  public void markStopping(AvailabilityProfile profile, long nowSec) {
    if (ordering.hasPreemptionsUnderWay()) {
      profile.stopping(tenants.preempting().keySet(), nowSec + tenants.settings().graceSec());
    }
  }

  @Override
  public int admit(int slot, int[] flavors) {
    return admission.admit(slot, flavors);
  }

  @Override
  public boolean needsFlavorChoice(int slot) {
    return admission.needsFlavorChoice(slot);
  }

  @Override
  public int everHolding(int slot, int[] flavors, int count, long[] excluded) {
    return admission.everHolding(slot, flavors, count, excluded);
  }

  @Override
  public void started(int slot, Placement placement) {
    admission.started(slot, placement);
  }

  @Override
  public void hold(int slot, int model) {
    admission.hold(slot, model);
  }

  @Override
  public List<Decision.Preempt> preempt(
      int[] order,
      byte[] reasons,
      ClusterSnapshot snapshot,
      Ledger ledger,
      long nowSec,
      Exclusions exclusions) {
    List<Decision.Preempt> preemptions =
        victims.preempt(order, reasons, snapshot, ledger, nowSec, exclusions);
    var preemptor = preemptions.isEmpty() ? null : preemptions.getFirst().preemptor();
    if (preemptor != null || ordering.hasPreemptionsUnderWay()) {
      long[] ids = pending.ids();
      for (int rank = 0; rank < order.length; rank++) {
        long id = ids[order[rank]];
        if (reasons[rank] >= 0
            && ((preemptor != null && id == preemptor.value())
                || ordering.isWaitingForVictims(id))) {
          reasons[rank] = (byte) Reason.PREEMPTING.ordinal();
        }
      }
    }
    return preemptions;
  }

  @Override
  public Diagnosis.Details details(int[] order, List<Decision.Preempt> preemptions) {
    return diagnosis.details(order, preemptions);
  }
}
