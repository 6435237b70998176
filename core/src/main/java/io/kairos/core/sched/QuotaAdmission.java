package io.kairos.core.sched;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.model.RunningJob;
import io.kairos.core.state.ClusterSnapshot;
import io.kairos.core.state.PendingJobs;
import io.kairos.core.tenancy.QuotaLedger;
import io.kairos.core.tenancy.Resource;
import io.kairos.core.tenancy.Tenants;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Set;

/**
 * Quota with placement, for one pass: on which GPU flavors its queue's quota admits a job now, and
 * the charge of every job the pass starts. Part of {@link QueueTenancy}.
 *
 * <p>Design note. Usage per queue is recomputed from the snapshot's running jobs (each node's GPUs
 * count as that node's model, {@code gpu:MODEL}; CPUs and memory count when some queue has a quota
 * of them), so no ledger has to be kept in step with the store. A job is admitted only together
 * with a placement:
 *
 * <ol>
 *   <li>{@link #admit} checks the quota, memoised per queue and resource: availability only shrinks
 *       within a pass, so once a queue refused {@code a} of a resource it refuses {@code a} or more
 *       without asking the ledger;
 *   <li>the pass places the job on an admitted flavor;
 *   <li>only a placed job is charged ({@link #started}), so no job is admitted onto capacity that
 *       cannot hold it. A job refused by quota holds back no other job (Kueue: other queues go on).
 * </ol>
 *
 * <p><b>Flavors.</b> A job naming a GPU model is counted against that model's quota. A job that
 * names none, on a cluster of one model, is counted against that model; with several models it is
 * tried on each model its queue has quota of, in resource order (Kueue's flavor assignment), and
 * placed on that model's nodes only ({@link #needsFlavorChoice}), so every GPU it holds is counted
 * against the right flavor.
 *
 * <p><b>Preemptions under way.</b> A preemptor whose victims still run is admitted against the
 * quota as it will be once they have stopped, and held in both ledgers while it waits for room
 * ({@link #hold}), so no later job takes the quota its victims free.
 *
 * <p>Cost: set-up O(r x p + n) for r running jobs of p placement nodes and n pending jobs, plus a
 * copy of the ledger while preemptions are under way; {@link #admit} O(f) for f flavors, O(1) on a
 * one-model cluster; {@link #everHolding} O(nodes) once per gang shape and model, then O(f).
 */
final class QuotaAdmission {
  /** Failure code in {@link #failure}: the queue is unknown. */
  static final int UNKNOWN_QUEUE = -2;

  /** Failure code in {@link #failure}: a GPU model no queue has quota of. */
  static final int NO_FLAVOR = -3;

  private final Cluster cluster;
  private final PendingJobs pending;
  private final QuotaLedger quota;
  private final int resources;
  private final int cpuRes;
  private final int memRes;
  private final int[] gpuResOfModel;
  private final int[] queueOf;
  private final int[] runningQueue;
  private final int[] shapeModel;
  private final int[] shapeCpus;
  private final long[] shapeMemory;
  private final long[] refusedAt;
  private final int[] failedResource;
  private final Set<Long> waitingForVictims;
  private final int[] flavorScratch;
  private long[] maxTasksEver;

  /**
   * The quota as it will be once the running victims of the preemptions under way have stopped;
   * null when none run. A waiting preemptor is admitted against it (its victims' usage is about to
   * go), and held in both ledgers while it waits for room, so no later job takes the quota its
   * victims free (the main ledger then counts it twice for at most the grace period: stricter,
   * never looser).
   */
  private QuotaLedger afterVictims;

