package io.kairos.sim;

import static io.kairos.sim.SimTestTraces.job;
import static io.kairos.sim.SimTestTraces.of;
import static io.kairos.sim.SimTestTraces.perNode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.sim.trace.Trace;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Small traces built in code, with start times and metrics checked by hand. */
class SimulatorTest {
  private static final SimOptions RECORD = new SimOptions(false, Optional.empty(), true, 1, false);
  private static final SimOptions CHECKED = new SimOptions(true, Optional.empty(), true, 1, false);

  private static Cluster flat(int nodes, int gpusPerNode) {
    return Cluster.uniform(nodes, gpusPerNode, 16, 8);
  }

  private static SimReport run(Cluster cluster, Policy policy, SimOptions options, Trace trace) {
    return new Simulator(cluster, "test", policy, options).run(trace);
  }

  private static long[] starts(SimReport report) {
    return report.perJob().orElseThrow().startSec();
  }

  /**
   * The EASY example on 4 one-GPU nodes. J1 (2 GPUs, 0..100) runs; J2 (4 GPUs) is blocked and
   * reserved for t=100; J3 (1 GPU, limit 50) fits before the reservation and backfills at once; J4
   * (1 GPU, limit 200) would still run at 100 when J2 needs every GPU, so it does not.
   */
  private static Trace easyExample() {
    return of(job(1, 0, 2, 100), job(2, 1, 4, 50), job(3, 2, 1, 50), job(4, 3, 1, 200));
  }

  @Test
  void easyBackfillsOnlyTheJobThatEndsBeforeTheReservation() {
    var report = run(flat(4, 1), Policy.EASY, CHECKED, easyExample());
    assertThat(starts(report)).containsExactly(0, 100, 2, 150);
    assertThat(report.perJob().orElseThrow().endSec()).containsExactly(100, 150, 52, 350);
  }

  @Test
  void fcfsDoesNotBackfill() {
    var report = run(flat(4, 1), Policy.FCFS, CHECKED, easyExample());
    assertThat(starts(report)).containsExactly(0, 100, 150, 150);
  }

  @Test
  void conservativeAndSjfOnTheEasyExample() {
    assertThat(starts(run(flat(4, 1), Policy.CONSERVATIVE, CHECKED, easyExample())))
        .containsExactly(0, 100, 2, 150);
    // SJF: J2 (limit 50) is ordered before J4 (limit 200) and keeps its reservation.
    assertThat(starts(run(flat(4, 1), Policy.SJF, CHECKED, easyExample())))
        .containsExactly(0, 100, 2, 150);
  }

  /**
   * On 4 GPUs: J1 (3 GPUs, 0..100) runs; J2 (4 GPUs) is reserved for 100 and runs to 200; J3 (2
   * GPUs) waits behind it. At t=3 one GPU is free: J4 (1 GPU, limit 150) would still run at 100
   * when J2 needs all 4 GPUs, so it waits; J5 (1 GPU, limit 90) ends at 93, before the reservation,
   * and backfills under both EASY and conservative. J3 and J4 start together when J2 ends.
   */
  @Test
  void backfillRespectsTheHeadReservationUnderBothPolicies() {
    var trace =
        of(
            job(1, 0, 3, 100),
            job(2, 1, 4, 100),
            job(3, 2, 2, 100),
            job(4, 3, 1, 150),
            job(5, 3, 1, 90));
    for (Policy policy : new Policy[] {Policy.EASY, Policy.CONSERVATIVE}) {
      assertThat(starts(run(flat(4, 1), policy, CHECKED, trace)))
          .as(policy.name())
          .containsExactly(0, 100, 200, 200, 3);
    }
    assertThat(starts(run(flat(4, 1), Policy.FCFS, CHECKED, trace)))
        .containsExactly(0, 100, 200, 200, 200);
  }

  /**
   * Where EASY and conservative differ: the second blocked job. On 4 GPUs, J1 (3 GPUs, 0..100)
   * runs; J2 (3 GPUs) is reserved for 100 and leaves one GPU spare then; J3 (4 GPUs) is blocked
   * behind it. J4 (1 GPU, 1000 s) arrives at 3: EASY protects J2 only, and J4 fits in the free and
   * spare GPU, so it starts at once and delays J3 to 1003. Conservative has reserved J3 for 200
   * (after J2), which J4 would delay: J4 is reserved after J3, for 300.
   */
  @Test
  void easyAndConservativeDifferOnTheSecondBlockedJob() {
    var trace = of(job(1, 0, 3, 100), job(2, 1, 3, 100), job(3, 2, 4, 100), job(4, 3, 1, 1000));
    assertThat(starts(run(flat(4, 1), Policy.EASY, CHECKED, trace)))
        .containsExactly(0, 100, 1003, 3);
    assertThat(starts(run(flat(4, 1), Policy.CONSERVATIVE, CHECKED, trace)))
        .containsExactly(0, 100, 200, 300);
    assertThat(starts(run(flat(4, 1), Policy.FCFS, CHECKED, trace)))
        .containsExactly(0, 100, 200, 300);
  }

