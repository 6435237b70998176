package io.kairos.sim.report;

import static io.kairos.sim.report.Runs.job;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.sim.SimOptions;
import io.kairos.sim.SimReport;
import io.kairos.sim.SimSeries;
import io.kairos.sim.Simulator;
import io.kairos.sim.trace.TraceJob;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The time series the simulator records for reports: exact integrals in bounded memory. */
class ReportSeriesTest {
  private static double sum(double[] values) {
    return Arrays.stream(values).sum();
  }

  @Test
  void seriesAreOffUnlessAskedFor() {
    var run =
        new Simulator(Cluster.uniform(1, 4, 16, 8), "1x4", Policy.EASY, SimOptions.defaults())
            .run(Runs.trace("t", List.of(job(1, 0, 1, 10, "a"))));
    assertThat(run.series()).isEmpty();
  }

  @Test
  void integralsAddUpToTheRunsTotals() {
    SimReport r = Runs.run(Cluster.uniform(4, 4, 16, 8), Policy.EASY, Runs.mixed("t"));
    SimSeries s = r.series().orElseThrow();
    assertThat(sum(s.coveredSec())).isEqualTo(r.makespanSec());
    assertThat(sum(s.busyGpuSec()) / (16.0 * r.makespanSec()))
        .isCloseTo(r.utilization(), within(1e-12));
    double queues = 0;
    for (double[] q : s.queueGpuSec()) {
      queues += sum(q);
    }
    assertThat(queues).isEqualTo(sum(s.busyGpuSec()));
    assertThat(s.queues()).containsExactlyInAnyOrder("q0", "q1", "q2");
    for (int k = 0; k < s.points(); k++) {
      assertThat(s.utilization(k)).isBetween(0.0, 1.0);
      assertThat(s.fragmentation(k)).isBetween(0.0, 1.0);
    }
  }

  @Test
  void freeGpusOnAPartlyBusyNodeAreStranded() {
    // Two nodes of 4 GPUs, one 2-GPU job for 100 s: 2 of the 6 free GPUs share its node.
    SimReport r =
        Runs.run(
            Cluster.uniform(2, 4, 16, 8),
            Policy.EASY,
            Runs.trace("t", List.of(job(1, 0, 2, 100, "a"))));
    SimSeries s = r.series().orElseThrow();
    assertThat(sum(s.strandedGpuSec())).isEqualTo(200);
    for (int k = 0; k < s.points(); k++) {
      assertThat(s.fragmentation(k)).isCloseTo(1 / 3.0, within(1e-12));
    }
  }

  @Test
  void oneGpuNodesNeverStrandAnything() {
    SimReport r = Runs.run(Cluster.uniform(16, 1, 16, 8), Policy.EASY, Runs.mixed("t"));
    assertThat(sum(r.series().orElseThrow().strandedGpuSec())).isZero();
  }

  @Test
  void aLongTailCoarsensTheGridButKeepsItBounded() {
    // Arrivals span 10,000 s (first step 10 s); one job runs 10^7 s, a thousand times longer.
    var jobs = new ArrayList<TraceJob>();
    for (int i = 0; i < 1000; i++) {
      jobs.add(job(i + 1, i * 10L, 1, 25, "a"));
    }
    jobs.add(job(1001, 10_000, 1, 10_000_000, "b"));
    SimReport r = Runs.run(Cluster.uniform(2, 2, 16, 8), Policy.FCFS, Runs.trace("t", jobs));
    SimSeries s = r.series().orElseThrow();
    assertThat(s.points())
        .isLessThanOrEqualTo(SimSeries.MAX_POINTS)
        .isGreaterThan(SimSeries.MAX_POINTS / 4);
    assertThat(s.stepSec() % 10).isZero();
    assertThat(Long.bitCount(s.stepSec() / 10))
        .as("step is 10 s times a power of two")
        .isEqualTo(1);
    assertThat(sum(s.coveredSec())).isEqualTo(r.makespanSec());
    assertThat(sum(s.busyGpuSec())).isEqualTo(1000 * 25 + 10_000_000.0);
  }

