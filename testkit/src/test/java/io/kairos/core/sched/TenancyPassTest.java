package io.kairos.core.sched;

import static io.kairos.testkit.Scenario.reservations;
import static io.kairos.testkit.Scenario.reserved;
import static io.kairos.testkit.Scenario.starts;
import static io.kairos.testkit.Scenario.waits;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.kairos.core.fairshare.AccountTree;
import io.kairos.core.fairshare.FairShareFactor;
import io.kairos.core.fairshare.Resources;
import io.kairos.core.fairshare.UsageTracker;
import io.kairos.core.model.JobId;
import io.kairos.core.sched.place.PlacementStrategy;
import io.kairos.core.sched.preempt.PreemptionHistory;
import io.kairos.core.sched.preempt.ProtectionPolicy;
import io.kairos.core.state.ClusterStore;
import io.kairos.core.tenancy.PreemptionPolicy;
import io.kairos.core.tenancy.PreemptionPolicy.BorrowWithinCohort;
import io.kairos.core.tenancy.PreemptionPolicy.ReclaimWithinCohort;
import io.kairos.core.tenancy.PreemptionPolicy.WithinQueue;
import io.kairos.core.tenancy.PriorityClass;
import io.kairos.core.tenancy.QueueDefaults;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.core.tenancy.Resource;
import io.kairos.core.tenancy.ResourceQuota;
import io.kairos.core.tenancy.TenancyConfig;
import io.kairos.core.tenancy.Tenants;
import io.kairos.testkit.Clusters;
import io.kairos.testkit.Jobs;
import io.kairos.testkit.Passes;
import io.kairos.testkit.Scenario;
import io.kairos.testkit.SchedulerHarness;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The pass with tenancy: admission by queue quota together with placement, borrowing and lending in
 * a cohort, the order (priority, non-borrowing first, fair share), preemption (within a queue by
 * priority, reclaim, fair share) with its victim choice, and pending reasons. Clusters here have
 * GPU model "gpu", so quotas are of {@code gpu:gpu}.
 */
class TenancyPassTest {
  private static final Resource GPU = Resource.gpu("gpu");

  private static QueueSpec queue(String name, String cohort, long nominal) {
    return QueueSpec.of(name, cohort, Map.of(GPU, ResourceQuota.of(nominal)));
  }

  private static QueueSpec queue(
      String name, String cohort, ResourceQuota quota, PreemptionPolicy p) {
    return new QueueSpec(name, cohort, Map.of(GPU, quota), p, QueueDefaults.NONE);
  }

  private static Tenants tenants(QueueSpec... queues) {
    return Tenants.of(TenancyConfig.ofQueues(List.of(queues)));
  }

  private static final PreemptionPolicy RECLAIM_ANY =
      new PreemptionPolicy(WithinQueue.NEVER, ReclaimWithinCohort.ANY, BorrowWithinCohort.NEVER);

  private static final PreemptionPolicy WITHIN_QUEUE =
      new PreemptionPolicy(
          WithinQueue.LOWER_PRIORITY, ReclaimWithinCohort.NEVER, BorrowWithinCohort.NEVER);