  @Test
  void aJobArrivingAsAnotherEndsSeesTheFreedGpus() {
    var trace = of(job(1, 0, 4, 100), job(2, 100, 4, 10), job(3, 110, 4, 5));
    for (Policy policy : Policy.ALL) {
      var report = run(flat(2, 2), policy, CHECKED, trace);
      assertThat(starts(report)).as(policy.name()).containsExactly(0, 100, 110);
      assertThat(report.meanWaitSec()).isZero();
      assertThat(report.makespanSec()).isEqualTo(115);
      assertThat(report.utilization()).isEqualTo(1.0);
    }
  }

  /**
   * On 2 GPUs (FCFS): A (2 GPUs, 0..100); B (1 GPU, 5 s) arrives at 10 and C (1 GPU, 50 s) at 20;
   * both start at 100. Waits 0, 90, 80; JCTs 100, 95, 130; bounded slowdowns (tau 10 s) max(1,
   * 100/100) = 1, 95 / max(5, 10) = 9.5, 130 / 50 = 2.6; busy 200 + 5 + 50 = 255 GPU-seconds over 2
   * x 150.
   */
  @Test
  void metricsOfATinyCase() {
    var trace = of(job(1, 0, 2, 100), job(2, 10, 1, 5), job(3, 20, 1, 50));
    var report = run(flat(2, 1), Policy.FCFS, RECORD, trace);
    assertThat(starts(report)).containsExactly(0, 100, 100);
    assertThat(report.jobs()).isEqualTo(3);
    assertThat(report.skipped()).isZero();
    assertThat(report.makespanSec()).isEqualTo(150);
    assertThat(report.meanWaitSec()).isCloseTo(170.0 / 3, within(1e-9));
    assertThat(report.p50WaitSec()).isEqualTo(80);
    assertThat(report.p95WaitSec()).isEqualTo(90);
    assertThat(report.p99WaitSec()).isEqualTo(90);
    assertThat(report.maxWaitSec()).isEqualTo(90);
    assertThat(report.meanJctSec()).isCloseTo(325.0 / 3, within(1e-9));
    assertThat(report.p95JctSec()).isEqualTo(130);
    assertThat(report.meanBoundedSlowdown()).isCloseTo((1 + 9.5 + 2.6) / 3, within(1e-9));
    assertThat(report.utilization()).isCloseTo(255.0 / 300, within(1e-9));
    // B and C never fit in the free GPUs while they wait: nothing counts as fragmentation.
    assertThat(report.fragmentationFreeGpus()).isZero();
    assertThat(report.gpuHoursLostToSpread()).isZero();
    assertThat(report.commModel()).isFalse();
    assertThat(report.clusterGpus()).isEqualTo(2);
    assertThat(report.cluster()).isEqualTo("test");
    assertThat(report.policy()).isEqualTo("fcfs");
    var map = report.toMap(false);
    assertThat(map.get("mean_wait_s")).isEqualTo(56.667);
    assertThat(map.get("mean_bounded_slowdown")).isEqualTo(4.367);
    assertThat(map.get("utilization")).isEqualTo(0.85);
    assertThat(map).doesNotContainKeys("sim_wall_s", "pass_p50_ms", "pass_p99_ms");
    assertThat(report.toMap(true)).containsKeys("sim_wall_s", "pass_p50_ms", "pass_p99_ms");
  }

  /**
   * Fragmentation on the EASY example: J4 (1 GPU) waits although GPUs are free, kept out by J2's
   * reservation: 1 free GPU over [3, 52), 2 free over [52, 100).
   */
  @Test
  void fragmentationCountsFreeGpusAWaitingJobCouldUse() {
    var report = run(flat(4, 1), Policy.EASY, RECORD, easyExample());
    assertThat(report.fragmentationFreeGpus()).isCloseTo((49 * 1 + 48 * 2) / 97.0, within(1e-9));
    // Busy: 200 + 200 + 50 + 200 = 650 over 4 x 350.
    assertThat(report.makespanSec()).isEqualTo(350);
    assertThat(report.utilization()).isCloseTo(650.0 / 1400, within(1e-9));
  }

