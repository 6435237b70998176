package io.kairos.core.sched;

import io.kairos.core.fairshare.FairShareFactor;
import io.kairos.core.model.Cluster;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.model.RunningJob;
import io.kairos.core.sched.place.Ledger;
import io.kairos.core.sched.preempt.PreemptionHistory;
import io.kairos.core.sched.preempt.PreemptionPlan;
import io.kairos.core.sched.preempt.PreemptionPlanner;
import io.kairos.core.sched.preempt.VictimCandidate;
import io.kairos.core.state.ClusterSnapshot;
import io.kairos.core.state.PendingJobs;
import io.kairos.core.tenancy.Admission;
import io.kairos.core.tenancy.PreemptionPolicy;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.core.tenancy.QuotaLedger;
import io.kairos.core.tenancy.Resource;
import io.kairos.core.tenancy.Tenants;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The multi-tenant part of one pass: quota per queue, the order's tenancy tier, the GPU flavor a
 * job is admitted on, and preemption. Created per pass from {@link Tenants} and the snapshot.
 *
 * <p><b>Quota.</b> Usage per queue is recomputed from the snapshot's running jobs (each node's GPUs
 * count as that node's model, {@code gpu:MODEL}; CPUs and memory count when some queue has a quota
 * of them), so no ledger has to be kept in step with the store. A job is admitted only together
 * with a placement: the pass checks the quota first (cheap, memoised per queue and resource since
 * availability only shrinks within a pass), places, and only a placed job is charged. A job refused
 * by quota holds back no other job (Kueue: other queues go on).
 *
 * <p><b>Flavors.</b> A job naming a GPU model is counted against that model's quota. A job that
 * names none, on a cluster of one model, is counted against that model; with several models it is
 * tried on each model its queue has quota of, in resource order (Kueue's flavor assignment), and
 * placed on that model's nodes only, so every GPU it holds is counted against the right flavor.
 *
 * <p><b>Order tier</b> (between priority and the policy's key): first jobs that stay within their
 * queue's nominal quota, then jobs that must borrow (Kueue serves non-borrowing workloads of a
 * cohort first); within each, accounts by fair share (the most under-served first, {@link
 * FairShareFactor#orderKey}); accounts not in the tree go last, equal among themselves.
 *
 * <p><b>Preemption</b> (after the pass, at most one preemptor per pass, none while earlier victims
 * are still stopping): for the first blocked jobs in order whose queue allows it, candidates are
 * the running, preemptible, unprotected jobs that the queue's policy lets it preempt (lower
 * priority in the queue; borrowers of the cohort when reclaiming; lower priority in the cohort to
 * borrow; more over-served accounts by fair share), least valuable first. {@link PreemptionPlanner}
 * picks a 1-minimal set that frees a placement; the quota is then checked with the victims' usage
 * removed (and victims added, in preference order, until it fits, or the plan is dropped). So a
 * preemption always leaves room, in quota and on nodes, for its preemptor.
 */
final class TenancyStage {
  /** Failure codes in {@link #failedResource}: the queue is unknown. */
  private static final int UNKNOWN_QUEUE = -2;

  /** A GPU model no queue has quota of. */
  private static final int NO_FLAVOR = -3;

  /** How many blocked jobs, first in order, the preemption stage tries. */
  private static final int PREEMPTORS_TRIED = 4;

  private final Tenants tenants;
  private final Cluster cluster;
  private final QuotaLedger quota;
  private final PendingJobs pending;
  private final int resources;
  private final int cpuRes;
  private final int memRes;
  private final int[] gpuResOfModel;
  private final int[] queueOf;
  private final int[] runningQueue;
  private final int[] accountRankOf;
  private final int[] shapeModel;
  private final int[] shapeCpus;
  private final long[] shapeMemory;
  private final String[] queueDefaultClass;
  private final Map<String, Boolean> classPreemptible = new HashMap<>();
  private final long[] refusedAt;
  private final int[] failedResource;

  /**
   * Fair-share rank per account id of the tree (equal order keys, equal rank); null without fair
   * share.
   */
  private int[] rankById;

  private final int unknownAccountRank;
  private final Set<Long> preemptors = new HashSet<>();
  private final int[] flavorScratch;

  /**
   * The quota as it will be once the running victims of the preemptions under way have stopped;
   * null when none run. A waiting preemptor is admitted against it (its victims' usage is about to
   * go), and held in both ledgers while it waits for room, so no later job takes the quota its
   * victims free (the main ledger then counts it twice for at most the grace period: stricter,
   * never looser).
   */
  private QuotaLedger afterVictims;

  TenancyStage(Tenants tenants, ClusterSnapshot snapshot) {
    this(tenants, snapshot, new TenantIndex());
  }

  TenancyStage(Tenants tenants, ClusterSnapshot snapshot, TenantIndex index) {
    this.tenants = tenants;
    this.cluster = snapshot.cluster();
    this.pending = snapshot.pendingJobs();
    this.quota = new QuotaLedger(tenants.config());
    this.resources = quota.resourceCount();
    this.cpuRes = quota.resourceId(Resource.CPUS);
    this.memRes = quota.resourceId(Resource.MEMORY_BYTES);
    int models = cluster.gpuModelCount();
    gpuResOfModel = new int[models];
    Arrays.fill(gpuResOfModel, -1);
    for (int i = 0; i < cluster.nodeCount(); i++) {
      int m = cluster.gpuModelId(i);
      String name = cluster.gpuModel(i);
      if (gpuResOfModel[m] == -1
          && !name.isBlank()
          && name.strip().equals(name)
          && name.indexOf(':') < 0) {
        gpuResOfModel[m] = quota.resourceId(Resource.gpu(name));
      }
    }
    flavorScratch = new int[Math.max(1, models)];
    runningQueue = new int[snapshot.runningCount()];
    var runningQueueIds = new HashMap<String, Integer>();
    for (int i = 0; i < snapshot.runningCount(); i++) {
      RunningJob r = snapshot.running(i);
      String name = r.job().spec().queue();
      Integer id = runningQueueIds.get(name);
      if (id == null) {
        id = quota.queueId(name);
        runningQueueIds.put(name, id);
      }
      int q = id;
      runningQueue[i] = q;
      if (q >= 0) {
        charge(quota, q, r.job().spec(), r.placement(), 1);
      }
    }
    if (!tenants.preempting().isEmpty()) {
      for (int i = 0; i < snapshot.runningCount(); i++) {
        RunningJob r = snapshot.running(i);
        if (runningQueue[i] >= 0 && tenants.preempting().containsKey(r.id())) {
          if (afterVictims == null) {
            afterVictims = quota.copy();
          }
          charge(afterVictims, runningQueue[i], r.job().spec(), r.placement(), -1);
        }
      }
    }
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
    var config = tenants.config();
    queueDefaultClass = new String[quota.queueCount()];
    for (int q = 0; q < queueDefaultClass.length; q++) {
      String c = config.queues().get(q).defaults().priorityClass();
      queueDefaultClass[q] = c == null ? "" : c;
    }
    config.priorityClasses().forEach(pc -> classPreemptible.put(pc.name(), pc.preemptible()));
    // Per interned tenant key (queue, account, class, user) and per gang shape: what the pass
    // needs, so the per-job loops read flat arrays only (no Job -> JobSpec chasing).
    int n = pending.size();
    int[] tenantIds = pending.tenantIds();
    int tenantCount = 0;
    for (int slot = 0; slot < n; slot++) {
      tenantCount = Math.max(tenantCount, tenantIds[slot] + 1);
    }
    int[][] resolved =
        index.resolve(
            tenants.config(),
            quota,
            fair == null ? null : fair.tree(),
            pending.tenantKeys(),
            tenantCount);
    int[] tenantQueue = resolved[0];
    int[] tenantAccount = resolved[1];
    int[] tenantRank = new int[tenantCount];
    for (int t = 0; t < tenantCount; t++) {
      tenantRank[t] =
          fair == null ? 0 : tenantAccount[t] < 0 ? unknownAccountRank : rankById[tenantAccount[t]];
    }
    int shapes = pending.shapeCount();
    shapeModel = new int[shapes];
    shapeCpus = new int[shapes];
    shapeMemory = new long[shapes];
    boolean[] seen = new boolean[shapes];
    queueOf = new int[n];
    accountRankOf = new int[n];
    for (int slot = 0; slot < n; slot++) {
      queueOf[slot] = tenantQueue[tenantIds[slot]];
      accountRankOf[slot] = tenantRank[tenantIds[slot]];
      int shape = pending.shapeIds()[slot];
      if (!seen[shape]) {
        seen[shape] = true;
        JobSpec spec = pending.jobs()[slot].spec();
        shapeModel[shape] = spec.gpuModel().isEmpty() ? -1 : cluster.modelIdOf(spec.gpuModel());
        shapeCpus[shape] = spec.gang().shape().cpus();
        shapeMemory[shape] = spec.gang().shape().memoryBytes();
      }
    }
    refusedAt = new long[quota.queueCount() * Math.max(1, resources)];
    Arrays.fill(refusedAt, Long.MAX_VALUE);
    failedResource = new int[n];
    Arrays.fill(failedResource, -1);
    tenants.preempting().values().forEach(id -> preemptors.add(id.value()));
  }

  // ---- order --------------------------------------------------------------------------------

  /**
   * The tenancy tier of every pending job, lower first, dense (so the order's packed sort applies):
   * the fair-share rank of its account, plus the number of ranks when the job would borrow.
   */
  long[] tiers() {
    int n = pending.size();
    long[] tier = new long[n];
    long ranks = unknownAccountRank + 1L;
    for (int slot = 0; slot < n; slot++) {
      int q = queueOf[slot];
      long borrow = 0;
      int rankOfSlot = accountRankOf[slot];
      if (q >= 0) {
        int flavors = flavors(slot, q, flavorScratch);
        int res = flavors > 0 ? gpuRes(flavorScratch[0]) : -1;
        if (res >= 0
            && quota.covers(q, res)
            && quota.usage(q, res) + pending.gpus()[slot] > quota.nominal(q, res)) {
          borrow = ranks;
        }
      }
      tier[slot] = borrow + rankOfSlot;
    }
    return tier;
  }

  private int accountRank(JobSpec spec, int q) {
    return accountRank(spec.account(), spec.user(), q);
  }

  private int accountRank(String account, String user, int q) {
    if (rankById == null) {
      return 0;
    }
    var tree = tenants.fairShare().tree();
    String name =
        Tenants.accountOf(account, user, q >= 0 ? tenants.config().queues().get(q) : null);
    return tree.contains(name) ? rankById[tree.id(name)] : unknownAccountRank;
  }

  /** Whether the job (by id value) is a preemptor whose preemption is under way. */
  boolean isWaitingForVictims(long job) {
    return !preemptors.isEmpty() && preemptors.contains(job);
  }

  boolean hasPreemptionsUnderWay() {
    return !preemptors.isEmpty();
  }

  /**
   * Moves the pending jobs whose victims are still stopping to the front of the order, so that what
   * the victims free goes to them. Stable; O(n).
   */
  void promotePreemptors(int[] order) {
    if (preemptors.isEmpty()) {
      return;
    }
    int[] copy = order.clone();
    long[] ids = pending.ids();
    int at = 0;
    for (int slot : copy) {
      if (preemptors.contains(ids[slot])) {
        order[at++] = slot;
      }
    }
    for (int slot : copy) {
      if (!preemptors.contains(ids[slot])) {
        order[at++] = slot;
      }
    }
  }

  // ---- admission ----------------------------------------------------------------------------

  /**
   * The model ids the job may be placed on that its queue's quota admits now, in preference order,
   * written to {@code out}; returns how many (0: refused by quota, the reason recorded). A model id
   * of -1 means "any model" (a job without GPUs, or without a model on a one-model cluster: placed
   * exactly as in a single-tenant pass).
   */
  int admit(int slot, int[] out) {
    int q = queueOf[slot];
    if (q < 0) {
      failedResource[slot] = UNKNOWN_QUEUE;
      return 0;
    }
    int count = flavors(slot, q, out);
    if (count == 0) {
      failedResource[slot] = NO_FLAVOR;
      return 0;
    }
    if (afterVictims != null && isWaitingForVictims(pending.ids()[slot])) {
      return admitAfterVictims(slot, q, out, count);
    }
    if (cpuRes >= 0 || memRes >= 0) {
      int shape = pending.shapeIds()[slot];
      int tasks = pending.tasks()[slot];
      long cpus = (long) tasks * shapeCpus[shape];
      long memory = (long) tasks * shapeMemory[shape];
      if (!fits(q, cpuRes, cpus, slot) || !fits(q, memRes, memory, slot)) {
        return 0;
      }
    }
    int gpus = pending.gpus()[slot];
    int kept = 0;
    int firstFailed = -1;
    for (int i = 0; i < count; i++) {
      int res = gpuRes(out[i]);
      if (gpus == 0) {
        out[kept++] = out[i];
        continue;
      }
      if (res < 0) {
        firstFailed = firstFailed < 0 ? NO_FLAVOR : firstFailed;
        continue;
      }
      if (fits(q, res, gpus, -1)) {
        out[kept++] = out[i];
      } else if (firstFailed < 0 || firstFailed == NO_FLAVOR) {
        firstFailed = res;
      }
    }
    if (kept == 0) {
      failedResource[slot] = firstFailed;
    }
    return kept;
  }

  /** {@link #admit} for a preemptor whose victims still run: against the quota once they stop. */
  private int admitAfterVictims(int slot, int q, int[] out, int count) {
    int kept = 0;
    for (int i = 0; i < count; i++) {
      if (quotaFits(afterVictims, slot, q, gpuRes(out[i]))) {
        out[kept++] = out[i];
      }
    }
    if (kept == 0) {
      failedResource[slot] = -1;
    }
    return kept;
  }

  /**
   * A waiting preemptor admitted on {@code model} could not be placed yet (its victims still run):
   * holds its quota in both ledgers, so later jobs of the pass do not take it.
   */
  void hold(int slot, int model) {
    if (afterVictims == null || !isWaitingForVictims(pending.ids()[slot])) {
      return;
    }
    int q = queueOf[slot];
    int shape = pending.shapeIds()[slot];
    long tasks = pending.tasks()[slot];
    for (QuotaLedger ledger : new QuotaLedger[] {quota, afterVictims}) {
      int res = gpuRes(model);
      if (res >= 0) {
        apply(ledger, q, res, pending.gpus()[slot], 1);
      }
      if (cpuRes >= 0) {
        apply(ledger, q, cpuRes, tasks * shapeCpus[shape], 1);
      }
      if (memRes >= 0) {
        apply(ledger, q, memRes, tasks * shapeMemory[shape], 1);
      }
    }
  }

  /** Whether the queue may take {@code amount} more of the resource now; records a refusal. */
  private boolean fits(int q, int res, long amount, int slot) {
    if (res < 0 || amount == 0) {
      return true;
    }
    int cell = q * resources + res;
    boolean ok =
        amount < refusedAt[cell] && quota.covers(q, res) && quota.available(q, res) >= amount;
    if (!ok) {
      refusedAt[cell] = Math.min(refusedAt[cell], amount);
      if (slot >= 0) {
        failedResource[slot] = res;
      }
    }
    return ok;
  }

  /**
   * Whether the job must be placed flavor by flavor: it names no GPU model, needs GPUs, and the
   * cluster has several models. Otherwise the admitted flavor is the job's own model (or the only
   * one) and the pass places it exactly as a single-tenant pass would.
   */
  boolean needsFlavorChoice(int slot) {
    return cluster.gpuModelCount() > 1
        && pending.gpus()[slot] > 0
        && shapeModel[pending.shapeIds()[slot]] == -1;
  }

  /**
   * For a job placed flavor by flavor ({@link #needsFlavorChoice}): keeps the admitted flavors
   * whose nodes could ever hold its gang (on an empty cluster, its excluded nodes left out), in
   * order; returns how many. None: the job can never start on any one flavor, so the pass reports
   * it {@code NEVER_FITS} and it holds back no one (placed across models it might fit, but its
   * quota is per flavor). Memoised per gang shape and model: O(nodes) once each.
   */
  int everHolding(int slot, int[] flavors, int count, long[] excluded) {
    int shape = pending.shapeIds()[slot];
    int tasks = pending.tasks()[slot];
    var gang = pending.jobs()[slot].spec().gang();
    if (maxTasksEver == null) {
      maxTasksEver = new long[pending.shapeCount() * Math.max(1, cluster.gpuModelCount())];
      Arrays.fill(maxTasksEver, -1);
    }
    int kept = 0;
    for (int i = 0; i < count; i++) {
      int model = flavors[i];
      int cell = shape * cluster.gpuModelCount() + model;
      if (maxTasksEver[cell] < 0) {
        maxTasksEver[cell] =
            cluster.maxTasksEver(
                gang.shape(), gang.distinctNodes(), model, excluded, Integer.MAX_VALUE);
      }
      if (maxTasksEver[cell] >= tasks) {
        flavors[kept++] = model;
      }
    }
    return kept;
  }

  private long[] maxTasksEver;

  /** Charges a started job to its queue. */
  void started(int slot, Placement placement) {
    charge(quota, queueOf[slot], pending.jobs()[slot].spec(), placement, 1);
  }

  /**
   * The candidate models of a job, before quota: its own model; on a one-model cluster "any" (-1);
   * else every model the queue has GPU quota of, in resource order.
   */
  private int flavors(int slot, int q, int[] out) {
    if (cluster.gpuModelCount() <= 1) {
      // One model: "any" and the model are the same flavor; the pass places by the job's own.
      out[0] = -1;
      return 1;
    }
    int model = shapeModel[pending.shapeIds()[slot]];
    if (pending.gpus()[slot] == 0 || model != -1) {
      out[0] = model;
      return 1;
    }
    int count = 0;
    for (int r = 0; r < resources; r++) {
      if (!quota.covers(q, r)) {
        continue;
      }
      for (int m = 0; m < gpuResOfModel.length; m++) {
        if (gpuResOfModel[m] == r) {
          out[count++] = m;
        }
      }
    }
    return count;
  }

  /** The quota resource of model id {@code model} (-1: the cluster's only model). */
  private int gpuRes(int model) {
    if (model == -1) {
      return gpuResOfModel.length == 1 ? gpuResOfModel[0] : -1;
    }
    return model >= 0 && model < gpuResOfModel.length ? gpuResOfModel[model] : -1;
  }

  private void charge(QuotaLedger ledger, int q, JobSpec spec, Placement placement, int sign) {
    var shape = spec.gang().shape();
    int tasks = 0;
    for (int i = 0; i < placement.nodeCount(); i++) {
      int node = placement.node(i);
      tasks += placement.tasksOn(i);
      int res = gpuResOfModel[cluster.gpuModelId(node)];
      long gpus = (long) placement.tasksOn(i) * shape.gpus();
      if (res >= 0 && gpus > 0) {
        apply(ledger, q, res, gpus, sign);
      }
    }
    if (cpuRes >= 0) {
      apply(ledger, q, cpuRes, (long) tasks * shape.cpus(), sign);
    }
    if (memRes >= 0) {
      apply(ledger, q, memRes, (long) tasks * shape.memoryBytes(), sign);
    }
  }

  private static void apply(QuotaLedger ledger, int q, int res, long amount, int sign) {
    if (amount == 0) {
      return;
    }
    if (sign > 0) {
      ledger.add(q, res, amount);
    } else {
      ledger.remove(q, res, amount);
    }
  }

  // ---- diagnosis ----------------------------------------------------------------------------

  /** Why a job refused by quota was refused, for people; built from the quota after the pass. */
  String quotaDetail(int slot) {
    Job job = pending.jobs()[slot];
    int code = failedResource[slot];
    if (code == UNKNOWN_QUEUE) {
      return "queue '"
          + job.spec().queue()
          + "' is not configured (fix: submit to one of "
          + tenants.config().queues().stream().map(QueueSpec::name).toList()
          + ")";
    }
    if (code == NO_FLAVOR) {
      return "queue "
          + job.spec().queue()
          + " has no GPU quota of a model the cluster has"
          + (job.spec().gpuModel().isEmpty()
              ? ""
              : " (the job asks for " + job.spec().gpuModel() + ")");
    }
    if (code < 0) {
      return "its queue has no quota left for it";
    }
    Resource resource = quota.resource(code);
    var shape = job.spec().gang().shape();
    long amount =
        switch (resource.kind()) {
          case GPU -> pending.gpus()[slot];
          case CPU -> (long) pending.tasks()[slot] * shape.cpus();
          case MEMORY -> (long) pending.tasks()[slot] * shape.memoryBytes();
        };
    Admission a = quota.check(job.spec().queue(), Map.of(resource, amount));
    return a instanceof Admission.DoesNotFit(_, _, _, _, var reason)
        ? reason
        : resource + ": queue " + job.spec().queue() + " had no quota left for it in this pass";
  }

  /** For a preemptor whose victims are still stopping: which ones. */
  String preemptingDetail(JobId job) {
    var ids = new ArrayList<Long>();
    tenants
        .preempting()
        .forEach(
            (victim, preemptor) -> {
              if (preemptor.equals(job)) {
                ids.add(victim.value());
              }
            });
    ids.sort(null);
    return "waits for job" + (ids.size() == 1 ? " " : "s ") + ids + " to stop (preempted for it)";
  }

  // ---- preemption ---------------------------------------------------------------------------

  /** A running job as a possible victim. */
  private record Victim(
      RunningJob running, int queue, int priority, int accountRank, long protectedUntil) {}

  /**
   * Victims for the first blocked job (in {@code order}) that preemption can start, or none. {@code
   * reasons} are the pass's, by rank.
   */
  List<Decision.Preempt> preempt(
      int[] order, byte[] reasons, ClusterSnapshot snapshot, Ledger ledger, long nowSec) {
    if (!tenants.preempting().isEmpty()) {
      return List.of();
    }
    List<Victim> victims = null;
    int tried = 0;
    for (int rank = 0; rank < order.length && tried < PREEMPTORS_TRIED; rank++) {
      int slot = order[rank];
      int q = queueOf[slot];
      Reason reason = reasons[rank] < 0 ? null : Reason.ofCode(reasons[rank]);
      if (q < 0
          || !preemptible(reason)
          || failedResource[slot] == UNKNOWN_QUEUE
          || failedResource[slot] == NO_FLAVOR) {
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
      var decided = planFor(slot, q, policy, victims, snapshot, ledger, nowSec);
      if (!decided.isEmpty()) {
        return decided;
      }
    }
    return List.of();
  }

  /** {@link Tenants#preemptible} from the stage's tables. */
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
      int q = runningQueue[i];
      if (!preemptible(spec, q) || tenants.preempting().containsKey(r.id())) {
        continue;
      }
      PreemptionHistory history = tenants.histories().getOrDefault(r.id(), PreemptionHistory.NONE);
      long until = tenants.settings().protection().protectedUntilSec(history, r.startSec());
      if (until > nowSec) {
        continue;
      }
      out.add(new Victim(r, q, spec.priority(), accountRank(spec, q), until));
    }
    return out;
  }

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
      ClusterSnapshot snapshot,
      Ledger ledger,
      long nowSec) {
    Job job = pending.jobs()[slot];
    JobSpec spec = job.spec();
    int priority = spec.priority();
    int rank = accountRank(spec, q);
    int cohort = quota.cohortOf(q);
    int model = spec.gpuModel().isEmpty() ? -1 : cluster.modelIdOf(spec.gpuModel());
    if (cluster.gpuModelCount() > 1 && model == -1) {
      int n = flavors(slot, q, flavorScratch);
      if (n == 0) {
        return List.of();
      }
      model = flavorScratch[0];
    }
    int gpuRes = gpuRes(model);
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
    // Least valuable first: lower priority, more over-served account (higher rank), most
    // recently started (least work lost), then id.
    matched.sort(TenancyStage::lessValuableFirst);
    var candidates = new ArrayList<VictimCandidate>(matched.size());
    for (Victim v : matched) {
      long cost =
          (long) v.running().job().totalGpus() * Math.max(0, nowSec - v.running().startSec());
      candidates.add(new VictimCandidate(v.running(), cost, v.protectedUntil()));
    }
    GangSpec gang = spec.gang();
    long[] excluded = spec.hasExclusions() ? cluster.excludedMask(spec.excludedNodes()) : null;
    var planner = new PreemptionPlanner(cluster);
    Optional<PreemptionPlan> plan =
        planner.plan(ledger.now(0), gang, model, excluded, true, candidates, nowSec);
    if (plan.isEmpty() || !plan.get().needsPreemption()) {
      return List.of(); // cannot make room, or it fits without victims (it waits for a reservation)
    }
    // Quota with the victims gone; add quota victims in preference order until it fits.
    var inPlan = new HashSet<JobId>();
    plan.get().victims().forEach(r -> inPlan.add(r.id()));
    var chosen = new ArrayList<Victim>(inPlan.size());
    QuotaLedger after = quota.copy();
    for (Victim v : matched) {
      if (inPlan.contains(v.running().id())) {
        chosen.add(v);
        remove(after, v);
      }
    }
    if (!quotaFits(after, slot, q, gpuRes)) {
      for (Victim v : matched) {
        if (inPlan.contains(v.running().id())
            || v.queue() < 0
            || (v.queue() != q && (cohort < 0 || quota.cohortOf(v.queue()) != cohort))) {
          continue; // chosen already, or frees no quota the preemptor can use
        }
        chosen.add(v);
        remove(after, v);
        if (quotaFits(after, slot, q, gpuRes)) {
          break;
        }
      }
      if (!quotaFits(after, slot, q, gpuRes)) {
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

  private void remove(QuotaLedger ledger, Victim v) {
    if (v.queue() >= 0) {
      charge(ledger, v.queue(), v.running().job().spec(), v.running().placement(), -1);
    }
  }

  private boolean quotaFits(QuotaLedger ledger, int slot, int q, int gpuRes) {
    var shape = pending.jobs()[slot].spec().gang().shape();
    int tasks = pending.tasks()[slot];
    return fitsIn(ledger, q, gpuRes, pending.gpus()[slot])
        && fitsIn(ledger, q, cpuRes, (long) tasks * shape.cpus())
        && fitsIn(ledger, q, memRes, (long) tasks * shape.memoryBytes());
  }

  private static boolean fitsIn(QuotaLedger ledger, int q, int res, long amount) {
    return res < 0 || amount == 0 || (ledger.covers(q, res) && ledger.available(q, res) >= amount);
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
    String queue = quota.queueName(q);
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
