package io.kairos.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kairos.config.Tenancy;
import io.kairos.config.TenancyYaml;
import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.sim.trace.Trace;
import io.kairos.sim.trace.TraceJob;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The simulator under a tenancy file: preemptions applied (grace, checkpoint, requeue), the
 * per-queue figures and the fairness indexes on hand-computed cases, determinism.
 */
class TenancySimulatorTest {
  private static final Policy KAIROS = Policy.byName("kairos").orElseThrow();
  private static final Policy FCFS = Policy.byName("fcfs").orElseThrow();

  /** Two queues of 4 GPUs lending to each other; b reclaims its lent quota from borrowers. */
  private static Tenancy reclaim(String grace) {
    return TenancyYaml.parse(
        """
        cohorts: [c]
        queues:
          - {name: a, cohort: c, quotas: {gpu:gpu: {nominal: 4}}, defaults: {account: a}}
          - name: b
            cohort: c
            quotas: {gpu:gpu: {nominal: 4}}
            preemption: {reclaimWithinCohort: ANY}
            defaults: {account: b}
        accounts: [{name: a}, {name: b}]
        scheduling: {preemptionGrace: %s}
        """
            .formatted(grace),
        "test.yaml");
  }

  private static TraceJob job(long id, long submit, int gpus, long duration, String queue) {
    return new TraceJob(id, submit, gpus, duration, duration, "", queue, 0, 0);
  }

  private static SimReport run(
      Cluster cluster, Policy policy, Optional<SimTenancy> tenancy, boolean check, Trace trace) {
    var options = new SimOptions(check, Optional.empty(), true, 1, false).withTenancy(tenancy);
    return new Simulator(cluster, "test", policy, options).run(trace);
  }