  @Test
  void jobsLargerThanTheClusterAreSkippedWithANote() {
    var trace =
        of(
            job(1, 0, 2, 10),
            job(7, 1, 5, 10), // 5 GPUs > 4
            perNode(8, 2, 3, 1, 10), // 3 distinct nodes, only 2
            perNode(9, 3, 4, 4, 10), // 4 GPUs on one node of 2
            job(2, 4, 4, 10));
    var report = run(flat(2, 2), Policy.EASY, RECORD, trace);
    assertThat(report.jobs()).isEqualTo(2);
    assertThat(report.skipped()).isEqualTo(3);
    assertThat(report.perJob().orElseThrow().traceIds()).containsExactly(1, 2);
    assertThat(starts(report)).containsExactly(0, 10);
    assertThat(report.notes())
        .containsExactly("3 jobs larger than the cluster were skipped (first ids: [7, 8, 9])");
    assertThat(report.toMap(false).get("skipped")).isEqualTo(3);
  }

  @Test
  void onlyFirstFiveSkippedIdsAreNamed() {
    var jobs = new io.kairos.sim.trace.TraceJob[8];
    for (int i = 0; i < 7; i++) {
      jobs[i] = job(i + 1, i, 100, 10);
    }
    jobs[7] = job(99, 0, 1, 10);
    var report = run(flat(2, 2), Policy.FCFS, SimOptions.defaults(), of(jobs));
    assertThat(report.skipped()).isEqualTo(7);
    assertThat(report.jobs()).isEqualTo(1);
    assertThat(report.notes())
        .containsExactly(
            "7 jobs larger than the cluster were skipped (first ids: [1, 2, 3, 4, 5])");
  }

  @Test
  void traceNotesComeFirst() {
    var trace =
        new Trace(
            "t", "swf", java.util.List.of(job(1, 0, 9, 1)), 1, 0, true, java.util.List.of("n1"));
    var report = run(flat(2, 2), Policy.FCFS, SimOptions.defaults(), trace);
    assertThat(report.notes()).hasSize(2);
    assertThat(report.notes().getFirst()).isEqualTo("n1");
    assertThat(report.estimatesFromRuntime()).isTrue();
    assertThat(report.jobs()).isZero();
    assertThat(report.makespanSec()).isZero();
    assertThat(report.utilization()).isZero();
  }

  @Test
  void emptyTrace() {
    var report = run(flat(2, 2), Policy.KAIROS, RECORD, of());
    assertThat(report.jobs()).isZero();
    assertThat(report.meanWaitSec()).isZero();
    assertThat(report.passes()).isZero();
    assertThat(report.perJob().orElseThrow().size()).isZero();
  }

  @ParameterizedTest
  @ValueSource(strings = {"fcfs", "easy", "conservative", "sjf", "kairos"})
  void gpusPerNodeJobsLandOnDistinctNodes(String name) {
    var policy = Policy.byName(name).orElseThrow();
    var trace =
        of(
            perNode(1, 0, 16, 4, 100), // 4 nodes x 4 GPUs
            perNode(2, 0, 8, 2, 100), // 4 nodes x 2 GPUs
            perNode(3, 0, 6, 1, 100), // 6 nodes x 1 GPU
            job(4, 0, 8, 100)); // packed: one node
    var cluster = flat(8, 8);
    var report = run(cluster, policy, CHECKED, trace);
    var nodes = report.perJob().orElseThrow().nodes();
    int[] expectedNodes = {4, 4, 6};
    for (int i = 0; i < 3; i++) {
      assertThat(nodes[i]).as("job %d", i + 1).hasSize(expectedNodes[i]);
      var distinct = new HashSet<Integer>();
      Arrays.stream(nodes[i]).forEach(distinct::add);
      assertThat(distinct)
          .as("job %d nodes %s", i + 1, Arrays.toString(nodes[i]))
          .hasSize(expectedNodes[i]);
    }
    assertThat(nodes[3]).as("packed 8-GPU job on 8-GPU nodes").hasSize(1);
    // 16 + 8 + 6 + 8 = 38 GPUs of 64: all start at once.
    assertThat(starts(report)).containsExactly(0, 0, 0, 0);
  }

