package io.kairos.bench;

import io.kairos.core.fairshare.AccountTree;
import io.kairos.core.fairshare.FairShareFactor;
import io.kairos.core.fairshare.Resources;
import io.kairos.core.fairshare.UsageTracker;
import io.kairos.core.model.Cluster;
import io.kairos.core.model.JobSpec;
import io.kairos.core.tenancy.PreemptionPolicy;
import io.kairos.core.tenancy.PreemptionPolicy.BorrowWithinCohort;
import io.kairos.core.tenancy.PreemptionPolicy.ReclaimWithinCohort;
import io.kairos.core.tenancy.PreemptionPolicy.WithinQueue;
import io.kairos.core.tenancy.QueueDefaults;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.core.tenancy.Resource;
import io.kairos.core.tenancy.ResourceQuota;
import io.kairos.core.tenancy.TenancyConfig;
import io.kairos.core.tenancy.Tenants;
import java.util.ArrayList;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The multi-tenant benchmark state: {@value #QUEUES} queues in {@value #COHORTS} cohorts, each with
 * an equal nominal share of the cluster's GPUs, borrowing, reclaim and in-queue preemption on;
 * {@value #ACCOUNTS} user accounts under 100 teams under 10 organisations, with random decayed
 * usage, ranked by Slurm's classic fair-share factor. Jobs get a user (its own account) and a queue
 * from their id ({@link #assign}): user {@code uK} is in team {@code K mod 100}, whose queue is
 * {@code q(K mod 100)} (a Kueue namespace's LocalQueue); one job in ten goes to another queue at
 * random, as users of several teams do.
 */
public final class BenchTenancy {
  public static final int QUEUES = 100;
  public static final int COHORTS = 10;
  public static final int ACCOUNTS = 1_000;

  private BenchTenancy() {}

  /** The spec with queue and account chosen from the job id (a fixed spread, no randomness). */
  static JobSpec assign(JobSpec spec, long id) {
    long h = id * 0x9E3779B97F4A7C15L;
    int account = (int) Long.remainderUnsigned(h >>> 3, ACCOUNTS);
    int queue =
        Long.remainderUnsigned(h >>> 40, 10) == 0
            ? (int) Long.remainderUnsigned(h >>> 17, QUEUES)
            : account % 100;
    return new JobSpec(
        "u" + account,
        "q" + queue,
        spec.priority(),
        spec.gang(),
        spec.timeLimitSec(),
        spec.gpuModel(),
        spec.excludedNodes(),
        "u" + account,
        "");
  }

  /** The tenancy of the benchmark for {@code cluster}, with fair share as of {@code nowSec}. */
  public static Tenants tenants(Cluster cluster, long nowSec, long seed) {
    Resource gpu = Resource.gpu(cluster.gpuModel(0));
    long nominal = cluster.totalGpus() / QUEUES;
    var policy =
        new PreemptionPolicy(
            WithinQueue.LOWER_PRIORITY,
            ReclaimWithinCohort.ANY,
            new BorrowWithinCohort(BorrowWithinCohort.Policy.LOWER_PRIORITY, null),
            PreemptionPolicy.FairShare.OVER_SERVED);
    var queues = new ArrayList<QueueSpec>(QUEUES);
    for (int q = 0; q < QUEUES; q++) {
      queues.add(
          new QueueSpec(
              "q" + q,
              "c" + (q % COHORTS),
              Map.of(gpu, ResourceQuota.of(nominal)),
              policy,
              QueueDefaults.NONE));
    }
    var config = TenancyConfig.ofQueues(queues);
    var accounts = new ArrayList<AccountTree.Account>();
    for (int o = 0; o < 10; o++) {
      accounts.add(new AccountTree.Account("org" + o, AccountTree.ROOT, 1 + o % 3));
    }
    for (int t = 0; t < 100; t++) {
      accounts.add(new AccountTree.Account("team" + t, "org" + (t % 10), 1 + t % 4));
    }
    for (int u = 0; u < ACCOUNTS; u++) {
      accounts.add(new AccountTree.Account("u" + u, "team" + (u % 100), 1));
    }
    var tree = AccountTree.of(accounts);
    var usage = new UsageTracker(tree, new Resources(cluster.totalGpus(), 0, 0), 0);
    usage.decayTo(nowSec);
    var rng = new SplittableRandom(seed);
    for (int u = 0; u < ACCOUNTS; u++) {
      long from = rng.nextLong(nowSec);
      usage.charge("u" + u, new Resources(1 + rng.nextInt(64), 0, 0), from, nowSec);
    }
    return Tenants.of(config).withFairShare(FairShareFactor.classic(usage));
  }
}