  static Stream<Scenario> admission() {
    return Stream.of(
        Scenario.named("within nominal quota: starts")
            .cluster(Clusters.oneRack(2, 8))
            .tenants(tenants(queue("a", null, 8)))
            .pending("j", Jobs.gpus(8).queue("a"))
            .expect(starts("j")),
        Scenario.named("over nominal quota without a cohort: QUOTA, though GPUs are free")
            .cluster(Clusters.oneRack(2, 8))
            .tenants(tenants(queue("a", null, 4)))
            .pending("j", Jobs.gpus(8).queue("a"))
            .expect(waits("j", Reason.QUOTA), reservations(0)),
        Scenario.named("a job refused by quota does not hold back later jobs, even under fcfs")
            .cluster(Clusters.oneRack(2, 8))
            .policy(Policy.FCFS)
            .tenants(tenants(queue("a", null, 4), queue("b", null, 8)))
            .pending("big", Jobs.gpus(8).queue("a"))
            .pending("other", Jobs.gpus(8).queue("b"))
            .expect(waits("big", Reason.QUOTA), starts("other")),
        Scenario.named("borrowing: idle quota of the cohort is lent")
            .cluster(Clusters.oneRack(2, 8))
            .tenants(tenants(queue("a", "c", 4), queue("b", "c", 12)))
            .pending("j", Jobs.gpus(16).queue("a"))
            .expect(starts("j")),
        Scenario.named("borrowing limit caps what a queue borrows")
            .cluster(Clusters.oneRack(2, 8))
            .tenants(
                tenants(
                    queue(
                        "a", "c", ResourceQuota.of(4).withBorrowingLimit(4), PreemptionPolicy.NONE),
                    queue("b", "c", 12)))
            .pending("too-big", Jobs.gpus(16).queue("a"))
            .pending("fits", Jobs.gpus(8).queue("a"))
            .expect(waits("too-big", Reason.QUOTA), starts("fits")),
        Scenario.named("lending limit keeps part of the lender's quota for it")
            .cluster(Clusters.oneRack(2, 8))
            .tenants(
                tenants(
                    queue("a", "c", 4),
                    queue(
                        "b", "c", ResourceQuota.of(12).withLendingLimit(4), PreemptionPolicy.NONE)))
            .pending("j", Jobs.gpus(16).queue("a"))
            .pending("k", Jobs.gpus(8).queue("a"))
            .expect(waits("j", Reason.QUOTA), starts("k")),
        Scenario.named("quota is used by running jobs of the queue")
            .cluster(Clusters.oneRack(2, 8))
            .tenants(tenants(queue("a", null, 8)))
            .running("r", Jobs.gpus(4).queue("a").limit(1000))
            .pending("j", Jobs.gpus(8).queue("a"))
            .pending("k", Jobs.gpus(4).queue("a"))
            .expect(waits("j", Reason.QUOTA), starts("k")),
        Scenario.named("jobs started in the pass use quota: the second does not fit")
            .cluster(Clusters.oneRack(4, 8))
            .tenants(tenants(queue("a", null, 8)))
            .pending("first", Jobs.gpus(8).queue("a"))
            .pending("second", Jobs.gpus(8).queue("a"))
            .expect(starts("first"), waits("second", Reason.QUOTA)),
        Scenario.named("an unknown queue waits with QUOTA and holds back nobody")
            .cluster(Clusters.oneRack(2, 8))
            .policy(Policy.FCFS)
            .tenants(tenants(queue("a", null, 16)))
            .pending("lost", Jobs.gpus(1).queue("nope"))
            .pending("j", Jobs.gpus(8).queue("a"))
            .expect(waits("lost", Reason.QUOTA), starts("j")),
        Scenario.named("quota fits but the gang cannot be placed: no quota is charged")
            .cluster(Clusters.oneRack(4, 4))
            .tenants(tenants(queue("a", null, 16), queue("b", null, 16)))
            .running("r", Jobs.gpus(2).queue("b").limit(100))
            .pending("gang", Jobs.perNode(16, 4).queue("a"))
            .pending("small", Jobs.gpus(2).queue("a").limit(50))
            .expect(reserved("gang", 100), starts("small")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("admission")
  void admission(Scenario scenario) {
    scenario.check();
  }

  @Test
  void quotaDetailNamesResourceAndNumbers() {
    var run =
        Scenario.named("detail")
            .cluster(Clusters.oneRack(2, 8))
            .tenants(tenants(queue("a", "c", 4), queue("b", "c", 2)))
            .running("r", Jobs.gpus(6).queue("a").limit(1000))
            .pending("j", Jobs.gpus(4).queue("a"))
            .expect(waits("j", Reason.QUOTA))
            .check();
    assertThat(run.pass().diagnosis().detail(run.id("j")))
        .hasValue("gpu:gpu: queue a uses 6 of nominal 4, cohort lends 0, job needs 4");
  }

  @Test
  void withinNominalGoesBeforeBorrowingAtEqualPriority() {
    // b is at its nominal quota: its job would borrow; a's job is within a's nominal.
    var run =
        Scenario.named("non-borrowing first")
            .cluster(Clusters.oneRack(2, 8))
            .policy(Policy.FCFS)
            .tenants(tenants(queue("a", "c", 8), queue("b", "c", 8)))
            .running("r", Jobs.gpus(8).queue("b").limit(1000))
            .pending("borrower", Jobs.gpus(8).queue("b"))
            .pending("owner", Jobs.gpus(8).queue("a"))
            // Once a's job runs, a lends nothing: the borrower is out of quota.
            .expect(starts("owner"), waits("borrower", Reason.QUOTA))
            .check();
    assertThat(run.pass().diagnosis().job(0).id()).isEqualTo(run.id("owner"));
  }

  @Test
  void fairShareOrdersAccounts() {
    var tree =
        AccountTree.of(
            List.of(
                new AccountTree.Account("heavy", "root", 1),
                new AccountTree.Account("light", "root", 1)));
    var usage = new UsageTracker(tree, new Resources(16, 0, 0), 0);
    usage.decayTo(3_600);
    usage.charge("heavy", new Resources(16, 0, 0), 0, 3_600);
    usage.charge("light", new Resources(1, 0, 0), 0, 3_600);
    var fair = FairShareFactor.classic(usage);
    var t = tenants(queue("a", null, 16)).withFairShare(fair);
    var run =
        Scenario.named("fair share")
            .cluster(Clusters.oneRack(1, 8))
            .policy(Policy.FCFS)
            .tenants(t)
            .pending("h", Jobs.gpus(8).queue("a").account("heavy"))
            .pending("l", Jobs.gpus(8).queue("a").account("light"))
            .expect(starts("l"), waits("h", Reason.INSUFFICIENT_GPUS))
            .check();
    assertThat(run.pass().diagnosis().job(0).id()).isEqualTo(run.id("l"));
  }

  @Test
  void priorityGoesBeforeFairShare() {
    var tree =
        AccountTree.of(
            List.of(
                new AccountTree.Account("x", "root", 1), new AccountTree.Account("y", "root", 1)));
    var usage = new UsageTracker(tree, new Resources(8, 0, 0), 0);
    usage.decayTo(3_600);
    usage.charge("x", new Resources(8, 0, 0), 0, 3_600);
    var t = tenants(queue("a", null, 16)).withFairShare(FairShareFactor.classic(usage));
    Scenario.named("priority first")
        .cluster(Clusters.oneRack(1, 8))
        .policy(Policy.FCFS)
        .tenants(t)
        .pending("low", Jobs.gpus(8).queue("a").account("y"))
        .pending("high", Jobs.gpus(8).queue("a").account("x").priority(10))
        .expect(starts("high"), waits("low", Reason.INSUFFICIENT_GPUS))
        .check();
  }

  // ---- preemption -----------------------------------------------------------------------------

  static Stream<Scenario> preemption() {
    return Stream.of(
        Scenario.named("within queue: a higher-priority job preempts a lower one")
            .cluster(Clusters.oneRack(1, 8))
            .tenants(tenants(queue("a", null, ResourceQuota.of(8), WITHIN_QUEUE)))
            .running("low", Jobs.gpus(8).queue("a").limit(10_000))
            .pendingAt(100, "high", Jobs.gpus(8).queue("a").priority(10))
            .expect(waits("high", Reason.PREEMPTING)),
        Scenario.named("within queue: equal priority preempts nothing")
            .cluster(Clusters.oneRack(1, 8))
            .tenants(tenants(queue("a", null, ResourceQuota.of(8), WITHIN_QUEUE)))
            .running("r", Jobs.gpus(8).queue("a").limit(10_000))
            .pendingAt(100, "same", Jobs.gpus(8).queue("a"))
            .expect(waits("same", Reason.QUOTA)),
        Scenario.named("queue without a preemption policy preempts nothing")
            .cluster(Clusters.oneRack(1, 8))
            .tenants(tenants(queue("a", null, 8)))
            .running("low", Jobs.gpus(8).queue("a").limit(10_000))
            .pendingAt(100, "high", Jobs.gpus(8).queue("a").priority(10))
            .expect(waits("high", Reason.QUOTA)),
        Scenario.named("reclaim: a queue takes back its nominal quota from a borrower")
            .cluster(Clusters.oneRack(2, 8))
            .tenants(tenants(queue("a", "c", 8), queue("b", "c", ResourceQuota.of(8), RECLAIM_ANY)))
            .running("borrower", Jobs.gpus(16).queue("a").limit(10_000))
            .pendingAt(100, "owner", Jobs.gpus(8).queue("b"))
            .expect(waits("owner", Reason.PREEMPTING)),
        Scenario.named("no reclaim while the victim is protected (runs < 30 s)")
            .cluster(Clusters.oneRack(2, 8))
            .tenants(tenants(queue("a", "c", 8), queue("b", "c", ResourceQuota.of(8), RECLAIM_ANY)))
            .running("borrower", Jobs.gpus(16).queue("a").limit(10_000))
            .pendingAt(10, "owner", Jobs.gpus(8).queue("b"))
            .expect(waits("owner", Reason.QUOTA)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("preemption")
  void preemption(Scenario scenario) {
    scenario.check();
  }

  @Test
  void reclaimPreemptsTheBorrowerAndNamesIt() {
    var run =
        Scenario.named("reclaim")
            .cluster(Clusters.oneRack(2, 8))
            .tenants(tenants(queue("a", "c", 8), queue("b", "c", ResourceQuota.of(8), RECLAIM_ANY)))
            .running("own", Jobs.gpus(8).queue("a").limit(10_000))
            .running("borrowed", Jobs.gpus(8).queue("a").limit(10_000))
            .pendingAt(100, "owner", Jobs.gpus(8).queue("b"))
            .check();
    var preemptions = run.pass().preemptions();
    assertThat(preemptions).hasSize(1);
    var p = preemptions.getFirst();
    assertThat(p.preemptor()).isEqualTo(run.id("owner"));
    assertThat(p.kind()).isEqualTo(Decision.PreemptionKind.RECLAIM);
    // Either of a's jobs frees what b needs; the planner takes exactly one.
    assertThat(List.of(run.id("own"), run.id("borrowed"))).contains(p.job());
    assertThat(run.pass().diagnosis().detail(run.id("owner")).orElseThrow())
        .startsWith("waits for job [" + p.job().value() + "] to stop");
  }

  @Test
  void victimSetFreesOneNodeNotScatteredJobs() {
    // Node 0 holds eight 1-GPU jobs, node 1 one 8-GPU job, all low priority. An 8-GPU gang on
    // one node needs either all eight small ones or the big one: the planner takes the one.
    var run =
        Scenario.named("one victim")
            .cluster(Clusters.oneRack(2, 8))
            .tenants(tenants(queue("a", null, ResourceQuota.of(16), WITHIN_QUEUE)))
            .running("s1", Jobs.gpus(1).queue("a").limit(10_000))
            .running("s2", Jobs.gpus(1).queue("a").limit(10_000))
            .running("s3", Jobs.gpus(1).queue("a").limit(10_000))
            .running("s4", Jobs.gpus(1).queue("a").limit(10_000))
            .running("s5", Jobs.gpus(1).queue("a").limit(10_000))
            .running("s6", Jobs.gpus(1).queue("a").limit(10_000))
            .running("s7", Jobs.gpus(1).queue("a").limit(10_000))
            .running("s8", Jobs.gpus(1).queue("a").limit(10_000))
            .running("big", Jobs.gpus(8).queue("a").limit(10_000))
            .pendingAt(100, "gang", Jobs.perNode(8, 8).queue("a").priority(5))
            .check();
    assertThat(run.pass().preemptions())
        .extracting(Decision.Preempt::job)
        .containsExactly(run.id("big"));
  }

  @Test
  void nonPreemptibleClassIsNeverAVictim() {
    var config =
        new TenancyConfig(
            List.of(new PriorityClass("prod", 0, false)),
            List.of(),
            List.of(queue("a", null, ResourceQuota.of(8), WITHIN_QUEUE)));
    Scenario.named("prod is safe")
        .cluster(Clusters.oneRack(1, 8))
        .tenants(Tenants.of(config))
        .running("prod", Jobs.gpus(8).queue("a").priorityClass("prod").limit(10_000))
        .pendingAt(100, "high", Jobs.gpus(8).queue("a").priority(10))
        .expect(waits("high", Reason.QUOTA))
        .check();
  }

  @Test
  void noNewPreemptionWhileVictimsStop() {
    var base = tenants(queue("a", null, ResourceQuota.of(8), WITHIN_QUEUE));
    var first =
        Scenario.named("first")
            .cluster(Clusters.oneRack(1, 8))
            .tenants(base)
            .running("low", Jobs.gpus(8).queue("a").limit(10_000))
            .pendingAt(100, "high", Jobs.gpus(8).queue("a").priority(10))
            .check();
    var victim = first.pass().preemptions().getFirst().job();
    var inFlight =
        new Tenants(
            base.config(), null, Map.of(), Map.of(victim, first.id("high")), base.settings());
    var run =
        Scenario.named("in flight")
            .cluster(Clusters.oneRack(1, 8))
            .tenants(inFlight)
            .running("low", Jobs.gpus(8).queue("a").limit(10_000))
            .pendingAt(100, "high", Jobs.gpus(8).queue("a").priority(10))
            .expect(waits("high", Reason.PREEMPTING))
            .check();
    assertThat(run.pass().preemptions()).isEmpty();
  }

  @Test
  void oftenPreemptedJobIsProtected() {
    var base = tenants(queue("a", null, ResourceQuota.of(8), WITHIN_QUEUE));
    // Job 1 (the first submitted: "low") was preempted three times in the last hour.
    var policy = ProtectionPolicy.DEFAULT;
    var history = PreemptionHistory.NONE;
    for (long t : new long[] {0, 10, 20}) {
      history = policy.record(history, t);
    }
    var t =
        new Tenants(base.config(), null, Map.of(new JobId(1), history), Map.of(), base.settings());
    Scenario.named("protected")
        .cluster(Clusters.oneRack(1, 8))
        .tenants(t)
        .running("low", Jobs.gpus(8).queue("a").limit(10_000))
        .pendingAt(100, "high", Jobs.gpus(8).queue("a").priority(10))
        .expect(waits("high", Reason.QUOTA))
        .check();
  }

  @Test
  void largeGangStarvationGuardGivesTheReservation() {
    // Two 4-GPU jobs keep arriving in front of a 16-GPU gang under sjf; after the guard's wait the
    // gang goes first and holds the reservation.
    var settings = new Tenants.Settings(ProtectionPolicy.DEFAULT, 30, 16, 1_000);
    var config = TenancyConfig.ofQueues(List.of(queue("a", null, 64)));
    var t = new Tenants(config, null, Map.of(), Map.of(), settings);
    var run =
        Scenario.named("guard")
            .cluster(Clusters.oneRack(4, 4))
            .policy(Policy.SJF)
            .tenants(t)
            .running("r", Jobs.gpus(8).queue("a").limit(5_000))
            .pending("gang", Jobs.gpus(16).queue("a").limit(10_000))
            .pendingAt(2_000, "short", Jobs.gpus(8).queue("a").limit(100))
            .expect(reserved("gang", 5_000))
            .check();
    assertThat(Passes.start(run.pass(), run.id("short"))).isPresent();
    assertThat(run.pass().diagnosis().job(0).id()).isEqualTo(run.id("gang"));
  }

  // ---- flavors, other resources, other preemption kinds ----------------------------------------

  /** Node n0 has 8 A100s, n1 8 H100s. */
  private static io.kairos.core.model.Cluster twoModels() {
    return Clusters.builder()
        .add(
            new io.kairos.core.model.NodeSpec(
                "n0", "A100", 8, 0, 64, 1L << 40, Map.of(), "z", "b", "r", 8))
        .add(
            new io.kairos.core.model.NodeSpec(
                "n1", "H100", 8, 0, 64, 1L << 40, Map.of(), "z", "b", "r", 8))
        .build();
  }

  private static QueueSpec flavored(String name, long a100, long h100) {
    var quotas = new java.util.HashMap<Resource, ResourceQuota>();
    if (a100 >= 0) {
      quotas.put(Resource.gpu("A100"), ResourceQuota.of(a100));
    }
    if (h100 >= 0) {
      quotas.put(Resource.gpu("H100"), ResourceQuota.of(h100));
    }
    return QueueSpec.of(name, null, quotas);
  }

  static Stream<Scenario> flavors() {
    return Stream.of(
        Scenario.named("a job without a model goes to the flavor its queue has quota of")
            .cluster(twoModels())
            .tenants(tenants(flavored("a", -1, 8)))
            .pending("j", Jobs.gpus(8).queue("a"))
            .expect(Scenario.startsOn("j", 1)),
        Scenario.named("first flavor in resource order (A100) when both have quota")
            .cluster(twoModels())
            .tenants(tenants(flavored("a", 8, 8)))
            .pending("j", Jobs.gpus(8).queue("a"))
            .expect(Scenario.startsOn("j", 0)),
        Scenario.named("the next flavor when the first has no quota left")
            .cluster(twoModels())
            .tenants(tenants(flavored("a", 4, 8)))
            .pending("j", Jobs.gpus(8).queue("a"))
            .expect(Scenario.startsOn("j", 1)),
        Scenario.named("the next flavor when the first has no room")
            .cluster(twoModels())
            .tenants(tenants(flavored("a", 16, 16), flavored("b", 16, 16)))
            .running("r", Jobs.gpus(4).queue("b").model("A100").limit(1000))
            .pending("j", Jobs.gpus(8).queue("a"))
            .expect(Scenario.startsOn("j", 1)),
        Scenario.named("a gang no single flavor can hold never fits, and holds back no one")
            .cluster(twoModels())
            .policy(Policy.FCFS)
            .tenants(tenants(flavored("a", 16, 16)))
            .pending("spans-models", Jobs.gpus(16).queue("a"))
            .pending("next", Jobs.gpus(8).queue("a"))
            .expect(waits("spans-models", Reason.NEVER_FITS), starts("next")),
        Scenario.named(
                "a job without a model neither starts across flavors nor reserves across them")
            .cluster(twoModels())
            .tenants(tenants(flavored("a", 16, 16), flavored("b", 16, 16)))
            // 4 A100s and 4 H100s are free now: 8 in total, but no flavor has 8.
            .running("a100", Jobs.gpus(4).queue("b").model("A100").limit(100))
            .running("h100", Jobs.gpus(4).queue("b").model("H100").limit(500))
            .pending("whole-node", Jobs.gpus(8).queue("a"))
            .expect(reserved("whole-node", 100)),
        Scenario.named("a job naming a model its queue has no quota of: QUOTA")
            .cluster(twoModels())
            .tenants(tenants(flavored("a", 8, -1)))
            .pending("j", Jobs.gpus(8).queue("a").model("H100"))
            .expect(waits("j", Reason.QUOTA)),
        Scenario.named("CPU quota counts tasks x CPUs")
            .cluster(Clusters.oneRack(2, 8))
            .tenants(
                tenants(
                    QueueSpec.of(
                        "a",
                        null,
                        Map.of(GPU, ResourceQuota.of(16), Resource.CPUS, ResourceQuota.of(10)))))
            .pending(
                "cpu-heavy",
                Jobs.gang(
                        new io.kairos.core.model.GangSpec(
                            2, new io.kairos.core.model.TaskShape(1, 8, 0), false))
                    .queue("a"))
            .pending(
                "light",
                Jobs.gang(
                        new io.kairos.core.model.GangSpec(
                            2, new io.kairos.core.model.TaskShape(1, 4, 0), false))
                    .queue("a"))
            .expect(waits("cpu-heavy", Reason.QUOTA), starts("light")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("flavors")
  void flavors(Scenario scenario) {
    scenario.check();
  }

  @Test
  void fairSharePreemptsTheMostOverServedAccount() {
    var tree =
        AccountTree.of(
            List.of(
                new AccountTree.Account("hog", "root", 1),
                new AccountTree.Account("mild", "root", 1),
                new AccountTree.Account("starved", "root", 1)));
    var usage = new UsageTracker(tree, new Resources(8, 0, 0), 0);
    usage.decayTo(3_600);
    usage.charge("hog", new Resources(8, 0, 0), 0, 3_600);
    usage.charge("mild", new Resources(2, 0, 0), 0, 3_600);
    var policy =
        new PreemptionPolicy(
            WithinQueue.NEVER,
            ReclaimWithinCohort.NEVER,
            BorrowWithinCohort.NEVER,
            PreemptionPolicy.FairShare.OVER_SERVED);
    var t =
        tenants(queue("a", null, ResourceQuota.of(16), policy))
            .withFairShare(FairShareFactor.classic(usage));
    var run =
        Scenario.named("fair share")
            .cluster(Clusters.oneRack(1, 8))
            .tenants(t)
            .running("mild-job", Jobs.gpus(4).queue("a").account("mild").limit(10_000))
            .running("hog-job", Jobs.gpus(4).queue("a").account("hog").limit(10_000))
            .pendingAt(100, "s", Jobs.gpus(4).queue("a").account("starved"))
            .expect(waits("s", Reason.PREEMPTING))
            .check();
    assertThat(run.pass().preemptions())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.job()).isEqualTo(run.id("hog-job"));
              assertThat(p.kind()).isEqualTo(Decision.PreemptionKind.FAIR_SHARE);
            });
  }

  @Test
  void borrowWithinCohortPreemptsLowerPriorityOnly() {
    var policy =
        new PreemptionPolicy(
            WithinQueue.NEVER,
            ReclaimWithinCohort.LOWER_PRIORITY,
            new BorrowWithinCohort(BorrowWithinCohort.Policy.LOWER_PRIORITY, null));
    // a holds its nominal 8 and wants 8 more (to borrow); b's two jobs hold b's nominal 8.
    var run =
        Scenario.named("borrow")
            .cluster(Clusters.oneRack(3, 8))
            .tenants(tenants(queue("a", "c", ResourceQuota.of(8), policy), queue("b", "c", 16)))
            .running("mine", Jobs.gpus(8).queue("a").limit(10_000))
            .running("low", Jobs.gpus(8).queue("b").limit(10_000))
            .running("high", Jobs.gpus(8).queue("b").priority(9).limit(10_000))
            .pendingAt(100, "want", Jobs.gpus(8).queue("a").priority(5))
            .check();
    assertThat(run.pass().preemptions())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.job()).isEqualTo(run.id("low"));
              assertThat(p.kind()).isEqualTo(Decision.PreemptionKind.BORROW);
            });
  }

  @Test
  void withoutTenancyThePassIsUnchanged() {
    // Same jobs, a tenancy whose one queue has ample quota: same starts as with no tenancy.
    var plain =
        Scenario.named("plain")
            .cluster(Clusters.oneRack(4, 4))
            .running("r", Jobs.gpus(6).queue("a").limit(100))
            .pending("x", Jobs.gpus(12).queue("a"))
            .pending("y", Jobs.gpus(4).queue("a").limit(50))
            .pending("z", Jobs.gpus(4).queue("a"))
            .check();
    var ample =
        Scenario.named("ample")
            .cluster(Clusters.oneRack(4, 4))
            .tenants(tenants(queue("a", null, 1_000)))
            .running("r", Jobs.gpus(6).queue("a").limit(100))
            .pending("x", Jobs.gpus(12).queue("a"))
            .pending("y", Jobs.gpus(4).queue("a").limit(50))
            .pending("z", Jobs.gpus(4).queue("a"))
            .check();
    assertThat(ample.pass().starts()).isEqualTo(plain.pass().starts());
    assertThat(ample.pass().reservations()).isEqualTo(plain.pass().reservations());
  }

  @Test
  void noTenancyAdmitsEveryJobButATenancyOfNoQueuesAdmitsNone() {
    // Tenants.none() is the single-tenant pass, not an enabled tenancy that happens to be empty.
    var none =
        Scenario.named("none")
            .cluster(Clusters.oneRack(1, 8))
            .tenants(Tenants.none())
            .pending("j", Jobs.gpus(4).queue("a"))
            .expect(starts("j"))
            .check();
    var noQueues =
        Scenario.named("no queues")
            .cluster(Clusters.oneRack(1, 8))
            .tenants(tenants())
            .pending("j", Jobs.gpus(4).queue("a"))
            .expect(waits("j", Reason.QUOTA))
            .check();
    assertThat(none.pass().diagnosis().detail(0)).isEmpty();
    assertThat(noQueues.pass().diagnosis().detail(0))
        .hasValue("queue 'a' is not configured (fix: submit to one of [])");
    assertThat(Tenants.none()).isNotEqualTo(tenants());
  }

  @Test
  void aPassInputAlwaysCarriesATenancy() {
    var snapshot = new ClusterStore(Clusters.oneRack(1, 8)).snapshot();
    assertThat(new PassInput(snapshot, 0, 0).tenants()).isSameAs(Tenants.none());
    assertThatNullPointerException().isThrownBy(() -> new PassInput(snapshot, 0, 0, null));
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                new Tenants(
                    tenants(queue("a", null, 8)).config(),
                    null,
                    Map.of(),
                    Map.of(),
                    Tenants.Settings.DEFAULT,
                    false));
  }

  @Test
  void preemptionPlansPlaceAsThePassDoes() {
    // Nodes of 1, 2 and 4 GPUs in one rack, all busy; a gang of four one-GPU tasks may preempt
    // within its queue. Victim order (equal priority and start): a (n1, 2 GPUs), b (n0), c (n2, 3
    // GPUs), d (n2). Freeing a, b and c makes room; the placement on what they free decides which
    // of them are kept. Topology: n2's three GPUs and the best fit for the fourth task, n0, so a
    // is spared. First fit: nodes in index order, n0 and n1 first, and of those only b can be put
    // back, so a goes.
    var cluster =
        Clusters.builder().node("b", "r", 1, 1).node("b", "r", 2, 2).node("b", "r", 4, 4).build();
    var tenants = tenants(queue("default", null, ResourceQuota.of(8), WITHIN_QUEUE));
    for (var strategy : PlacementStrategy.values()) {
      var h = SchedulerHarness.of(cluster);
      var a = h.occupy(1, 0b11, 100_000);
      var b = h.occupy(0, 0b1, 100_000);
      var c = h.occupy(2, 0b111, 100_000);
      h.occupy(2, 0b1000, 100_000);
      h.advanceTo(10_000);
      var preemptor = h.submit(Jobs.gpus(4).priority(10));

      var pass =
          new SchedulingPass(Policy.EASY, strategy)
              .run(new PassInput(h.store().snapshot(), h.nowSec(), 0, tenants));

      assertThat(pass.preemptions()).allMatch(p -> p.preemptor().equals(preemptor));
      assertThat(pass.preemptions().stream().map(Decision.Preempt::job))
          .as("victims with %s", strategy)
          .containsExactlyInAnyOrderElementsOf(
              switch (strategy) {
                case TOPOLOGY -> List.of(b, c);
                case FIRST_FIT -> List.of(a, c);
              });
    }
  }
}