  /**
   * A preemption case. Job 1 (queue a, 8 GPUs, borrowing 4 of b's) starts at 0; job 2 (queue b, 4
   * GPUs, 100 s) arrives later and reclaims. Expected: when job 2 starts, when job 1 ends, the
   * GPU-seconds lost at the stop, and whether job 1 was requeued.
   */
  record Case(
      String name,
      long victimDuration,
      long preemptorSubmit,
      String grace,
      long checkpointSec,
      long preemptorStart,
      long victimEnd,
      double lostGpuSec,
      int requeued) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Case> preemptions() {
    return Stream.of(
        // Signalled at 100, stops at 130 after 130 s of run: checkpoints at 60 and 120 saved 120
        // s; 10 s x 8 GPUs lost. Job 2 runs 130..230; job 1 resumes at 230 with 9,880 s left.
        new Case("resumes from its last checkpoint", 10_000, 100, "30s", 60, 130, 10_110, 80, 1),
        new Case("never checkpoints: starts over", 10_000, 100, "30s", 0, 130, 10_230, 1040, 1),
        new Case(
            "stops before its first checkpoint", 10_000, 100, "30s", 1800, 130, 10_230, 1040, 1),
        // Grace 0: stops at 100, exactly at its second checkpoint: nothing lost.
        new Case("no grace, stops on a checkpoint", 10_000, 100, "0s", 50, 100, 10_100, 0, 1),
        // Ends at 110, within its grace (until 130): finishes, is not requeued; job 2 starts then.
        new Case("finishes within its grace", 110, 100, "30s", 60, 110, 110, 0, 0),
        // Arrives at 10 while job 1 is protected (30 s minimum run): the pass a minute later
        // (t=70) preempts; stop at 100 after 100 s run, checkpoint at 60: 40 s x 8 lost. Job 2
        // runs 100..200; job 1 resumes at 200 with 9,940 s left.
        new Case(
            "protected at first, preempted by a later pass",
            10_000,
            10,
            "30s",
            60,
            100,
            10_140,
            320,
            1));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("preemptions")
  void aPreemptedJobStopsAfterItsGraceAndResumesFromItsCheckpoint(Case c) {
    var tenancy =
        SimTenancy.scheduling(reclaim(c.grace())).withCheckpointEverySec(c.checkpointSec());
    var trace =
        SimTestTraces.of(
            job(1, 0, 8, c.victimDuration(), "a"), job(2, c.preemptorSubmit(), 4, 100, "b"));

    SimReport r = run(Cluster.uniform(2, 4, 16, 8), KAIROS, Optional.of(tenancy), true, trace);

    var jobs = r.perJob().orElseThrow();
    var t = r.tenancy().orElseThrow();
    assertThat(jobs.startSec()[0]).as("victim's first start").isZero();
    assertThat(jobs.startSec()[1]).as("preemptor's start").isEqualTo(c.preemptorStart());
    assertThat(jobs.endSec()[1]).isEqualTo(c.preemptorStart() + 100);
    assertThat(jobs.endSec()[0]).as("victim's end").isEqualTo(c.victimEnd());
    assertThat(t.preemptions()).isEqualTo(1);
    assertThat(t.requeued()).isEqualTo(c.requeued());
    assertThat(t.preemptionGpuHoursLost()).isCloseTo(c.lostGpuSec() / 3600, within(1e-9));
    var a = t.queues().getFirst();
    assertThat(a.name()).isEqualTo("a");
    assertThat(a.preemptions()).isEqualTo(c.requeued());
    assertThat(a.lostGpuHours()).isCloseTo(c.lostGpuSec() / 3600, within(1e-9));
    // The victim's wait is the time it did not run: requeued, it waited while job 2 ran.
    assertThat(a.meanWaitSec()).isEqualTo(c.requeued() == 1 ? 100.0 : 0.0);
    // Its account (queue a's default) suffered the same.
    var account = t.accounts().getFirst();
    assertThat(account.name()).isEqualTo("a");
    assertThat(account.preemptions()).isEqualTo(c.requeued());
    assertThat(account.lostGpuHours()).isCloseTo(c.lostGpuSec() / 3600, within(1e-9));
    assertThat(t.accounts().get(1).preemptions()).isZero();
  }

  private static TraceJob userJob(
      long id, long submit, int gpus, long duration, String user, String queue) {
    return new TraceJob(id, submit, gpus, duration, duration, user, queue, 0, 0);
  }

  /**
   * Alice and bob share queue {@code shared} (no default account: each is charged to an account
   * named after them, which the file does not declare); carol's job goes to queue {@code solo},
   * charged to its default account {@code solo-acct}. One node of 4 GPUs, FCFS, measured only: job
   * 1 (alice, 4 GPUs, 100 s) runs 0..100; job 2 (bob, 2 GPUs, 50 s) and job 3 (alice, arrives at
   * 10, 2 GPUs, 30 s) run from 100; job 4 (carol, arrives at 20, 1 GPU, 10 s) waits for job 3's
   * GPUs and runs 130..140.
   *
   * <p>alice: waits 0 and 90, JCTs 100 and 120, 4 x 100 + 2 x 30 = 460 GPU-s. bob: wait 100, JCT
   * 150, 100 GPU-s. solo-acct: wait 110, JCT 120, 10 GPU-s.
   */
  private static final String SHARED =
      """
      queues:
        - {name: shared, quotas: {gpu:gpu: {nominal: 4}}}
        - {name: solo, quotas: {gpu:gpu: {nominal: 0}}, defaults: {account: solo-acct}}
      accounts: [{name: dave}, {name: solo-acct}]
      """;

  private static Trace sharedQueueTrace() {
    return SimTestTraces.of(
        userJob(1, 0, 4, 100, "alice", "shared"),
        userJob(2, 0, 2, 50, "bob", "shared"),
        userJob(3, 10, 2, 30, "alice", "shared"),
        userJob(4, 20, 1, 10, "carol", "solo"));
  }

  @Test
  void perAccountFiguresOfTwoUsersSharingAQueue() {
    var tenancy = SimTenancy.scheduling(TenancyYaml.parse(SHARED, "test.yaml")).measuredOnly();

    SimReport r =
        run(Cluster.uniform(1, 4, 16, 8), FCFS, Optional.of(tenancy), false, sharedQueueTrace());

    assertThat(r.perJob().orElseThrow().startSec()).containsExactly(0, 100, 100, 130);
    var t = r.tenancy().orElseThrow();
    // dave has no jobs: not listed. Accounts in the file's order, then the others as they appear.
    assertThat(t.accounts())
        .extracting(TenancyReport.AccountReport::name)
        .containsExactly("solo-acct", "alice", "bob");
    assertThat(t.accounts().get(1))
        .isEqualTo(
            new TenancyReport.AccountReport(
                "alice", List.of("shared"), 2, 460 / 3600.0, 45, 90, 110, 0, 0, Double.NaN));
    assertThat(t.accounts().get(2))
        .isEqualTo(
            new TenancyReport.AccountReport(
                "bob", List.of("shared"), 1, 100 / 3600.0, 100, 100, 150, 0, 0, Double.NaN));
    assertThat(t.accounts().get(0))
        .isEqualTo(
            new TenancyReport.AccountReport(
                "solo-acct", List.of("solo"), 1, 10 / 3600.0, 110, 110, 120, 0, 0, Double.NaN));
    assertThat(t.accountsAreQueues()).isFalse();
  }

  @Test
  void perAccountFiguresInJson() throws Exception {
    var tenancy = SimTenancy.scheduling(TenancyYaml.parse(SHARED, "test.yaml")).measuredOnly();
    SimReport r =
        run(Cluster.uniform(1, 4, 16, 8), FCFS, Optional.of(tenancy), false, sharedQueueTrace());

    var json = new ObjectMapper().valueToTree(r.toMap(false)).get("tenancy");

    assertThat(json.get("queues")).hasSize(2);
    var alice = json.get("accounts").get(1);
    assertThat(alice.toString())
        .isEqualTo(
            "{\"account\":\"alice\",\"queues\":[\"shared\"],\"jobs\":2,\"gpu_hours\":0.128,"
                + "\"mean_wait_s\":45.0,\"p99_wait_s\":90,\"mean_jct_s\":110.0,\"preemptions\":0,"
                + "\"lost_gpu_hours\":0.0,\"fair_share_factor\":null}");
  }

  @Test
  void scheduledRunsReportEachAccountsFinalFairShareFactor() {
    var tenancy = SimTenancy.scheduling(TenancyYaml.parse(SHARED, "test.yaml"));

    SimReport r =
        run(Cluster.uniform(1, 4, 16, 8), KAIROS, Optional.of(tenancy), true, sharedQueueTrace());

    var accounts = r.tenancy().orElseThrow().accounts();
    assertThat(accounts)
        .extracting(TenancyReport.AccountReport::name)
        .containsExactly("solo-acct", "alice", "bob");
    // Alice used the most GPU time, so her factor is the lowest; solo-acct (nominal 0: its job
    // never starts) used nothing. All are in (0, 1].
    double alice = accounts.get(1).fairShareFactor();
    double bob = accounts.get(2).fairShareFactor();
    assertThat(alice).isGreaterThan(0).isLessThan(bob);
    assertThat(bob).isLessThan(accounts.get(0).fairShareFactor());
    assertThat(accounts.get(0).fairShareFactor()).isEqualTo(1.0);
    assertThat(accounts.get(0).jobs()).isZero();
    assertThat(accounts.get(1).gpuHours()).isCloseTo(460 / 3600.0, within(1e-12));
  }

  @Test
  void withoutTenancySchedulingNobodyIsPreempted() {
    var tenancy = SimTenancy.scheduling(reclaim("30s")).measuredOnly();
    var trace = SimTestTraces.of(job(1, 0, 8, 10_000, "a"), job(2, 100, 4, 100, "b"));

    SimReport r = run(Cluster.uniform(2, 4, 16, 8), KAIROS, Optional.of(tenancy), true, trace);

    assertThat(r.perJob().orElseThrow().startSec()).containsExactly(0, 10_000);
    assertThat(r.tenancy().orElseThrow().preemptions()).isZero();
    assertThat(r.tenancy().orElseThrow().scheduled()).isFalse();
  }

  /**
   * One node of 4 GPUs; a and b are entitled to 2 each, c to 2 with no jobs, d to 0 with one. FCFS:
   * a's 4-GPU job runs 0..100; b's and d's 2-GPU jobs wait, then run from 100.
   *
   * <p>Served fractions: a wanted 4 (entitled 2) on [0,100) and had 4: x_a = 200/200 = 1. b wanted
   * 2 (entitled 2) on [0,200) and had them on [100,200): x_b = 200/400 = 0.5. c never wanted
   * anything, d is entitled to nothing: both left out. Jain = 1.5^2 / (2 x 1.25) = 0.9.
   *
   * <p>Alone: a on round(2/4) = 1 node of 4 GPUs runs in 100 s (ρ = 100/100 = 1); b alone runs at
   * once, JCT 100, against 200 shared (ρ = 2): the worst queue is b.
   */
  @Test
  void servedFractionsJainIndexAndFinishTimeFairnessOfAHandComputedCase() {
    Tenancy tenancy =
        TenancyYaml.parse(
            """
            queues:
              - {name: a, quotas: {gpu:gpu: {nominal: 2}}}
              - {name: b, quotas: {gpu:gpu: {nominal: 2}}}
              - {name: c, quotas: {gpu:gpu: {nominal: 2}}}
              - {name: d, quotas: {gpu:gpu: {nominal: 0}}}
            """,
            "test.yaml");
    var trace =
        SimTestTraces.of(
            job(1, 0, 4, 100, "a"),
            job(2, 0, 2, 100, "b"),
            job(3, 0, 2, 10, "d"),
            job(4, 0, 1, 10, "nowhere"));

    SimReport r =
        run(
            Cluster.uniform(1, 4, 16, 8),
            FCFS,
            Optional.of(SimTenancy.scheduling(tenancy).measuredOnly()),
            false,
            trace);

    // FCFS: 1 at 0; 2 and 3 (2 GPUs each) at 100; the job of an undeclared queue is skipped.
    assertThat(r.perJob().orElseThrow().startSec()).containsExactly(0, 100, 100);
    assertThat(r.notes()).anyMatch(n -> n.startsWith("1 jobs of queues the tenancy file does not"));
    var t = r.tenancy().orElseThrow();
    var q = t.queues();
    assertThat(q).extracting(TenancyReport.QueueReport::name).containsExactly("a", "b", "c", "d");
    assertThat(q.get(0).servedFraction()).isEqualTo(1.0);
    assertThat(q.get(1).servedFraction()).isEqualTo(0.5);
    assertThat(q.get(2).servedFraction()).isNaN();
    assertThat(q.get(3).servedFraction()).isNaN();
    assertThat(t.jainIndex()).isCloseTo(0.9, within(1e-12));
    assertThat(q.get(1).meanWaitSec()).isEqualTo(100);
    assertThat(q.get(1).meanJctSec()).isEqualTo(200);
    assertThat(q.get(0).gpuHours()).isCloseTo(400 / 3600.0, within(1e-12));
    assertThat(q.get(0).entitlement()).isEqualTo(0.5);
    assertThat(q.get(0).finishTimeFairness()).isEqualTo(1.0);
    assertThat(q.get(1).finishTimeFairness()).isEqualTo(2.0);
    assertThat(q.get(3).finishTimeFairness()).as("no nominal GPUs: not computed").isNaN();
    assertThat(t.worstQueue()).isEqualTo("b");
    assertThat(t.worstFinishTimeFairness()).isEqualTo(2.0);
  }

  @Test
  void jainIndexOfKnownValues() {
    assertThat(TenancyReport.jain(new double[] {1, 0.5})).isCloseTo(0.9, within(1e-12));
    assertThat(TenancyReport.jain(new double[] {1, 1, 1})).isEqualTo(1.0);
    // One of k served, the others not at all: 1/k.
    assertThat(TenancyReport.jain(new double[] {1, 0, Double.NaN, 0, 0})).isEqualTo(0.25);
    assertThat(TenancyReport.jain(new double[] {Double.NaN})).isNaN();
  }

  @Test
  void largeGangsMaxWaitIsMeasured() {
    Tenancy tenancy =
        TenancyYaml.parse("queues: [{name: a, quotas: {gpu:gpu: {nominal: 128}}}]\n", "test.yaml");
    var trace = SimTestTraces.of(job(1, 0, 72, 500, "a"), job(2, 10, 64, 100, "a"));

    SimReport r =
        run(
            Cluster.uniform(16, 8, 16, 8),
            FCFS,
            Optional.of(SimTenancy.scheduling(tenancy).measuredOnly()),
            false,
            trace);

    assertThat(r.tenancy().orElseThrow().bigGangGpus()).isEqualTo(64);
    assertThat(r.tenancy().orElseThrow().bigGangMaxWaitSec()).isEqualTo(490);
  }

  /** A random trace over three queues, one of them a heavy borrower, with gangs. */
  private static Trace randomTrace(long seed, int n) {
    var random = new SplittableRandom(seed);
    var jobs = new ArrayList<TraceJob>();
    String[] queues = {"a", "b", "c"};
    long t = 0;
    for (int i = 1; i <= n; i++) {
      t += random.nextInt(120);
      int gpus = new int[] {1, 2, 4, 8, 16, 32}[random.nextInt(6)];
      jobs.add(
          job(i, t, gpus, 60 + random.nextInt(7200), queues[random.nextInt(i % 5 == 0 ? 3 : 1)]));
    }
    return SimTestTraces.of(jobs.toArray(TraceJob[]::new));
  }

  private static Tenancy threeQueues() {
    return TenancyYaml.parse(
        """
        priorityClasses: [{name: low, value: 0, preemptible: true}, {name: high, value: 10}]
        cohorts: [all]
        queues:
          - {name: a, cohort: all, quotas: {gpu:gpu: {nominal: 8}}, defaults: {priorityClass: low}}
          - name: b
            cohort: all
            quotas: {gpu:gpu: {nominal: 12}}
            preemption: {reclaimWithinCohort: ANY, fairShare: OVER_SERVED}
          - name: c
            cohort: all
            quotas: {gpu:gpu: {nominal: 12}}
            preemption: {reclaimWithinCohort: LOWER_PRIORITY, withinQueue: LOWER_PRIORITY}
            defaults: {priorityClass: high}
        accounts: [{name: org}, {name: b, parent: org}]
        scheduling: {preemptionGrace: 45s, protection: {minRuntime: 2m}}
        fairShare: {halfLife: 1h}
        """,
        "test.yaml");
  }

  @Test
  void sameInputGivesTheSameReportToTheByteAndPreemptsSomething() throws Exception {
    var tenancy = SimTenancy.scheduling(threeQueues()).withCheckpointEverySec(600);
    var trace = randomTrace(7, 400);
    var json = new ObjectMapper();

    SimReport first = run(Cluster.uniform(4, 8, 2, 2), KAIROS, Optional.of(tenancy), true, trace);
    SimReport second = run(Cluster.uniform(4, 8, 2, 2), KAIROS, Optional.of(tenancy), true, trace);

    String a = json.writeValueAsString(first.toMap(false));
    assertThat(json.writeValueAsString(second.toMap(false))).isEqualTo(a);
    assertThat(first.perJob().orElseThrow().endSec())
        .containsExactly(second.perJob().orElseThrow().endSec());
    // The case is not trivial: jobs were preempted, requeued and still all finished.
    var t = first.tenancy().orElseThrow();
    assertThat(t.requeued()).isPositive();
    assertThat(t.neverStarted()).isZero();
    assertThat(first.jobs()).isEqualTo(400);
    // Every job ran its whole duration plus what it lost: busy GPU time covers the trace.
    double traceGpuHours =
        trace.jobs().stream().mapToDouble(j -> (double) j.gpus() * j.durationSec()).sum() / 3600;
    double ranGpuHours = t.queues().stream().mapToDouble(TenancyReport.QueueReport::gpuHours).sum();
    assertThat(ranGpuHours).isCloseTo(traceGpuHours + t.preemptionGpuHoursLost(), within(1e-6));
  }

  @Test
  void measuringOnlyChangesNoDecision() {
    var trace = randomTrace(11, 300);
    var cluster = Cluster.uniform(4, 8, 2, 2);
    for (Policy policy : List.of(FCFS, KAIROS)) {
      SimReport plain = run(cluster, policy, Optional.empty(), false, trace);
      SimReport measured =
          run(
              cluster,
              policy,
              Optional.of(SimTenancy.scheduling(threeQueues()).measuredOnly()),
              false,
              trace);
      assertThat(measured.perJob().orElseThrow().startSec())
          .containsExactly(plain.perJob().orElseThrow().startSec());
      assertThat(measured.toMap(false))
          .containsEntry("mean_wait_s", plain.toMap(false).get("mean_wait_s"));
      assertThat(plain.toMap(false)).doesNotContainKey("tenancy");
    }
  }
}