  @Test
  void perJobArraysAreOnlyKeptWhenAsked() {
    var report = run(flat(4, 1), Policy.EASY, SimOptions.defaults(), easyExample());
    assertThat(report.perJob()).isEmpty();
  }

  @Test
  void noClockMeansNoPassTimings() {
    var report = run(flat(4, 1), Policy.EASY, SimOptions.defaults(), easyExample());
    assertThat(report.passes()).isPositive();
    assertThat(report.passP50Ms()).isZero();
    assertThat(report.passP99Ms()).isZero();
    assertThat(report.simWallSec()).isZero();
  }

  @Test
  void progressIsReportedToCompletion() {
    var seen = new long[2];
    var report =
        new Simulator(
                flat(4, 1),
                "test",
                Policy.EASY,
                SimOptions.defaults(),
                System::nanoTime,
                (finished, total) -> {
                  assertThat(finished).isLessThanOrEqualTo(total);
                  seen[0] = finished;
                  seen[1] = total;
                })
            .run(easyExample());
    assertThat(seen).containsExactly(4, 4);
    assertThat(report.passP99Ms()).isGreaterThanOrEqualTo(report.passP50Ms());
  }

  @Test
  void percentileIsNearestRank() {
    long[] sorted = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    assertThat(ReportBuilder.percentile(sorted, 50)).isEqualTo(5);
    assertThat(ReportBuilder.percentile(sorted, 95)).isEqualTo(10);
    assertThat(ReportBuilder.percentile(sorted, 99)).isEqualTo(10);
    assertThat(ReportBuilder.percentile(new long[] {7}, 50)).isEqualTo(7);
    assertThat(ReportBuilder.percentile(new long[0], 50)).isZero();
    long[] twenty = new long[20];
    for (int i = 0; i < 20; i++) {
      twenty[i] = i + 1;
    }
    assertThat(ReportBuilder.percentile(twenty, 95)).isEqualTo(19);
    assertThat(ReportBuilder.percentile(twenty, 50)).isEqualTo(10);
  }

  // ---------------------------------------------------------------- regressions

  /**
   * Regression (was a bug): a job wider than GangSpec.MAX_TASKS (2^20) GPUs, or with gpus_per_node
   * above 64, is "larger than the cluster" (docs/simulator.md: reported in a note and skipped), but
   * Simulator.run builds its GangSpec before the canEverHold check, and GangSpec/TaskShape throw
   * IllegalArgumentException ("gang.tasks must be between 1 and 1048576, got 2000000", "task.gpus
   * must be between 0 and 64, got 128"). Both readers accept such rows.
   */
  @Test
  void absurdlyWideJobsAreSkippedNotThrown() {
    var trace = of(job(1, 0, 2_000_000, 10), perNode(2, 0, 128, 128, 10), job(3, 0, 1, 10));
    var report = run(flat(2, 2), Policy.EASY, RECORD, trace);
    assertThat(report.skipped()).isEqualTo(2);
    assertThat(report.jobs()).isEqualTo(1);
    assertThat(report.notes()).anyMatch(n -> n.contains("larger than the cluster"));
  }

  /**
   * Times that could overflow are bad input: a job whose submit + limit reaches 2^40 s is refused
   * with a message naming the job, before anything is simulated.
   */
  @Test
  void hugeDurationsAreRefusedNamingTheJob() {
    var trace = of(job(1, 0, 1, 5), job(2, 0, 1, 1L << 62), job(3, 1, 1, 1));
    assertThatThrownBy(() -> run(flat(1, 2), Policy.FCFS, RECORD, trace))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("job 2")
        .hasMessageContaining("2^40");
  }

  /**
   * Regression (was a bug): SimReport.round is {@code Math.round(v * 1000) / 1000.0}; above about
   * 9.2e15 the product saturates at Long.MAX_VALUE and every value prints as 9.223372036854776E15
   * (e.g. mean_jct_s of a trace with a 2^62-second job).
   */
  @Test
  void roundKeepsLargeValues() {
    assertThat(SimReport.round(1e16)).isEqualTo(1e16);
    assertThat(SimReport.round(2.3e18)).isEqualTo(2.3e18);
  }

  @Test
  void roundRoundsToThreeDecimals() {
    assertThat(SimReport.round(1.23456)).isEqualTo(1.235);
    assertThat(SimReport.round(0.0004)).isEqualTo(0.0);
    assertThat(SimReport.round(56.66666)).isEqualTo(56.667);
    assertThat(SimReport.round(1e12 + 0.5)).isEqualTo(1e12 + 0.5);
  }
}
