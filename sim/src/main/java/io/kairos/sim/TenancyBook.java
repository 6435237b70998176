package io.kairos.sim;

import io.kairos.core.fairshare.AccountTree;
import io.kairos.core.fairshare.FairShareFactor;
import io.kairos.core.fairshare.Resources;
import io.kairos.core.fairshare.UsageTracker;
import io.kairos.core.model.Cluster;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.tenancy.PreemptionBook;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.core.tenancy.Resource;
import io.kairos.core.tenancy.TenancyConfig;
import io.kairos.core.tenancy.Tenants;
import io.kairos.sim.trace.TraceJob;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * The simulator's tenancy state for one run: which queue and account each job belongs to, the
 * accounts' decayed usage (for fair share), the preemptions the pass is told of (the core's {@link
 * PreemptionBook}, the rules the controller keeps too), and the per-queue integrals the report's
 * fairness figures come from.
 *
 * <p>Single-threaded, deterministic: everything that is iterated is indexed by dense ints or kept
 * in a sorted map.
 */
final class TenancyBook implements RunTenancy {
  final SimTenancy sim;
  final TenancyConfig config;
  final Tenants.Settings settings;
  final List<String> queueNames;
  final long[] nominalGpus;

  /** Job index to queue index. */
  final int[] queueOf;

  // Fair share (only when scheduling).
  private final UsageTracker usage;
  private final int[] accountOf;
  private final long[][] heldByAccount; // [account][gpus, cpus, memory]
  private final long[][] heldByJob;
  private long chargedToSec;

  /** Preemptions under way and the histories of preempted jobs, handed to the pass. */
  private final PreemptionBook preemptionBook;

  /** Preemptions dropped by {@link PreemptionBook#update} before their preemptor started. */
  int expired;

  /** The first of those, for the report's note ("" when none). */
  String firstExpired = "";

  // Per queue.
  final long[] runningGpus;
  final long[] demandGpus;
  final double[] entitledGpuSec;
  final double[] servedGpuSec;
  final int[] preemptions;
  final double[] lostGpuSec;

  // Per account (the report's: every run has them, scheduled or measured only).
  /** The accounts jobs are charged to, in the file's order, then the others as they appear. */
  final List<String> accountNames;

  /** Job index to report account index (into {@link #accountNames}). */
  final int[] reportAccountOf;

  final int[] accountPreemptions;
  final double[] accountLostGpuSec;

  private TenancyBook(
      SimTenancy sim,
      List<String> queueNames,
      long[] nominalGpus,
      int[] queueOf,
      UsageTracker usage,
      int[] accountOf,
      long[][] heldByJob,
      long startSec,
      ReportAccounts accounts) {
    this.sim = sim;
    this.config = sim.tenancy().config();
    this.settings = sim.tenancy().settings();
    this.preemptionBook = new PreemptionBook(settings);
    this.queueNames = queueNames;
    this.nominalGpus = nominalGpus;
    this.queueOf = queueOf;
    this.usage = usage;
    this.accountOf = accountOf;
    this.heldByJob = heldByJob;
    this.heldByAccount = usage == null ? null : new long[usage.tree().size()][3];
    this.chargedToSec = startSec;
    int q = queueNames.size();
    runningGpus = new long[q];
    demandGpus = new long[q];
    entitledGpuSec = new double[q];
    servedGpuSec = new double[q];
    preemptions = new int[q];
    lostGpuSec = new double[q];
    accountNames = accounts.names();
    reportAccountOf = accounts.ofJob();
    accountPreemptions = new int[accountNames.size()];
    accountLostGpuSec = new double[accountNames.size()];
  }

  /** The report's accounts: names in order, and each job's index into them. */
  private record ReportAccounts(List<String> names, int[] ofJob) {}

  /**
   * The account a job is charged to under the tenancy: its own, else its queue's default, else its
   * user, else (all empty) its queue's name: what {@code Simulator} resolves when scheduling, and
   * what a measured-only run is reported by.
   */
  static String accountOf(JobSpec spec, TenancyConfig config) {
    String account = Tenants.accountOf(spec, config);
    return account.isEmpty() ? spec.queue() : account;
  }