  @Test
  void coarseningIsExact() {
    SimSeries s =
        Runs.run(Cluster.uniform(4, 4, 16, 8), Policy.EASY, Runs.mixed("t")).series().orElseThrow();
    SimSeries c = s.coarsenTo(s.stepSec() * 4);
    assertThat(c.points()).isEqualTo((s.points() + 3) / 4);
    assertThat(sum(c.busyGpuSec())).isEqualTo(sum(s.busyGpuSec()));
    assertThat(c.busyGpuSec()[0])
        .isEqualTo(s.busyGpuSec()[0] + s.busyGpuSec()[1] + s.busyGpuSec()[2] + s.busyGpuSec()[3]);
  }

  @Test
  void smallQueuesAreGatheredUnderOther() {
    var jobs = new ArrayList<TraceJob>();
    for (int i = 0; i < 20; i++) {
      // Queue qNN gets (i + 1) x 100 GPU-seconds: q19 is the largest.
      jobs.add(job(i + 1, i, 1, 100L * (i + 1), String.format("q%02d", i)));
    }
    SimSeries s =
        Runs.run(Cluster.uniform(4, 4, 16, 8), Policy.EASY, Runs.trace("t", jobs))
            .series()
            .orElseThrow();
    assertThat(s.queues()).hasSize(SimSeries.MAX_QUEUES + 1);
    assertThat(s.queues().subList(0, 3)).containsExactly("q19", "q18", "q17");
    assertThat(s.queues().getLast()).isEqualTo(SimSeries.OTHER_QUEUES);
    assertThat(sum(s.queueGpuSec()[SimSeries.MAX_QUEUES]))
        .isEqualTo(100.0 * (1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9));
  }

  @Test
  void waitCdfIsIncreasingBoundedAndEndsAtOne() {
    SimSeries s =
        Runs.run(Cluster.uniform(2, 2, 16, 8), Policy.FCFS, Runs.mixed("t")).series().orElseThrow();
    long[] sec = s.waitCdfSec();
    double[] f = s.waitCdfFraction();
    assertThat(sec.length).isPositive().isLessThanOrEqualTo(SimSeries.MAX_CDF_POINTS);
    for (int k = 1; k < sec.length; k++) {
      assertThat(sec[k]).isGreaterThan(sec[k - 1]);
      assertThat(f[k]).isGreaterThan(f[k - 1]);
    }
    assertThat(f[f.length - 1]).isEqualTo(1.0);
  }

  @Test
  void waitQuantilesMatchTheSimulatorsPercentiles() {
    SimReport r = Runs.run(Cluster.uniform(2, 2, 16, 8), Policy.FCFS, Runs.mixed("t"));
    SimSeries s = r.series().orElseThrow();
    assertThat(ReportCharts.quantile(s, 0.5)).isEqualTo(r.p50WaitSec());
    assertThat(ReportCharts.quantile(s, 0.99)).isEqualTo(r.p99WaitSec());
    assertThat(ReportCharts.quantile(s, 1.0)).isEqualTo(r.maxWaitSec());
  }

  @Test
  void recordingChangesNoDecision() {
    var trace = Runs.mixed("t");
    var cluster = Cluster.uniform(4, 4, 16, 8);
    var with = Runs.run(cluster, Policy.KAIROS, trace);
    var without = new Simulator(cluster, "4x4", Policy.KAIROS, SimOptions.defaults()).run(trace);
    assertThat(with.toMap(false)).isEqualTo(without.toMap(false));
  }

  @Test
  void sameInputGivesEqualSeries() {
    var a = Runs.run(Cluster.uniform(4, 4, 16, 8), Policy.KAIROS, Runs.mixed("t"));
    var b = Runs.run(Cluster.uniform(4, 4, 16, 8), Policy.KAIROS, Runs.mixed("t"));
    assertThat(a.series()).isEqualTo(b.series());
  }
}
