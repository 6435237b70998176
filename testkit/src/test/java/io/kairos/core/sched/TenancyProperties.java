package io.kairos.core.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.JobId;
import io.kairos.core.sched.preempt.PreemptionHistory;
import io.kairos.core.sched.preempt.ProtectionPolicy;
import io.kairos.core.state.ClusterStore;
import io.kairos.core.tenancy.PreemptionPolicy;
import io.kairos.core.tenancy.PreemptionPolicy.BorrowWithinCohort;
import io.kairos.core.tenancy.PreemptionPolicy.ReclaimWithinCohort;
import io.kairos.core.tenancy.PreemptionPolicy.WithinQueue;
import io.kairos.core.tenancy.QueueDefaults;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.core.tenancy.QuotaLedger;
import io.kairos.core.tenancy.Resource;
import io.kairos.core.tenancy.ResourceQuota;
import io.kairos.core.tenancy.TenancyConfig;
import io.kairos.core.tenancy.Tenants;
import io.kairos.testkit.Clusters;
import io.kairos.testkit.Coverage;
import io.kairos.testkit.Jobs;
import io.kairos.testkit.Properties;
import io.kairos.testkit.SchedulerHarness;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Properties of the pass with tenancy, over random clusters, queue configurations (cohorts,
 * borrowing and lending limits, preemption policies) and workloads, each case replayable by its
 * seed ({@code -Dkairos.propertySeed=N}):
 *
 * <ol>
 *   <li><b>quota</b>: after every pass, no queue uses more than its nominal quota plus what its
 *       borrowing limit allows, a queue without a cohort no more than its nominal quota, and a
 *       cohort's members together no more than the cohort lends (the lending limits hold);
 *   <li><b>preemption leads to the preemptor starting</b>: once a pass's victims have stopped, the
 *       next pass (at the same time, nothing else changed) starts the preemptor;
 *   <li><b>gang atomicity</b>: every start places the whole gang (all tasks) and every victim is a
 *       whole running job.
 * </ol>
 *
 * <p>Property 2 is checked only after a pass that preempts: {@link #preemptionsCameUp} fails when
 * the generated cases stop producing such passes.
 */
class TenancyProperties {
  private static final Resource GPU = Resource.gpu("gpu");
  private static final List<String> TWO_MODELS = List.of("A100", "H100");

  static final Coverage COVERAGE = new Coverage("quotaHoldsAndPreemptionStartsThePreemptor");
  static final String PREEMPTED = "a pass that preempted";
  static final String STARTED_AFTER_VICTIMS = "a preemptor started once its victims stopped";
  static final String BORROWED = "a queue over its nominal quota, checked against its limits";
  static final String RESERVED_UNTIL_OTHERS_END =
      "a preemptor reserved until other jobs end (a backfill took the room its victims freed)";

  /**
   * Shares about half of what the generator gives over the 200 default seeds (in brackets), so that
   * a generator that stops producing the case fails here and a small drift does not.
   */
  @AfterAll
  static void preemptionsCameUp() {
    COVERAGE.assertSeen(PREEMPTED, 0.2); // (47%)
    COVERAGE.assertSeen(STARTED_AFTER_VICTIMS, 0.2); // (47%)
    COVERAGE.assertSeen(BORROWED, 0.3); // (62%)
  }

  static LongStream seeds() {
    return Properties.seeds();
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void quotaHoldsAndPreemptionStartsThePreemptor(long seed) {
    Properties.check(seed, () -> run(seed, COVERAGE.run()));
  }

  private static void run(long seed, Coverage.Run coverage) {
    var random = new SplittableRandom(seed);
    int nodes = 2 + random.nextInt(5);
    int gpusPerNode = random.nextBoolean() ? 4 : 8;
    // Every third seed: nodes of two GPU models, quotas per flavor, jobs with or without a model.
    boolean twoModels = seed % 3 == 2;
    Cluster cluster =
        twoModels ? twoModelCluster(nodes, gpusPerNode) : Clusters.oneRack(nodes, gpusPerNode);
    long total = (long) nodes * gpusPerNode;
    List<Resource> flavors =
        twoModels ? TWO_MODELS.stream().map(Resource::gpu).toList() : List.of(GPU);
    var config = config(random, total, flavors);
    var settings = new Tenants.Settings(ProtectionPolicy.DEFAULT, 30, 0, 0);
    var policy = Policy.ALL.get(random.nextInt(Policy.ALL.size()));
    var h = SchedulerHarness.of(cluster).policy(policy).seed(seed);
    var histories = new HashMap<JobId, PreemptionHistory>();
    long t = 0;
    int steps = 30 + random.nextInt(30);
    for (int step = 0; step < steps; step++) {
      t += 1 + random.nextInt(200);
      h.advanceTo(t);
      int arrivals = random.nextInt(4);
      for (int i = 0; i < arrivals; i++) {
        var queue = config.queues().get(random.nextInt(config.queues().size())).name();
        // A job is placed on one flavor: on two models, no larger than the smaller model's GPUs.
        long fits = twoModels ? (long) (nodes / 2) * gpusPerNode : total;
        int gpus = 1 + random.nextInt((int) Math.min(fits, 16));
        var job =
            (random.nextInt(4) == 0 && gpus > gpusPerNode && gpus % gpusPerNode == 0
                    ? Jobs.perNode(gpus, gpusPerNode)
                    : Jobs.gpus(gpus))
                .queue(queue)
                .priority(random.nextInt(3))
                .limit(100 + random.nextInt(2_000));
        if (twoModels && random.nextInt(3) == 0) {
          job.model(TWO_MODELS.get(random.nextInt(2)));
        }
        h.submitAt(t, job);
      }
      var tenants = new Tenants(config, null, histories, Map.of(), settings);
      h.tenants(tenants);
      PassResult pass = h.runPass();
      for (Decision.Start s : pass.starts()) {
        var spec = h.job(s.job()).spec();
        assertThat(s.placement().totalTasks())
            .as("%s: start of %s places its whole gang", h.context(), s.job())
            .isEqualTo(spec.gang().tasks());
        var models = new java.util.HashSet<String>();
        for (int i = 0; i < s.placement().nodeCount(); i++) {
          models.add(cluster.gpuModel(s.placement().node(i)));
        }
        assertThat(models)
            .as("%s: start of %s uses one GPU flavor", h.context(), s.job())
            .hasSize(1);
        if (!spec.gpuModel().isEmpty()) {
          assertThat(models).containsExactly(spec.gpuModel());
        }
      }
      h.commit(pass);
      checkQuota(h.store(), config, flavors, h.context(), coverage);
      if (pass.preemptions().isEmpty()) {
        continue;
      }
      coverage.saw(PREEMPTED);
      JobId preemptor = pass.preemptions().getFirst().preemptor();
      long victimsDeadline = t + settings.graceSec();
      var preempting = new HashMap<JobId, JobId>();
      for (Decision.Preempt p : pass.preemptions()) {
        assertThat(p.preemptor())
            .as("%s: one preemptor per pass", h.context())
            .isEqualTo(preemptor);
        assertThat(h.store().running(p.job()))
            .as("%s: victim %s is running", h.context(), p.job())
            .isPresent();
        assertThat(tenants.preemptible(h.job(p.job()).spec())).isTrue();
        preempting.put(p.job(), preemptor);
        histories.put(
            p.job(),
            settings
                .protection()
                .record(histories.getOrDefault(p.job(), PreemptionHistory.NONE), t));
      }
      h.tenants(new Tenants(config, null, histories, preempting, settings));
      if (random.nextBoolean()) {
        // While the victims stop, more jobs arrive and a pass starts what it can: none of it
        // may take the room or the quota the victims free for the preemptor.
        t += 1 + random.nextInt((int) settings.graceSec());
        h.advanceTo(t);
        for (int i = random.nextInt(4); i > 0; i--) {
          var queue = config.queues().get(random.nextInt(config.queues().size())).name();
          h.submitAt(
              t,
              Jobs.gpus(1 + random.nextInt((int) Math.min(total, 8)))
                  .queue(queue)
                  .limit(100 + random.nextInt(500)));
        }
        PassResult meanwhile = h.runPass();
        assertThat(meanwhile.preemptions())
            .as("%s: no preemption while one is under way", h.context())
            .isEmpty();
        h.commit(meanwhile);
        if (meanwhile.starts().stream().anyMatch(st -> st.job().equals(preemptor))) {
          continue; // its victims' limits passed meanwhile and it found room: fine
        }
      }
      // The victims stop, and the next pass starts the preemptor.
      for (JobId victim : preempting.keySet()) {
        if (h.store().running(victim).isPresent()) {
          h.cancel(victim);
        }
      }
      PassResult next = h.runPass();
      if (next.starts().stream().noneMatch(st -> st.job().equals(preemptor))) {
        // Meanwhile a backfill may have taken GPUs that other jobs free, by their limits, before
        // the victims' grace ends (it may: it delays no reservation). Then the preemptor is
        // reserved by that deadline, and starts there.
        var reserved =
            next.reservations().stream().filter(r -> r.job().equals(preemptor)).findFirst();
        assertThat(reserved)
            .as(
                "%s: preemptor %s, not started once its victims %s stopped, is reserved (pass %s)",
                h.context(), preemptor, preempting.keySet(), next.diagnosis())
            .isPresent();
        assertThat(reserved.get().startSec())
            .as("%s: preemptor %s is reserved by its victims' deadline", h.context(), preemptor)
            .isLessThanOrEqualTo(victimsDeadline);
        coverage.saw(RESERVED_UNTIL_OTHERS_END);
        h.commit(next);
        h.advanceTo(reserved.get().startSec());
        next = h.runPass();
      }
      assertThat(next.starts())
          .as(
              "%s: preemptor %s starts once its victims %s stopped (pass %s)",
              h.context(), preemptor, preempting.keySet(), next.diagnosis())
          .anySatisfy(s -> assertThat(s.job()).isEqualTo(preemptor));
      coverage.saw(STARTED_AFTER_VICTIMS);
      assertThat(next.preemptions()).as("no new preemption while one is under way").isEmpty();
      h.commit(next);
      checkQuota(h.store(), config, flavors, h.context(), coverage);
    }
  }

  /** {@code nodes} nodes, the first half A100s, the rest H100s. */
  private static Cluster twoModelCluster(int nodes, int gpus) {
    var b = Clusters.builder();
    for (int i = 0; i < nodes; i++) {
      b.add(
          new io.kairos.core.model.NodeSpec(
              "n" + i,
              TWO_MODELS.get(i < nodes / 2 ? 0 : 1),
              gpus,
              0,
              1 << 20,
              Long.MAX_VALUE / 4,
              Map.of(),
              "z0",
              "b0",
              "r0",
              gpus));
    }
    return b.build();
  }

  /** Random queues in up to two cohorts, some without; limits and preemption policies. */
  private static TenancyConfig config(SplittableRandom random, long total, List<Resource> flavors) {
    int count = 2 + random.nextInt(3);
    var queues = new ArrayList<QueueSpec>();
    for (int i = 0; i < count; i++) {
      String cohort = random.nextInt(5) == 0 ? null : "c" + random.nextInt(2);
      var quotas = new HashMap<Resource, ResourceQuota>();
      for (Resource flavor : flavors) {
        if (flavors.size() > 1 && random.nextInt(4) == 0) {
          continue; // no quota of this flavor: its jobs never run on it
        }
        long nominal = random.nextLong(total / 2 + 1) + 1;
        ResourceQuota quota = ResourceQuota.of(nominal);
        if (cohort != null && random.nextInt(3) == 0) {
          quota = quota.withBorrowingLimit(random.nextLong(total));
        }
        if (cohort != null && random.nextInt(3) == 0) {
          quota = quota.withLendingLimit(random.nextLong(nominal + 1));
        }
        quotas.put(flavor, quota);
      }
      if (quotas.isEmpty()) {
        quotas.put(flavors.getFirst(), ResourceQuota.of(1 + random.nextLong(total / 2 + 1)));
      }
      var within = random.nextBoolean() ? WithinQueue.LOWER_PRIORITY : WithinQueue.NEVER;
      var reclaim =
          cohort == null
              ? ReclaimWithinCohort.NEVER
              : ReclaimWithinCohort.values()[random.nextInt(3)];
      var borrow =
          reclaim != ReclaimWithinCohort.NEVER && random.nextBoolean()
              ? new BorrowWithinCohort(BorrowWithinCohort.Policy.LOWER_PRIORITY, null)
              : BorrowWithinCohort.NEVER;
      queues.add(
          new QueueSpec(
              "q" + i,
              cohort,
              quotas,
              new PreemptionPolicy(within, reclaim, borrow),
              QueueDefaults.NONE));
    }
    return TenancyConfig.ofQueues(queues);
  }

  /** Recomputes quota usage per flavor from the running jobs' nodes and checks the limits. */
  static void checkQuota(
      ClusterStore store,
      TenancyConfig config,
      List<Resource> flavors,
      String context,
      Coverage.Run coverage) {
    var ledger = new QuotaLedger(config);
    var snapshot = store.snapshot();
    var cluster = snapshot.cluster();
    var perQueue = new HashMap<String, Map<Resource, Long>>();
    for (int i = 0; i < snapshot.runningCount(); i++) {
      var r = snapshot.running(i);
      var placement = r.placement();
      for (int k = 0; k < placement.nodeCount(); k++) {
        var flavor = Resource.gpu(cluster.gpuModel(placement.node(k)));
        long gpus = (long) placement.tasksOn(k) * r.job().spec().gang().shape().gpus();
        perQueue
            .computeIfAbsent(r.job().spec().queue(), _ -> new HashMap<>())
            .merge(flavor, gpus, Long::sum);
      }
    }
    perQueue.forEach((q, usage) -> ledger.add(q, usage));
    ledger.checkInvariants();
    for (Resource flavor : flavors) {
      var cohortUsed = new HashMap<String, Long>();
      var cohortLendable = new HashMap<String, Long>();
      for (QueueSpec q : config.queues()) {
        long usage = perQueue.getOrDefault(q.name(), Map.of()).getOrDefault(flavor, 0L);
        ResourceQuota quota = q.quotas().get(flavor);
        if (quota == null) {
          assertThat(usage)
              .as("%s: queue %s has no quota of %s and uses none", context, q.name(), flavor)
              .isZero();
          continue;
        }
        if (q.cohort() == null) {
          assertThat(usage)
              .as("%s: queue %s (no cohort) within nominal %s", context, q.name(), flavor)
              .isLessThanOrEqualTo(quota.nominal());
          continue;
        }
        if (usage > quota.nominal()) {
          coverage.saw(BORROWED);
        }
        if (quota.borrowingLimit() != null) {
          assertThat(usage)
              .as("%s: queue %s within nominal + borrowingLimit of %s", context, q.name(), flavor)
              .isLessThanOrEqualTo(quota.nominal() + quota.borrowingLimit());
        }
        cohortUsed.merge(q.cohort(), Math.max(0, usage - quota.guaranteed()), Long::sum);
        cohortLendable.merge(q.cohort(), quota.nominal() - quota.guaranteed(), Long::sum);
      }
      cohortUsed.forEach(
          (c, used) ->
              assertThat(used)
                  .as("%s: cohort %s uses no more %s than its members lend", context, c, flavor)
                  .isLessThanOrEqualTo(cohortLendable.get(c)));
    }
  }
}
