package io.kairos.sim;

import static io.kairos.sim.SimTestTraces.of;
import static io.kairos.sim.SimTestTraces.perNode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.NodeSpec;
import io.kairos.core.model.TopologyLevel;
import io.kairos.core.sched.Policy;
import io.kairos.sim.trace.EstimateMode;
import io.kairos.sim.trace.Trace;
import io.kairos.sim.trace.TraceJob;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CommModelTest {
  private static final double EPS = 1e-12;

  // ---------------------------------------------------------------- the formula

  @Test
  void slowdownPerLevelWithTheDefaultBandwidths() {
    var m = CommModel.defaults(0.2);
    // runtime(L) = runtime * ((1 - f) + f * 450 / B(L))
    assertThat(m.slowdown(TopologyLevel.NVLINK)).isCloseTo(1.0, within(EPS));
    assertThat(m.slowdown(TopologyLevel.NODE)).isCloseTo(0.8 + 0.2 * 450 / 64, within(EPS));
    assertThat(m.slowdown(TopologyLevel.RACK)).isCloseTo(2.6, within(EPS));
    assertThat(m.slowdown(TopologyLevel.BLOCK)).isCloseTo(4.4, within(EPS));
    assertThat(m.slowdown(TopologyLevel.ZONE)).isCloseTo(8.0, within(EPS));
    assertThat(m.slowdown(TopologyLevel.CLUSTER)).isCloseTo(15.2, within(EPS));
  }

  @Test
  void defaultBandwidthsAreTheDocumentedOnes() {
    var m = CommModel.defaults(0.2);
    assertThat(m.bandwidth(TopologyLevel.NVLINK)).isEqualTo(450);
    assertThat(m.bandwidth(TopologyLevel.NODE)).isEqualTo(64);
    assertThat(m.bandwidth(TopologyLevel.RACK)).isEqualTo(50);
    assertThat(m.bandwidth(TopologyLevel.BLOCK)).isEqualTo(25);
    assertThat(m.bandwidth(TopologyLevel.ZONE)).isEqualTo(12.5);
    assertThat(m.bandwidth(TopologyLevel.CLUSTER)).isEqualTo(6.25);
  }

  @Test
  void slowdownGrowsWithTheLevel() {
    for (double f : new double[] {0.01, 0.2, 0.5, 1.0}) {
      var m = CommModel.defaults(f);
      double previous = 0;
      for (TopologyLevel level : TopologyLevel.values()) {
        assertThat(m.slowdown(level)).as("f=%s %s", f, level).isGreaterThan(previous);
        previous = m.slowdown(level);
      }
    }
  }

  @Test
  void noCommunicationMeansNoSlowdown() {
    var m = CommModel.defaults(0);
    for (TopologyLevel level : TopologyLevel.values()) {
      assertThat(m.slowdown(level)).as(level.name()).isEqualTo(1.0);
    }
  }

  @Test
  void allCommunicationScalesWithTheBandwidthRatio() {
    var m = CommModel.defaults(1);
    for (TopologyLevel level : TopologyLevel.values()) {
      assertThat(m.slowdown(level))
          .as(level.name())
          .isCloseTo(450 / m.bandwidth(level), within(EPS));
    }
  }

  @Test
  void customBandwidths() {
    var m = new CommModel(0.5, 100, 50, 25, 10, 5, 1);
    assertThat(m.slowdown(TopologyLevel.NVLINK)).isCloseTo(1.0, within(EPS));
    assertThat(m.slowdown(TopologyLevel.NODE)).isCloseTo(0.5 + 0.5 * 2, within(EPS));
    assertThat(m.slowdown(TopologyLevel.RACK)).isCloseTo(0.5 + 0.5 * 4, within(EPS));
    assertThat(m.slowdown(TopologyLevel.BLOCK)).isCloseTo(0.5 + 0.5 * 10, within(EPS));
    assertThat(m.slowdown(TopologyLevel.ZONE)).isCloseTo(0.5 + 0.5 * 20, within(EPS));
    assertThat(m.slowdown(TopologyLevel.CLUSTER)).isCloseTo(0.5 + 0.5 * 100, within(EPS));
  }

  @ParameterizedTest
  @ValueSource(doubles = {-0.01, 1.01, 2, -1, Double.NaN, Double.POSITIVE_INFINITY})
  void invalidFractionIsRejected(double f) {
    assertThatThrownBy(() -> CommModel.defaults(f))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("comm fraction");
  }

  @Test
  void fractionBoundsAreAllowed() {
    assertThat(CommModel.defaults(0).commFraction()).isZero();
    assertThat(CommModel.defaults(1).commFraction()).isEqualTo(1);
  }

  @Test
  void nonPositiveBandwidthIsRejected() {
    assertThatThrownBy(() -> new CommModel(0.2, 450, 64, 0, 25, 12.5, 6.25))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("bandwidth");
    assertThatThrownBy(() -> new CommModel(0.2, -1, 64, 50, 25, 12.5, 6.25))
        .isInstanceOf(IllegalArgumentException.class);
  }

  // ---------------------------------------------------------------- in a simulation

  private static SimOptions comm(double f) {
    return new SimOptions(true, Optional.of(CommModel.defaults(f)), true, 1, false);
  }

  private static SimReport run(Cluster cluster, SimOptions options, Trace trace) {
    return new Simulator(cluster, "test", Policy.EASY, options).run(trace);
  }

  private static TraceJob gang(long id, int gpus, int perNode, long duration, long limit) {
    return new TraceJob(id, 0, gpus, duration, limit, "", "default", 0, perNode);
  }

  /** Two 8-GPU tasks on one rack of 8-GPU nodes: 2.6x, 100 s becomes 260 s. */
  @Test
  void aGangSpreadOverARackRunsSlower() {
    var report = run(Cluster.uniform(4, 8, 16, 8), comm(0.2), of(gang(1, 16, 8, 100, 1000)));
    var jobs = report.perJob().orElseThrow();
    assertThat(jobs.nodes()[0]).hasSize(2);
    assertThat(jobs.endSec()[0] - jobs.startSec()[0]).isEqualTo(260);
    assertThat(report.gpuHoursLostToSpread()).isCloseTo(160.0 * 16 / 3600, within(1e-9));
    assertThat(report.jobsStoppedAtLimit()).isZero();
    assertThat(report.commModel()).isTrue();
    assertThat(report.toMap(false).get("comm_model")).isEqualTo(true);
  }

  /**
   * Racks of one node, blocks of two racks: the gang spans a block, 4.4x: 100 s becomes 440 s (441
   * today, see {@link #ceilingIsTakenOfTheExactProduct()}).
   */
  @Test
  void aGangSpreadOverABlock() {
    var report = run(Cluster.uniform(4, 8, 1, 2), comm(0.2), of(gang(1, 16, 8, 100, 1000)));
    var jobs = report.perJob().orElseThrow();
    assertThat(jobs.nodes()[0]).hasSize(2);
    long run = jobs.endSec()[0] - jobs.startSec()[0];
    assertThat(run).isBetween(440L, 441L);
    assertThat(report.gpuHoursLostToSpread()).isCloseTo((run - 100.0) * 16 / 3600, within(1e-9));
  }

  /**
   * Regression (was a bug): the stretched run time is {@code Math.ceil(duration * slowdown)} in
   * floating point. 0.8 + 0.2 * 450 / 25 is the double 4.4000000000000004, and 100 * that is
   * 440.00000000000006, so the ceiling is 441: one second too many, and a job whose limit is
   * exactly 440 s is counted as stopped at its limit.
   */
  @Test
  void ceilingIsTakenOfTheExactProduct() {
    var report = run(Cluster.uniform(4, 8, 1, 2), comm(0.2), of(gang(1, 16, 8, 100, 440)));
    var jobs = report.perJob().orElseThrow();
    assertThat(jobs.endSec()[0] - jobs.startSec()[0]).isEqualTo(440);
    assertThat(report.jobsStoppedAtLimit()).isZero();
    assertThat(report.gpuHoursLostToSpread()).isCloseTo(340.0 * 16 / 3600, within(1e-9));
  }

  /** Racks of one node, blocks of one rack, one zone: two nodes span the zone, 8x. */
  @Test
  void aGangSpreadOverAZone() {
    var report = run(Cluster.uniform(2, 8, 1, 1), comm(0.2), of(gang(1, 16, 8, 100, 1000)));
    var jobs = report.perJob().orElseThrow();
    assertThat(jobs.endSec()[0] - jobs.startSec()[0]).isEqualTo(800);
  }

  /** The run time is rounded up to whole seconds: 100 x 2.20625 = 220.625 becomes 221. */
  @Test
  void aGangAcrossNvlinkDomainsOfOneNode() {
    var node = new NodeSpec("n0", "gpu", 8, 0, 64, 1L << 40, Map.of(), "z0", "b0", "r0", 4);
    var cluster = Cluster.of(List.of(node));
    var report = run(cluster, comm(0.2), of(gang(1, 8, 8, 100, 1000)));
    var jobs = report.perJob().orElseThrow();
    assertThat(jobs.endSec()[0] - jobs.startSec()[0]).isEqualTo(221);
    assertThat(report.gpuHoursLostToSpread()).isCloseTo(121.0 * 8 / 3600, within(1e-9));
    // A 4-GPU job fits one NVLink domain of the empty node: no slowdown.
    var small = run(cluster, comm(0.2), of(gang(1, 4, 4, 100, 1000)));
    assertThat(small.perJob().orElseThrow().endSec()[0]).isEqualTo(100);
    assertThat(small.gpuHoursLostToSpread()).isZero();
  }

  /** Stretched past its limit, a job is stopped there, counted, and all its GPU time is lost. */
  @Test
  void aJobIsStoppedAtItsTimeLimit() {
    var report = run(Cluster.uniform(4, 8, 16, 8), comm(0.2), of(gang(1, 16, 8, 100, 200)));
    var jobs = report.perJob().orElseThrow();
    assertThat(jobs.endSec()[0] - jobs.startSec()[0]).isEqualTo(200);
    assertThat(report.jobsStoppedAtLimit()).isEqualTo(1);
    assertThat(report.gpuHoursLostToSpread()).isCloseTo(200.0 * 16 / 3600, within(1e-9));
  }

  @Test
  void zeroFractionChangesNothing() {
    var trace = of(gang(1, 16, 8, 100, 1000), gang(2, 32, 8, 50, 60), gang(3, 8, 1, 70, 70));
    var cluster = Cluster.uniform(4, 8, 1, 2);
    var with = run(cluster, comm(0), trace);
    var without = run(cluster, new SimOptions(true, Optional.empty(), true, 1, false), trace);
    assertThat(with.perJob().orElseThrow().endSec())
        .isEqualTo(without.perJob().orElseThrow().endSec());
    assertThat(with.gpuHoursLostToSpread()).isZero();
    assertThat(with.jobsStoppedAtLimit()).isZero();
  }

  /** Random jobs of one task of at most 8 GPUs, on 8-GPU nodes: nothing ever spreads. */
  @Test
  void nothingIsLostWhenEveryJobFitsOneNvlinkDomain() {
    var random = new SplittableRandom(5);
    var jobs = new ArrayList<TraceJob>();
    long t = 0;
    for (int i = 1; i <= 500; i++) {
      t += random.nextInt(60);
      int gpus = 1 + random.nextInt(8);
      long duration = 1 + random.nextInt(1000);
      jobs.add(new TraceJob(i, t, gpus, duration, duration * 2, "", "default", 0, gpus));
    }
    var trace = of(jobs.toArray(TraceJob[]::new));
    var cluster = Cluster.uniform(8, 8, 2, 2);
    for (Policy policy : Policy.ALL) {
      var with = new Simulator(cluster, "8x8", policy, comm(0.2)).run(trace);
      var without =
          new Simulator(
                  cluster, "8x8", policy, new SimOptions(false, Optional.empty(), true, 1, false))
              .run(trace);
      assertThat(with.gpuHoursLostToSpread()).as(policy.name()).isZero();
      assertThat(with.jobsStoppedAtLimit()).as(policy.name()).isZero();
      assertThat(with.perJob().orElseThrow().startSec())
          .as(policy.name())
          .isEqualTo(without.perJob().orElseThrow().startSec());
      for (int[] nodes : with.perJob().orElseThrow().nodes()) {
        assertThat(nodes).hasSize(1);
      }
    }
  }

  /**
   * Philly (first 3,000 jobs) on 16x8 with racks of 4 nodes: gangs over 8 GPUs must spread over
   * nodes. The file has no estimates (limits are run times, so a stretched job would be stopped at
   * once); with limits of ten times the run time the loss shows.
   */
  @Test
  void phillyGangsThatMustSpreadLoseGpuHours() {
    var philly =
        SimTestTraces.prefix(
            SimTestTraces.read(SimTestTraces.PHILLY, EstimateMode.REQUESTED), 3000);
    assertThat(philly.jobs()).anyMatch(j -> j.gpus() > 8);
    var loose = new ArrayList<TraceJob>();
    for (TraceJob j : philly.jobs()) {
      loose.add(
          new TraceJob(
              j.id(),
              j.submitSec(),
              j.gpus(),
              j.durationSec(),
              j.durationSec() * 10,
              j.user(),
              j.queue(),
              j.priority(),
              j.gpusPerNode()));
    }
    var trace =
        new Trace(philly.source(), philly.format(), loose, loose.size(), 0, false, List.of());
    var cluster = Cluster.uniform(16, 8, 4, 2);
    var options = new SimOptions(false, Optional.of(CommModel.defaults(0.2)), false, 1, false);
    var report = new Simulator(cluster, "16x8", Policy.EASY, options).run(trace);
    assertThat(report.gpuHoursLostToSpread()).isPositive();
    assertThat(report.jobsStoppedAtLimit()).isZero(); // 10x the run time is above every slowdown

    // With the file's own limits (= run times), spread jobs hit their limit instead.
    var own = new Simulator(cluster, "16x8", Policy.EASY, options).run(philly);
    assertThat(own.jobsStoppedAtLimit()).isPositive();

    // No comm model: nothing lost, nothing stopped.
    var off = new Simulator(cluster, "16x8", Policy.EASY, SimOptions.defaults()).run(trace);
    assertThat(off.gpuHoursLostToSpread()).isZero();
    assertThat(off.jobsStoppedAtLimit()).isZero();
    assertThat(off.commModel()).isFalse();
  }
}