  /**
   * @param quota a fresh ledger of the tenancy's configuration; charged here with the running jobs
   * @param tenantQueue the queue id of each interned tenant key of the pending table (-1: unknown)
   * @param waitingForVictims ids of the preemptors whose preemptions are under way
   */
  QuotaAdmission(
      Tenants tenants,
      ClusterSnapshot snapshot,
      QuotaLedger quota,
      int[] tenantQueue,
      Set<Long> waitingForVictims) {
    this.cluster = snapshot.cluster();
    this.pending = snapshot.pendingJobs();
    this.quota = quota;
    this.waitingForVictims = waitingForVictims;
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
    // Per pending job and per gang shape: what admission needs, so the per-job loops read flat
    // arrays only (no Job -> JobSpec chasing).
    int n = pending.size();
    int[] tenantIds = pending.tenantIds();
    int shapes = pending.shapeCount();
    shapeModel = new int[shapes];
    shapeCpus = new int[shapes];
    shapeMemory = new long[shapes];
    boolean[] seen = new boolean[shapes];
    queueOf = new int[n];
    for (int slot = 0; slot < n; slot++) {
      queueOf[slot] = tenantQueue[tenantIds[slot]];
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
  }

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
    if (afterVictims != null && isWaitingForVictims(slot)) {
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

  private boolean isWaitingForVictims(int slot) {
    return !waitingForVictims.isEmpty() && waitingForVictims.contains(pending.ids()[slot]);
  }

  /**
   * A waiting preemptor admitted on {@code model} could not be placed yet (its victims still run):
   * holds its quota in both ledgers, so later jobs of the pass do not take it.
   */
  void hold(int slot, int model) {
    if (afterVictims == null || !isWaitingForVictims(slot)) {
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

  /** Charges a started job to its queue. */
  void started(int slot, Placement placement) {
    charge(quota, queueOf[slot], pending.jobs()[slot].spec(), placement, 1);
  }

  /**
   * Whether the job would borrow: its GPUs on its first flavor go past its queue's nominal quota
   * (usage as of now). False for an unknown queue or a resource the queue has no quota of.
   */
  boolean wouldBorrow(int slot) {
    int q = queueOf[slot];
    if (q < 0) {
      return false;
    }
    int flavors = flavors(slot, q, flavorScratch);
    int res = flavors > 0 ? gpuRes(flavorScratch[0]) : -1;
    return res >= 0
        && quota.covers(q, res)
        && quota.usage(q, res) + pending.gpus()[slot] > quota.nominal(q, res);
  }

  /**
   * The candidate models of a job, before quota: its own model; on a one-model cluster "any" (-1);
   * else every model the queue has GPU quota of, in resource order.
   */
  int flavors(int slot, int q, int[] out) {
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
  int gpuRes(int model) {
    if (model == -1) {
      return gpuResOfModel.length == 1 ? gpuResOfModel[0] : -1;
    }
    return model >= 0 && model < gpuResOfModel.length ? gpuResOfModel[model] : -1;
  }

  /** The queue id of a pending job (-1: unknown). */
  int queueOf(int slot) {
    return queueOf[slot];
  }

  /** The queue id of the snapshot's running job {@code i} (-1: unknown). */
  int runningQueue(int i) {
    return runningQueue[i];
  }

  /**
   * Why admission refused the job last: {@link #UNKNOWN_QUEUE}, {@link #NO_FLAVOR}, a resource id
   * of the ledger, or -1 (no quota left, or not refused).
   */
  int failure(int slot) {
    return failedResource[slot];
  }

  /** The ledger: the running jobs' usage, plus the jobs started (and held) in the pass so far. */
  QuotaLedger quota() {
    return quota;
  }

  /**
   * Whether the job's whole request (GPUs of resource {@code gpuRes}, CPUs, memory) fits in {@code
   * ledger}'s availability for queue {@code q}. Not memoised: for what-if ledgers.
   */
  boolean quotaFits(QuotaLedger ledger, int slot, int q, int gpuRes) {
    var shape = pending.jobs()[slot].spec().gang().shape();
    int tasks = pending.tasks()[slot];
    return fitsIn(ledger, q, gpuRes, pending.gpus()[slot])
        && fitsIn(ledger, q, cpuRes, (long) tasks * shape.cpus())
        && fitsIn(ledger, q, memRes, (long) tasks * shape.memoryBytes());
  }

  private static boolean fitsIn(QuotaLedger ledger, int q, int res, long amount) {
    return res < 0 || amount == 0 || (ledger.covers(q, res) && ledger.available(q, res) >= amount);
  }

  /** Takes a running job's usage out of {@code ledger} (a what-if copy), as if it had stopped. */
  void release(QuotaLedger ledger, int q, RunningJob running) {
    charge(ledger, q, running.job().spec(), running.placement(), -1);
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
}
