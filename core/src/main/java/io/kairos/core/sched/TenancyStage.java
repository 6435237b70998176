package io.kairos.core.sched;

import io.kairos.core.model.Placement;
import io.kairos.core.sched.backfill.AvailabilityProfile;
import io.kairos.core.sched.order.JobOrder;
import io.kairos.core.sched.order.PassOrder;
import io.kairos.core.sched.place.Ledger;
import io.kairos.core.sched.place.PlacementStrategy;
import io.kairos.core.state.ClusterSnapshot;
import io.kairos.core.tenancy.Tenants;
import java.util.List;

/**
 * The multi-tenant steps of one pass, at the points where {@link SchedulingPass} calls them: the
 * order's tier, admission by quota (with the GPU flavor a job is placed on), the quota charge of
 * what starts, and preemption with its diagnosis. Created per pass by {@link #of}.
 *
 * <p>{@link #SINGLE_TENANT}, the stage of a pass without a tenancy ({@link Tenants#none()}), is the
 * neutral form: the policy's order, every job admitted on any GPU model, nothing charged, held or
 * preempted, no details. So the pass has one code path; {@link QueueTenancy} is the stage of a
 * tenancy with queues.
 *
 * <p>Call order within a pass: {@link #sort}, {@link #promote}, {@link #markStopping}; then per job
 * {@link #admit}, {@link #needsFlavorChoice} (and {@link #everHolding}), {@link #started} or {@link
 * #hold}; then {@link #preempt} and {@link #details} once.
 */
interface TenancyStage {
  /** No tenancy: every step does nothing, every job is admitted. */
  TenancyStage SINGLE_TENANT = new SingleTenant();

  /**
   * The stage for {@code tenants} over {@code snapshot}: {@link #SINGLE_TENANT} for {@link
   * Tenants#none()}, else a {@link QueueTenancy} whose preemption plans place gangs with {@code
   * strategy}, as the pass does.
   */
  static TenancyStage of(
      Tenants tenants, ClusterSnapshot snapshot, TenantIndex index, PlacementStrategy strategy) {
    return tenants.enabled() ? new QueueTenancy(tenants, snapshot, index, strategy) : SINGLE_TENANT;
  }

  /** 1. Order: the snapshot's pending jobs (indexes) in the order the pass considers them. */
  int[] sort(ClusterSnapshot snapshot, JobOrder order, long nowSec);

  /** 1. Order, after the policy's starvation guard: jobs the tenancy moves to the front. */
  void promote(int[] order, long nowSec);

  /** Before the first reservation: tells the profile which running jobs are being preempted. */
  void markStopping(AvailabilityProfile profile, long nowSec);

  /**
   * 2. Admit: the GPU model ids on which the job in {@code slot} is admitted now, in preference
   * order, written to {@code flavors}; returns how many (0: refused by quota). A model id of -1
   * means any model. Read only when {@link #needsFlavorChoice}.
   */
  int admit(int slot, int[] flavors);

  /** Whether the job must be placed on one of its admitted flavors, tried in order. */
  boolean needsFlavorChoice(int slot);

  /**
   * For a job placed by flavor: keeps the first {@code count} admitted flavors whose nodes could
   * ever hold its gang ({@code excluded} nodes left out), in order; returns how many.
   */
  int everHolding(int slot, int[] flavors, int count, long[] excluded);

  /** 3. The job in {@code slot} starts on {@code placement}: it is charged to its quota. */
  void started(int slot, Placement placement);

  /** The admitted job in {@code slot} did not start; {@code model} was its first flavor. */
  void hold(int slot, int model);

  /**
   * 5. Preempt, after every job was considered: victims for at most one blocked job; marks the jobs
   * that wait for victims {@link Reason#PREEMPTING} in {@code reasons} (by rank). A preemptor is
   * placed off the nodes {@code exclusions} keeps it from (its own excluded nodes, and those held
   * for another job's move).
   */
  List<Decision.Preempt> preempt(
      int[] order,
      byte[] reasons,
      ClusterSnapshot snapshot,
      Ledger ledger,
      long nowSec,
      Exclusions exclusions);

  /** The detail texts of the pass's diagnosis. */
  Diagnosis.Details details(int[] order, List<Decision.Preempt> preemptions);

  /** The neutral stage: what a single-tenant pass does. Stateless. */
  final class SingleTenant implements TenancyStage {
    private SingleTenant() {}

    @Override
    public int[] sort(ClusterSnapshot snapshot, JobOrder order, long nowSec) {
      return PassOrder.sort(snapshot, order, nowSec);
    }

    @Override
    public void promote(int[] order, long nowSec) {}

    @Override
    public void markStopping(AvailabilityProfile profile, long nowSec) {}

    /** Admitted on one flavor, {@code flavors} left as is (never read: no flavor choice). */
    @Override
    public int admit(int slot, int[] flavors) {
      return 1;
    }

    @Override
    public boolean needsFlavorChoice(int slot) {
      return false;
    }

    @Override
    public int everHolding(int slot, int[] flavors, int count, long[] excluded) {
      return count;
    }

    @Override
    public void started(int slot, Placement placement) {}

    @Override
    public void hold(int slot, int model) {}

    @Override
    public List<Decision.Preempt> preempt(
        int[] order,
        byte[] reasons,
        ClusterSnapshot snapshot,
        Ledger ledger,
        long nowSec,
        Exclusions exclusions) {
      return List.of();
    }

    @Override
    public Diagnosis.Details details(int[] order, List<Decision.Preempt> preemptions) {
      return Diagnosis.Details.NONE;
    }
  }
}