  private static ReportAccounts reportAccounts(SimTenancy sim, List<JobSpec> specs) {
    TenancyConfig config = sim.tenancy().config();
    var file = sim.tenancy().accounts();
    int n = specs.size();
    String[] names = new String[n];
    var used = new java.util.HashSet<String>();
    for (int i = 0; i < n; i++) {
      names[i] = accountOf(specs.get(i), config);
      used.add(names[i]);
    }
    var order = new LinkedHashMap<String, Integer>();
    for (int id = 0; id < file.size(); id++) {
      if (used.contains(file.name(id))) {
        order.putIfAbsent(file.name(id), order.size());
      }
    }
    for (String name : names) {
      order.putIfAbsent(name, order.size());
    }
    int[] ofJob = new int[n];
    for (int i = 0; i < n; i++) {
      ofJob[i] = order.get(names[i]);
    }
    return new ReportAccounts(List.copyOf(order.keySet()), ofJob);
  }

  /** The nominal GPU quota of a queue: the sum over its GPU resources (all models). */
  static long nominalGpus(QueueSpec queue) {
    long sum = 0;
    for (var e : queue.quotas().entrySet()) {
      if (e.getKey().kind() == Resource.Kind.GPU) {
        sum += e.getValue().nominal();
      }
    }
    return sum;
  }

  /**
   * The book for a run of {@code specs} (already resolved when scheduling). The fair-share tree is
   * the file's accounts plus, for every job account not in it, a leaf of 1 share under its queue's
   * default account (or the root), in order of first appearance.
   */
  static TenancyBook of(SimTenancy sim, Cluster cluster, List<JobSpec> specs, long startSec) {
    TenancyConfig config = sim.tenancy().config();
    var queueNames = config.queues().stream().map(QueueSpec::name).toList();
    var queueIndex = new HashMap<String, Integer>();
    long[] nominal = new long[queueNames.size()];
    for (int q = 0; q < queueNames.size(); q++) {
      queueIndex.put(queueNames.get(q), q);
      nominal[q] = nominalGpus(config.queues().get(q));
    }
    int n = specs.size();
    int[] queueOf = new int[n];
    for (int i = 0; i < n; i++) {
      queueOf[i] = queueIndex.get(specs.get(i).queue());
    }
    if (!sim.schedule()) {
      return new TenancyBook(
          sim,
          queueNames,
          nominal,
          queueOf,
          null,
          null,
          null,
          startSec,
          reportAccounts(sim, specs));
    }
    var tree = accountTree(sim, specs);
    long cpus = 0;
    long memory = 0;
    // Saturating: simple nodes declare "unlimited" CPUs and memory as the type's maximum.
    for (int node = 0; node < cluster.nodeCount(); node++) {
      cpus = saturatedAdd(cpus, cluster.cpuCount(node));
      memory = saturatedAdd(memory, cluster.memoryBytes(node));
    }
    var usage =
        new UsageTracker(
            tree,
            new Resources(cluster.totalGpus(), cpus, memory),
            sim.tenancy().halfLifeSec(),
            startSec);
    int[] accountOf = new int[n];
    long[][] held = new long[n][];
    for (int i = 0; i < n; i++) {
      JobSpec spec = specs.get(i);
      accountOf[i] = tree.id(spec.account());
      var gang = spec.gang();
      held[i] =
          new long[] {
            gang.totalGpus(),
            (long) gang.tasks() * gang.shape().cpus(),
            (long) gang.tasks() * gang.shape().memoryBytes()
          };
    }
    return new TenancyBook(
        sim,
        queueNames,
        nominal,
        queueOf,
        usage,
        accountOf,
        held,
        startSec,
        reportAccounts(sim, specs));
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }

