package io.kairos.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kairos.config.Tenancy;
import io.kairos.config.TenancyYaml;
import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.sim.trace.Trace;
import io.kairos.sim.trace.TraceJob;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The simulator's elastic and checkpoint model ({@link ElasticModel}) on hand-computed cases: the
 * core's grows and shrinks applied on the virtual clock, work in GPU-seconds done at the current
 * size, the checkpoint cost of each resize, preemption by checkpoint.
 */
class ElasticSimulatorTest {
  private static final Policy FCFS = Policy.byName("fcfs").orElseThrow();
  private static final Policy KAIROS = Policy.byName("kairos").orElseThrow();

  /** 4 nodes of 4 GPUs. */
  private static Cluster cluster() {
    return Cluster.uniform(4, 4, 16, 8);
  }

  private static SimReport run(Policy policy, ElasticModel model, Trace trace) {
    var options = new SimOptions(true, Optional.empty(), true, 1, false).withElastic(model);
    return new Simulator(cluster(), "4x4", policy, options).run(trace);
  }

  /**
   * One case: job 1, 8 GPUs in nodes of 4 for 1,000 s (8,000 GPU-seconds; elastic from 1 to 4
   * nodes), starts alone at 0 and grows at once to 16 GPUs; a 6-GPU job of 100 s (not elastic: 6 is
   * no whole number of nodes) arrives at {@code arrival} or never.
   */
  record Case(
      String name,
      long arrival,
      long costSec,
      long elasticEnd,
      int resizes,
      int grows,
      double resizeLostGpuSec,
      long otherStart) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Case> cases() {
    return Stream.of(
        // Alone: starts at its largest size, 8,000 / 16 = 500 s. Starting grown is no resize.
        new Case("alone, grown at its start", -1, 0, 500, 0, 0, 0, -1),
        new Case("alone, the cost does not apply to its start", -1, 30, 500, 0, 0, 0, -1),
        // At 100 (1,600 done) it shrinks to 2 nodes for the 6-GPU job, which starts next second
        // (101..201); 8 GPUs do 808 by 201, when it grows back to 16 GPUs: 5,592 left, 349.5 s,
        // rounded up: ends at 551 (51 s later than alone).
        new Case("shrinks for a waiting job, grows back", 100, 0, 551, 2, 1, 0, 101),
        // The same with 10 s per resize: after the shrink, progress from 110 (8 x 91 = 728 by
        // 201); after the grow from 211 with 5,672 left: 354.5 s, rounded up, ends at 566. Lost:
        // 10 s x 8 GPUs + 10 s x 16 GPUs.
        new Case("each resize costs a checkpoint", 100, 10, 566, 2, 1, 240, 101));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void anElasticJobFinishesWhenItsWorkAtItsSizesIsDone(Case c) {
    var elastic = SimTestTraces.perNode(1, 0, 8, 4, 1000);
    var trace =
        c.arrival() < 0
            ? SimTestTraces.of(elastic)
            : SimTestTraces.of(elastic, SimTestTraces.job(2, c.arrival(), 6, 100));

    for (Policy policy : new Policy[] {FCFS, KAIROS}) {
      SimReport r = run(policy, new ElasticModel(1.0, c.costSec()), trace);

      var jobs = r.perJob().orElseThrow();
      var e = r.elastic().orElseThrow();
      assertThat(jobs.startSec()[0]).isZero();
      assertThat(jobs.endSec()[0])
          .as(policy.name() + ": elastic job's end")
          .isEqualTo(c.elasticEnd());
      assertThat(e.elasticJobs()).isEqualTo(1);
      assertThat(e.resizes()).isEqualTo(c.resizes());
      assertThat(e.grows()).isEqualTo(c.grows());
      assertThat(e.migrations()).isZero();
      assertThat(e.gpuHoursLostToResizes() * 3600).isCloseTo(c.resizeLostGpuSec(), within(1e-6));
      var perJob = jobs.elastic().orElseThrow();
      assertThat(perJob.minGpus()[0]).isEqualTo(4);
      assertThat(perJob.maxGpus()[0]).isEqualTo(16);
      assertThat(perJob.resizes()[0]).isEqualTo(c.resizes());
      // GPU time held = the work, what the resizes lost, and the last second's rounding.
      assertThat(perJob.gpuSeconds()[0] - 8000 - perJob.lostGpuSeconds()[0]).isBetween(0.0, 15.0);
      if (c.otherStart() >= 0) {
        assertThat(jobs.startSec()[1]).isEqualTo(c.otherStart());
        assertThat(jobs.endSec()[1]).isEqualTo(c.otherStart() + 100);
        assertThat(perJob.minGpus()[1]).isEqualTo(6);
        assertThat(perJob.maxGpus()[1]).isEqualTo(6);
      }
    }
  }

  @Test
  void withoutTheModelTheSameJobKeepsItsSize() {
    var trace =
        SimTestTraces.of(
            SimTestTraces.perNode(1, 0, 8, 4, 1000), SimTestTraces.job(2, 100, 6, 100));

    SimReport r = run(FCFS, ElasticModel.NONE, trace);

    assertThat(r.perJob().orElseThrow().endSec()).containsExactly(1000, 200);
    assertThat(r.elastic()).isEmpty();
    assertThat(r.perJob().orElseThrow().elastic()).isEmpty();
    assertThat(r.toMap(false)).doesNotContainKeys("resizes", "migrations", "elastic_jobs");
  }

  @Test
  void theShareChoosesEligibleJobsBySeedAndIdAlone() {
    var model = new ElasticModel(0.5, 0);
    var c = Cluster.uniform(8, 8, 16, 8);
    int chosen = 0;
    for (long id = 1; id <= 2000; id++) {
      var job = SimTestTraces.perNode(id, 0, 16, 8, 100);
      var gang = model.elasticGang(job, c, 7);
      assertThat(model.elasticGang(job, c, 7)).isEqualTo(gang); // the same draw every time
      if (gang != null) {
        chosen++;
        assertThat(gang.tasks()).isEqualTo(1);
        assertThat(gang.maxTasks()).isEqualTo(4);
        assertThat(gang.shape().gpus()).isEqualTo(8);
      }
    }
    assertThat(chosen).isBetween(900, 1100);
    // Not eligible: one GPU, or GPUs that are no whole number of nodes.
    var all = new ElasticModel(1.0, 0);
    assertThat(all.elasticGang(SimTestTraces.job(1, 0, 1, 100), c, 7)).isNull();
    assertThat(all.elasticGang(SimTestTraces.job(1, 0, 12, 100), c, 7)).isNull();
    // Packed jobs of whole nodes are eligible, in the cluster's node size; the maximum stops at
    // the cluster's nodes.
    var packed = all.elasticGang(SimTestTraces.job(1, 0, 48, 100), c, 7);
    assertThat(packed.tasks()).isEqualTo(3);
    assertThat(packed.maxTasks()).isEqualTo(8);
  }

  @Test
  void badModelValuesNameTheFlag() {
    assertThatThrownBy(() -> new ElasticModel(1.5, 0)).hasMessageContaining("--elastic-share");
    assertThatThrownBy(() -> new ElasticModel(Double.NaN, 0))
        .hasMessageContaining("--elastic-share");
    assertThatThrownBy(() -> new ElasticModel(0.5, -1)).hasMessageContaining("--checkpoint-cost");
  }

  // ------------------------------------------------------------------ preemption by checkpoint

  /** Two queues of 4 GPUs lending to each other; b reclaims its lent quota from borrowers. */
  private static Tenancy reclaim() {
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
        scheduling: {preemptionGrace: 30s}
        """,
        "test.yaml");
  }

  private static TraceJob job(long id, long submit, int gpus, long duration, String queue) {
    return new TraceJob(id, submit, gpus, duration, duration, "", queue, 0, 0);
  }

  /**
   * Job 1 (queue a, 8 GPUs borrowing 4 of b's, 10,000 s) starts at 0; job 2 (queue b, 4 GPUs, 100
   * s) arrives at 100 and reclaims. Checkpoints every 60 s of run time.
   */
  record Preemption(String name, long costSec, long preemptorStart, long victimEnd, double lost) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Preemption> preemptions() {
    return Stream.of(
        // No cost: the grace (30 s), then back to the checkpoint at 120: 10 s x 8 GPUs lost.
        new Preemption(
            "no checkpoint cost: the work since the last periodic one is lost", 0, 130, 10_110, 80),
        // Cost 5 s: it checkpoints on the signal at 100 and stops at 105, keeping 100 s of
        // work; only the checkpoint's 5 s x 8 GPUs are lost. Job 2 runs 105..205; job 1 resumes
        // with 9,900 s left.
        new Preemption("preempted by checkpoint: only its cost is lost", 5, 105, 10_105, 40),
        new Preemption("a checkpoint longer than the grace", 50, 150, 10_150, 400));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("preemptions")
  void aPreemptedJobLosesExactlyTheWorkSinceItsLastCheckpoint(Preemption c) {
    var tenancy = SimTenancy.scheduling(reclaim()).withCheckpointEverySec(60);
    var trace = SimTestTraces.of(job(1, 0, 8, 10_000, "a"), job(2, 100, 4, 100, "b"));
    var options =
        new SimOptions(true, Optional.empty(), true, 1, false)
            .withTenancy(Optional.of(tenancy))
            .withElastic(new ElasticModel(0, c.costSec()));

    SimReport r = new Simulator(Cluster.uniform(2, 4, 16, 8), "2x4", KAIROS, options).run(trace);

    var jobs = r.perJob().orElseThrow();
    assertThat(jobs.startSec()[1]).as("preemptor's start").isEqualTo(c.preemptorStart());
    assertThat(jobs.endSec()[0]).as("victim's end").isEqualTo(c.victimEnd());
    assertThat(r.tenancy().orElseThrow().requeued()).isEqualTo(1);
    assertThat(r.tenancy().orElseThrow().preemptionGpuHoursLost() * 3600)
        .isCloseTo(c.lost(), within(1e-6));
    if (c.costSec() > 0) {
      var e = r.elastic().orElseThrow();
      assertThat(e.gpuHoursLostToPreemption() * 3600).isCloseTo(c.lost(), within(1e-6));
      assertThat(jobs.elastic().orElseThrow().lostGpuSeconds()[0])
          .isCloseTo(c.lost(), within(1e-6));
      // Its GPU time: the work and what it lost.
      assertThat(jobs.elastic().orElseThrow().gpuSeconds()[0])
          .isCloseTo(80_000 + c.lost(), within(1e-6));
    }
  }

  @Test
  void sameInputAndFlagsGiveTheSameReportToTheByte() throws Exception {
    var trace = ElasticSimulatorPropertiesTest.randomTrace(3, 300);
    var json = new ObjectMapper();
    var model = new ElasticModel(0.5, 30);
    String first = json.writeValueAsString(run(KAIROS, model, trace).toMap(false));
    String second = json.writeValueAsString(run(KAIROS, model, trace).toMap(false));
    assertThat(second).isEqualTo(first);
    assertThat(first).contains("\"resizes\"");
  }
}
