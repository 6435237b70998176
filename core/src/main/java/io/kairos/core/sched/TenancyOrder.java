package io.kairos.core.sched;

import io.kairos.core.fairshare.FairShareFactor;
import io.kairos.core.model.JobSpec;
import io.kairos.core.sched.order.JobOrder;
import io.kairos.core.sched.order.PassOrder;
import io.kairos.core.state.ClusterSnapshot;
import io.kairos.core.state.PendingJobs;
import io.kairos.core.tenancy.Tenants;
import java.util.Arrays;
import java.util.Set;

/**
 * The tenancy's part of a pass's order: the tier of each job, and the jobs moved to the front after
 * sorting. Part of {@link QueueTenancy}.
 *
 * <p>Design note. The full order is higher priority first, then the tenancy tier, then the policy's
 * key, then job id. The tier of a job, lower first:
 *
 * <ol>
 *   <li>jobs that stay within their queue's nominal quota before jobs that must borrow (Kueue
 *       serves non-borrowing workloads of a cohort first; {@link QuotaAdmission#wouldBorrow});
 *   <li>within each, accounts by fair share: the most under-served first ({@link
 *       FairShareFactor#orderKey}), equal keys equal rank; accounts not in the tree go last, equal
 *       among themselves.
 * </ol>
 *
 * Tiers are dense ({@code borrows x ranks + rank}), so {@link PassOrder} packs priority and tier
 * into one long and the sort costs what it costs without a tenancy. After sorting, the large-gang
 * starvation guard ({@link Tenants.Settings#starvationGuard}) may move one job to the front of its
 * priority, and the preemptors whose victims are still stopping go first of all, so what their
 * victims free goes to them.
 *
 * <p>Cost: set-up O(a log a) for a accounts of the fair-share tree, plus O(k + n) for k interned
 * tenant keys and n pending jobs; {@link #tiers} O(n); {@link #promote} O(n).
 */
final class TenancyOrder {
  private final Tenants tenants;
  private final PendingJobs pending;
  private final QuotaAdmission admission;
  private final Set<Long> waitingForVictims;
  private final int[] accountRankOf;

  /**
   * Fair-share rank per account id of the tree (equal order keys, equal rank); null without fair
   * share.
   */
  private int[] rankById;

  private final int unknownAccountRank;

  /**
   * @param tenantAccount the fair-share account id of each interned tenant key of the pending table
   *     (-1: unknown or no tree), for the first {@code tenantCount} keys
   * @param waitingForVictims ids of the preemptors whose preemptions are under way
   */
  TenancyOrder(
      Tenants tenants,
      PendingJobs pending,
      QuotaAdmission admission,
      int[] tenantAccount,
      int tenantCount,
      Set<Long> waitingForVictims) {
    this.tenants = tenants;
    this.pending = pending;
    this.admission = admission;
    this.waitingForVictims = waitingForVictims;
    // Fair-share ranks of the accounts: equal order keys, equal rank.
    FairShareFactor fair = tenants.fairShare();
    int rank = 0;
    if (fair != null) {
      var tree = fair.tree();
      int size = tree.size();
      double[] keys = new double[size];
      for (int i = 0; i < size; i++) {
        keys[i] = fair.orderKey(i);
      }
      Integer[] ids = new Integer[size];
      for (int i = 0; i < size; i++) {
        ids[i] = i;
      }
      Arrays.sort(ids, (a, b) -> Double.compare(keys[a], keys[b]));
      rankById = new int[size];
      for (int i = 0; i < size; i++) {
        if (i > 0 && Double.compare(keys[ids[i]], keys[ids[i - 1]]) != 0) {
          rank++;
        }
        rankById[ids[i]] = rank;
      }
      rank++;
    }
    unknownAccountRank = rank;
    int[] tenantRank = new int[tenantCount];
    for (int t = 0; t < tenantCount; t++) {
      tenantRank[t] =
          fair == null ? 0 : tenantAccount[t] < 0 ? unknownAccountRank : rankById[tenantAccount[t]];
    }
    int n = pending.size();
    int[] tenantIds = pending.tenantIds();
    accountRankOf = new int[n];
    for (int slot = 0; slot < n; slot++) {
      accountRankOf[slot] = tenantRank[tenantIds[slot]];
    }
  }

  /** The pending jobs in order: priority, tier, the policy's key, id. */
  int[] sort(ClusterSnapshot snapshot, JobOrder order, long nowSec) {
    return PassOrder.sort(snapshot, order, nowSec, tiers());
  }

  /**
   * The tenancy tier of every pending job, lower first, dense (so the order's packed sort applies):
   * the fair-share rank of its account, plus the number of ranks when the job would borrow.
   */
  long[] tiers() {
    int n = pending.size();
    long[] tier = new long[n];
    long ranks = unknownAccountRank + 1L;
    for (int slot = 0; slot < n; slot++) {
      long borrow = admission.wouldBorrow(slot) ? ranks : 0;
      tier[slot] = borrow + accountRankOf[slot];
    }
    return tier;
  }

  /**
   * After sorting (and the policy's own starvation guard): the large-gang starvation guard, then
   * the preemptors whose victims are still stopping to the front.
   */
  void promote(int[] order, long nowSec) {
    var settings = tenants.settings();
    if (settings.starvationGuard()) {
      PassOrder.promoteOldestLarge(
          order, pending, nowSec, settings.starvationMinGpus(), settings.starvationMaxWaitSec());
    }
    promotePreemptors(order);
  }

  /**
   * Moves the pending jobs whose victims are still stopping to the front of the order, so that what
   * the victims free goes to them. Stable; O(n).
   */
  private void promotePreemptors(int[] order) {
    if (waitingForVictims.isEmpty()) {
      return;
    }
    int[] copy = order.clone();
    long[] ids = pending.ids();
    int at = 0;
    for (int slot : copy) {
      if (waitingForVictims.contains(ids[slot])) {
        order[at++] = slot;
      }
    }
    for (int slot : copy) {
      if (!waitingForVictims.contains(ids[slot])) {
        order[at++] = slot;
      }
    }
  }

  /** The fair-share rank of the account a job of queue {@code q} (-1: unknown) is charged to. */
  int accountRank(JobSpec spec, int q) {
    if (rankById == null) {
      return 0;
    }
    var tree = tenants.fairShare().tree();
    String name =
        Tenants.accountOf(
            spec.account(), spec.user(), q >= 0 ? tenants.config().queues().get(q) : null);
    return tree.contains(name) ? rankById[tree.id(name)] : unknownAccountRank;
  }

  /** Whether the job (by id value) is a preemptor whose preemption is under way. */
  boolean isWaitingForVictims(long job) {
    return !waitingForVictims.isEmpty() && waitingForVictims.contains(job);
  }

  boolean hasPreemptionsUnderWay() {
    return !waitingForVictims.isEmpty();
  }
}