  private static AccountTree accountTree(SimTenancy sim, List<JobSpec> specs) {
    var file = sim.tenancy().accounts();
    var accounts = new ArrayList<AccountTree.Account>();
    for (int id = 0; id < file.size(); id++) {
      int parent = file.parent(id);
      accounts.add(
          new AccountTree.Account(
              file.name(id),
              parent == AccountTree.NO_PARENT ? AccountTree.ROOT : file.name(parent),
              file.shares(id)));
    }
    var added = new LinkedHashMap<String, String>();
    for (JobSpec spec : specs) {
      if (file.contains(spec.account()) || added.containsKey(spec.account())) {
        continue;
      }
      String parent =
          sim.tenancy()
              .config()
              .queue(spec.queue())
              .map(q -> q.defaults().account())
              .filter(file::contains)
              .orElse(AccountTree.ROOT);
      added.put(spec.account(), parent);
    }
    added.forEach((name, parent) -> accounts.add(new AccountTree.Account(name, parent, 1)));
    return AccountTree.of(accounts);
  }

  @Override
  public boolean schedules() {
    return usage != null;
  }

  // ---- events ------------------------------------------------------------------------------

  @Override
  public void arrived(int i, int gpus) {
    demandGpus[queueOf[i]] += gpus;
  }

  @Override
  public void started(int i, int gpus) {
    runningGpus[queueOf[i]] += gpus;
    if (usage != null) {
      long[] a = heldByAccount[accountOf[i]];
      long[] j = heldByJob[i];
      a[0] += j[0];
      a[1] += j[1];
      a[2] += j[2];
    }
  }

  @Override
  public void finished(int i, int gpus) {
    stopped(i, gpus, true);
    preemptionBook.forgetHistory(EventLoop.jobId(i));
  }

  /** A running job stops: it was requeued ({@code finished} false) or it ended. */
  private void stopped(int i, int gpus, boolean finished) {
    runningGpus[queueOf[i]] -= gpus;
    if (finished) {
      demandGpus[queueOf[i]] -= gpus;
    }
    if (usage != null) {
      long[] a = heldByAccount[accountOf[i]];
      long[] j = heldByJob[i];
      a[0] -= j[0];
      a[1] -= j[1];
      a[2] -= j[2];
    }
  }

  @Override
  public void requeued(int i, int gpus, double lostGpuSeconds) {
    stopped(i, gpus, false);
    preemptions[queueOf[i]]++;
    lostGpuSec[queueOf[i]] += lostGpuSeconds;
    accountPreemptions[reportAccountOf[i]]++;
    accountLostGpuSec[reportAccountOf[i]] += lostGpuSeconds;
  }

  /**
   * Each report account's fair-share factor from the usage charged until the last event of the run
   * (what the next pass would have seen); NaN for every account when the run was only measured (no
   * usage was tracked).
   */
  double[] finalFairShareFactors() {
    double[] factors = new double[accountNames.size()];
    if (usage == null) {
      java.util.Arrays.fill(factors, Double.NaN);
      return factors;
    }
    var fairShare = FairShareFactor.of(sim.fairShare(), usage);
    for (int a = 0; a < factors.length; a++) {
      factors[a] = fairShare.factor(accountNames.get(a));
    }
    return factors;
  }

