package io.kairos.core.sched;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.RunningJob;
import io.kairos.core.sched.place.Ledger;
import io.kairos.core.sched.place.PlacementStrategy;
import io.kairos.core.sched.preempt.PreemptionHistory;
import io.kairos.core.sched.preempt.PreemptionPlan;
import io.kairos.core.sched.preempt.PreemptionPlanner;
import io.kairos.core.sched.preempt.VictimCandidate;
import io.kairos.core.state.ClusterSnapshot;
import io.kairos.core.state.PendingJobs;
import io.kairos.core.tenancy.PreemptionPolicy;
import io.kairos.core.tenancy.QuotaLedger;
import io.kairos.core.tenancy.Tenants;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Step 5 of a pass with a tenancy: which running jobs to preempt, and for whom. Part of {@link
 * QueueTenancy}; runs once, after every pending job has been considered.
 *
 * <p>Design note. At most one preemptor per pass, and none while earlier victims are still
 * stopping:
 *
 * <ol>
 *   <li>Preemptors: the first {@value #PREEMPTORS_TRIED} blocked jobs in order whose reason
 *       preemption may help (quota, GPUs, placement, a reservation) and whose queue's policy allows
 *       some preemption; a job whose queue is unknown or has no quota of any model is skipped.
 *   <li>Victims: the running jobs whose priority class is preemptible, that are not victims
 *       already, and whose protection ({@link io.kairos.core.sched.preempt.ProtectionPolicy}) has
 *       run out; listed once per pass.
 *   <li>For each preemptor in turn, the victims its queue's policy lets it preempt ({@link #kind}:
 *       lower priority in the queue; borrowers of the cohort when reclaiming; lower priority in the
 *       cohort to borrow; more over-served accounts by fair share), sorted by {@link
 *       #VICTIM_ORDER}.
 *   <li>{@link PreemptionPlanner}, with the pass's placement strategy, picks a 1-minimal set that
 *       frees a placement (off the preemptor's excluded nodes and off the nodes held for another
 *       job's move, {@link Exclusions#mask}); none, or a plan without victims (the job waits for a
 *       reservation), and the next preemptor is tried.
 *   <li>The quota is checked with the victims' usage removed; victims of the same queue or cohort
 *       are added, in victim order, until it fits, or the plan is dropped. So a preemption always
 *       leaves room, in quota and on nodes, for its preemptor.
 * </ol>
 *
 * <p>Cost, with r running jobs and p preemptors tried (at most {@value #PREEMPTORS_TRIED}): O(r) to
 * list the victims, then per preemptor O(r log r) to match and sort them, one planner call (bounded
 * by its candidate limit) and a copy of the quota ledger. Nothing at all when no pending job is
 * blocked or preemptions are under way.
 */
final class VictimSelection {
  /** How many blocked jobs, first in order, are tried as preemptors. */
  static final int PREEMPTORS_TRIED = 4;

  /**
   * Victim order, least valuable first:
   *
   * <ol>
   *   <li>lower priority first;
   *   <li>more over-served account first (higher fair-share rank);
   *   <li>most recently started first (least work lost);
   *   <li>job id, so the order is total.
   * </ol>
   */
  static final Comparator<Victim> VICTIM_ORDER = VictimSelection::lessValuableFirst;

  /** A running job as a possible victim. */
  record Victim(
      RunningJob running, int queue, int priority, int accountRank, long protectedUntil) {}

  private final Tenants tenants;
  private final Cluster cluster;
  private final PendingJobs pending;
  private final QuotaAdmission admission;
  private final TenancyOrder order;
  private final PreemptionPlanner planner;
  private final String[] queueDefaultClass;
  private final Map<String, Boolean> classPreemptible = new HashMap<>();
  private final int[] flavorScratch;

  /**
   * @param strategy the pass's placement strategy: the plans place as the pass does
   */
  VictimSelection(
      Tenants tenants,
      ClusterSnapshot snapshot,
      QuotaAdmission admission,
      TenancyOrder order,
      PlacementStrategy strategy) {
    this.tenants = tenants;
    this.cluster = snapshot.cluster();
    this.pending = snapshot.pendingJobs();
    this.admission = admission;
    this.order = order;
    this.planner =
        new PreemptionPlanner(cluster, strategy, PreemptionPlanner.DEFAULT_MAX_CANDIDATES);
    var config = tenants.config();
    queueDefaultClass = new String[admission.quota().queueCount()];
    for (int q = 0; q < queueDefaultClass.length; q++) {
      String c = config.queues().get(q).defaults().priorityClass();
      queueDefaultClass[q] = c == null ? "" : c;
    }
    config.priorityClasses().forEach(pc -> classPreemptible.put(pc.name(), pc.preemptible()));
    flavorScratch = new int[Math.max(1, cluster.gpuModelCount())];
  }

  /**
   * Victims for the first blocked job (in {@code order}) that preemption can start, or none. {@code
   * reasons} are the pass's, by rank.
   */
  List<Decision.Preempt> preempt(
      int[] order,
      byte[] reasons,
      ClusterSnapshot snapshot,
      Ledger ledger,
      long nowSec,
      Exclusions exclusions) {
    if (!tenants.preempting().isEmpty()) {
      return List.of();
    }
    List<Victim> victims = null;
    int tried = 0;
    for (int rank = 0; rank < order.length && tried < PREEMPTORS_TRIED; rank++) {
      int slot = order[rank];
      int q = admission.queueOf(slot);
      Reason reason = reasons[rank] < 0 ? null : Reason.ofCode(reasons[rank]);
      int failure = admission.failure(slot);
      if (q < 0
          || !preemptible(reason)
          || failure == QuotaAdmission.UNKNOWN_QUEUE
          || failure == QuotaAdmission.NO_FLAVOR) {
        continue;
      }
      PreemptionPolicy policy = tenants.config().queues().get(q).preemption();
      if (!policy.any()) {
        continue;
      }
      tried++;
      if (victims == null) {
        victims = victims(snapshot, nowSec);
        if (victims.isEmpty()) {
          return List.of();
        }
      }
      var decided = planFor(slot, q, policy, victims, ledger, nowSec, exclusions.mask(slot));
      if (!decided.isEmpty()) {
        return decided;
      }
    }
    return List.of();
  }

  /** {@link Tenants#preemptible} from the tables built once per pass. */
  private boolean preemptible(JobSpec spec, int q) {
    String name =
        spec.priorityClass().isEmpty() && q >= 0 ? queueDefaultClass[q] : spec.priorityClass();
    return name.isEmpty() || classPreemptible.getOrDefault(name, true);
  }

  private static boolean preemptible(Reason reason) {
    return reason == Reason.QUOTA
        || reason == Reason.INSUFFICIENT_GPUS
        || reason == Reason.NO_PLACEMENT
        || reason == Reason.RESERVED
        || reason == Reason.WOULD_DELAY_RESERVATION;
  }

  private List<Victim> victims(ClusterSnapshot snapshot, long nowSec) {
    var out = new ArrayList<Victim>();
    for (int i = 0; i < snapshot.runningCount(); i++) {
      RunningJob r = snapshot.running(i);
      JobSpec spec = r.job().spec();
      int q = admission.runningQueue(i);
      if (!preemptible(spec, q) || tenants.preempting().containsKey(r.id())) {
        continue;
      }
      PreemptionHistory history = tenants.histories().getOrDefault(r.id(), PreemptionHistory.NONE);
      long until = tenants.settings().protection().protectedUntilSec(history, r.startSec());
      if (until > nowSec) {
        continue;
      }
      out.add(new Victim(r, q, spec.priority(), order.accountRank(spec, q), until));
    }
    return out;
  }

  /** {@link #VICTIM_ORDER}, written out: it sorts every candidate list of the pass. */
  private static int lessValuableFirst(Victim a, Victim b) {
    int c = Integer.compare(a.priority(), b.priority());
    if (c != 0) {
      return c;
    }
    c = Integer.compare(b.accountRank(), a.accountRank());
    if (c != 0) {
      return c;
    }
    c = Long.compare(b.running().startSec(), a.running().startSec());
    return c != 0 ? c : Long.compare(a.running().id().value(), b.running().id().value());
  }

  private List<Decision.Preempt> planFor(
      int slot,
      int q,
      PreemptionPolicy policy,
      List<Victim> all,
      Ledger ledger,
      long nowSec,
      long[] excluded) {
    Job job = pending.jobs()[slot];
    JobSpec spec = job.spec();
    int priority = spec.priority();
    int rank = order.accountRank(spec, q);
    QuotaLedger quota = admission.quota();
    int cohort = quota.cohortOf(q);
    int model = spec.gpuModel().isEmpty() ? -1 : cluster.modelIdOf(spec.gpuModel());
    if (cluster.gpuModelCount() > 1 && model == -1) {
      int n = admission.flavors(slot, q, flavorScratch);
      if (n == 0) {
        return List.of();
      }
      model = flavorScratch[0];
    }
    int gpuRes = admission.gpuRes(model);
    long gpus = pending.gpus()[slot];
    boolean withinNominal =
        gpuRes < 0
            || (quota.covers(q, gpuRes)
                && quota.usage(q, gpuRes) + gpus <= quota.nominal(q, gpuRes));
    var matched = new ArrayList<Victim>();
    for (Victim v : all) {
      if (kind(v, q, cohort, priority, rank, withinNominal, gpuRes, policy) != null) {
        matched.add(v);
      }
    }
    if (matched.isEmpty()) {
      return List.of();
    }
    matched.sort(VICTIM_ORDER);
    var candidates = new ArrayList<VictimCandidate>(matched.size());
    for (Victim v : matched) {
      long cost =
          (long) v.running().job().totalGpus() * Math.max(0, nowSec - v.running().startSec());
      candidates.add(new VictimCandidate(v.running(), cost, v.protectedUntil()));
    }
    Optional<PreemptionPlan> plan =
        planner.plan(ledger.now(0), spec.gang(), model, excluded, true, candidates, nowSec);
    if (plan.isEmpty() || !plan.get().needsPreemption()) {
      return List.of(); // cannot make room, or it fits without victims (it waits for a reservation)
    }
    // Quota with the victims gone; add quota victims in victim order until it fits.
    var inPlan = new HashSet<JobId>();
    plan.get().victims().forEach(r -> inPlan.add(r.id()));
    var chosen = new ArrayList<Victim>(inPlan.size());
    QuotaLedger after = quota.copy();
    for (Victim v : matched) {
      if (inPlan.contains(v.running().id())) {
        chosen.add(v);
        release(after, v);
      }
    }
    if (!admission.quotaFits(after, slot, q, gpuRes)) {
      for (Victim v : matched) {
        if (inPlan.contains(v.running().id())
            || v.queue() < 0
            || (v.queue() != q && (cohort < 0 || quota.cohortOf(v.queue()) != cohort))) {
          continue; // chosen already, or frees no quota the preemptor can use
        }
        chosen.add(v);
        release(after, v);
        if (admission.quotaFits(after, slot, q, gpuRes)) {
          break;
        }
      }
      if (!admission.quotaFits(after, slot, q, gpuRes)) {
        return List.of();
      }
    }
    var out = new ArrayList<Decision.Preempt>(chosen.size());
    for (Victim v : chosen) {
      Decision.PreemptionKind kind =
          kind(v, q, cohort, priority, rank, withinNominal, gpuRes, policy);
      out.add(new Decision.Preempt(v.running().id(), job.id(), kind, detail(kind, v, job, q)));
    }
    return out;
  }

  private void release(QuotaLedger ledger, Victim v) {
    if (v.queue() >= 0) {
      admission.release(ledger, v.queue(), v.running());
    }
  }

  /** Why the preemptor may preempt the victim under its queue's policy, or null if it may not. */
  private Decision.PreemptionKind kind(
      Victim v,
      int q,
      int cohort,
      int priority,
      int accountRank,
      boolean withinNominal,
      int gpuRes,
      PreemptionPolicy policy) {
    QuotaLedger quota = admission.quota();
    boolean lower = v.priority() < priority;
    if (v.queue() == q) {
      if (lower && policy.withinQueue() == PreemptionPolicy.WithinQueue.LOWER_PRIORITY) {
        return Decision.PreemptionKind.PRIORITY;
      }
    } else if (cohort >= 0 && v.queue() >= 0 && quota.cohortOf(v.queue()) == cohort) {
      boolean victimBorrows =
          gpuRes >= 0
              && quota.covers(v.queue(), gpuRes)
              && quota.usage(v.queue(), gpuRes) > quota.nominal(v.queue(), gpuRes);
      var reclaim = policy.reclaimWithinCohort();
      if (withinNominal
          && victimBorrows
          && (reclaim == PreemptionPolicy.ReclaimWithinCohort.ANY
              || (reclaim == PreemptionPolicy.ReclaimWithinCohort.LOWER_PRIORITY && lower))) {
        return Decision.PreemptionKind.RECLAIM;
      }
      var borrow = policy.borrowWithinCohort();
      if (!withinNominal
          && lower
          && borrow.policy() == PreemptionPolicy.BorrowWithinCohort.Policy.LOWER_PRIORITY
          && (borrow.maxPriorityThreshold() == null
              || v.priority() <= borrow.maxPriorityThreshold())) {
        return Decision.PreemptionKind.BORROW;
      }
    }
    boolean sameScope =
        v.queue() == q || (cohort >= 0 && v.queue() >= 0 && quota.cohortOf(v.queue()) == cohort);
    if (sameScope
        && policy.fairShare() == PreemptionPolicy.FairShare.OVER_SERVED
        && tenants.fairShare() != null
        && v.priority() <= priority
        && v.accountRank() > accountRank) {
      return Decision.PreemptionKind.FAIR_SHARE;
    }
    return null;
  }

  private String detail(Decision.PreemptionKind kind, Victim v, Job preemptor, int q) {
    JobSpec victim = v.running().job().spec();
    String queue = admission.quota().queueName(q);
    return switch (kind) {
      case PRIORITY ->
          "priority: job "
              + preemptor.id().value()
              + " (priority "
              + preemptor.spec().priority()
              + ") needs room in queue "
              + queue
              + "; this job has priority "
              + victim.priority();
      case RECLAIM ->
          "reclaim: queue "
              + queue
              + " takes back its nominal quota, which queue "
              + victim.queue()
              + " borrows";
      case BORROW ->
          "borrow: job "
              + preemptor.id().value()
              + " of queue "
              + queue
              + " (priority "
              + preemptor.spec().priority()
              + ") borrows in the cohort";
      case FAIR_SHARE ->
          "fair share: this job's account is more over-served than job "
              + preemptor.id().value()
              + "'s";
    };
  }
}