  /**
   * The queues charted against their quota, and each job's group: the file's queues that have jobs
   * in the trace or a nominal GPU quota, by GPU time in the trace (largest first, then by name);
   * past {@link SimSeries#MAX_QUOTA_QUEUES} the rest share one group, {@value
   * SimSeries#OTHER_QUEUES}, whose nominal is the sum of theirs.
   */
  SeriesRecorder.QuotaGroups quotaGroups(List<TraceJob> jobs) {
    int queues = queueNames.size();
    double[] gpuSec = new double[queues];
    boolean[] hasJobs = new boolean[queues];
    for (int i = 0; i < jobs.size(); i++) {
      TraceJob j = jobs.get(i);
      gpuSec[queueOf[i]] += (double) j.durationSec() * j.gpus();
      hasJobs[queueOf[i]] = true;
    }
    var shown = new ArrayList<Integer>();
    for (int q = 0; q < queues; q++) {
      if (hasJobs[q] || nominalGpus[q] > 0) {
        shown.add(q);
      }
    }
    shown.sort(
        java.util.Comparator.comparingDouble((Integer q) -> -gpuSec[q])
            .thenComparing(queueNames::get));
    int max = SimSeries.MAX_QUOTA_QUEUES;
    int named = shown.size() <= max + 1 ? shown.size() : max;
    var names = new ArrayList<String>();
    long[] nominal = new long[Math.min(shown.size(), max + 1)];
    int[] groupOfQueue = new int[queues];
    for (int k = 0; k < shown.size(); k++) {
      int q = shown.get(k);
      int g = Math.min(k, named);
      if (g == names.size()) {
        names.add(k < named ? queueNames.get(q) : SimSeries.OTHER_QUEUES);
      }
      groupOfQueue[q] = g;
      nominal[g] += nominalGpus[q];
    }
    int[] groupOfJob = new int[jobs.size()];
    for (int i = 0; i < groupOfJob.length; i++) {
      groupOfJob[i] = groupOfQueue[queueOf[i]];
    }
    return new SeriesRecorder.QuotaGroups(names, nominal, groupOfJob);
  }

  // ---- preemption (the rules are the core's PreemptionBook) -------------------------------

  @Override
  public boolean applies(JobId victim, JobId preemptor, PreemptionBook.Jobs jobs) {
    return schedules() && PreemptionBook.applies(victim, preemptor, jobs);
  }

  @Override
  public long graceSec() {
    return settings.graceSec();
  }

  @Override
  public long checkpointEverySec() {
    return sim.checkpointEverySec();
  }

  /** The victim was told to stop: its preemption is under way, its history records it. */
  @Override
  public void preempted(JobId victim, JobId preemptor, long atSec) {
    preemptionBook.preempted(victim, preemptor, atSec);
    preemptionBook.recordHistory(victim, atSec);
  }

  /** Usage and demand were constant from {@code fromSec} to {@code toSec}. */
  @Override
  public void interval(long fromSec, long toSec) {
    double dt = toSec - fromSec;
    for (int q = 0; q < nominalGpus.length; q++) {
      long entitled = Math.min(demandGpus[q], nominalGpus[q]);
      if (entitled > 0) {
        entitledGpuSec[q] += entitled * dt;
        servedGpuSec[q] += Math.min(runningGpus[q], entitled) * dt;
      }
    }
  }

  /** Charges every account for what it held since the last charge, up to {@code nowSec}. */
  @Override
  public void chargeTo(long nowSec) {
    if (usage == null || nowSec <= chargedToSec) {
      return;
    }
    usage.decayTo(nowSec);
    for (int a = 0; a < heldByAccount.length; a++) {
      long[] h = heldByAccount[a];
      if (h[0] != 0 || h[1] != 0 || h[2] != 0) {
        usage.charge(a, new Resources(h[0], h[1], h[2]), chargedToSec, nowSec);
      }
    }
    chargedToSec = nowSec;
  }

  /**
   * What the pass at {@code nowSec} knows of tenancy ({@link Tenants#none()} when the run is only
   * measured); {@link #chargeTo} must have run. Preemptions whose preemptor did not start within
   * {@link PreemptionBook#keepSec()} are dropped first, and counted for the report's note.
   */
  @Override
  public Tenants beforePass(long nowSec, PreemptionBook.Jobs jobs) {
    if (!schedules()) {
      return Tenants.none();
    }
    for (PreemptionBook.Entry e : preemptionBook.update(nowSec, jobs)) {
      if (expired++ == 0) {
        firstExpired =
            "victim "
                + e.victim().value()
                + " for job "
                + e.preemptor().value()
                + " at t="
                + e.atSec();
      }
    }
    return new Tenants(
        config,
        FairShareFactor.of(sim.fairShare(), usage),
        preemptionBook.histories(),
        preemptionBook.preempting(),
        settings);
  }
}
