package io.kairos.sim;

import static io.kairos.sim.SimTestTraces.job;
import static io.kairos.sim.SimTestTraces.of;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.sim.trace.EstimateMode;
import io.kairos.sim.trace.Trace;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** --predictions: forecasts at arrival and each hour of waiting, scored against real starts. */
class StartPredictionsTest {
  private static final SimOptions PREDICT =
      new SimOptions(false, Optional.empty(), true, 1, false).withPredictions(true);

  private static SimReport run(Policy policy, SimOptions options, Trace trace) {
    return new Simulator(Cluster.uniform(1, 1, 16, 8), "test", policy, options).run(trace);
  }

  /**
   * One GPU: J1 runs 0..100; J2 arrives at 1 and is told 100 (J1 runs to its limit), exactly right.
   * The naive baseline (now plus the mean wait so far, 0) says 1: 99 s off. J1 started at once and
   * was never shown a prediction.
   */
  @Test
  void aJobWaitingForARunningJobIsToldItsEnd() {
    var report = run(Policy.EASY, PREDICT, of(job(1, 0, 1, 100), job(2, 1, 1, 50)));
    var p = report.predictions().orElseThrow();
    assertThat(p.predictions()).isEqualTo(1);
    assertThat(p.p50ErrorSec()).isZero();
    assertThat(p.within10Min()).isEqualTo(1.0);
    assertThat(p.baselineP50ErrorSec()).isEqualTo(99);
    assertThat(p.baselineWithin10Min()).isEqualTo(1.0);
  }

  /**
   * J2 waits 9,999 s for J1: predicted at 1, 3,601 and 7,201 (each hour of its wait), each time
   * 10,000, exactly; the baseline's errors are 9,999, 6,399 and 2,799 s.
   */
  @Test
  void aLongWaitIsPredictedAgainEveryHour() {
    var report = run(Policy.EASY, PREDICT, of(job(1, 0, 1, 10_000), job(2, 1, 1, 50)));
    var p = report.predictions().orElseThrow();
    assertThat(p.predictions()).isEqualTo(3);
    assertThat(p.p90ErrorSec()).isZero();
    assertThat(p.baselineP50ErrorSec()).isEqualTo(6_399);
    assertThat(p.baselineP90ErrorSec()).isEqualTo(9_999);
    assertThat(p.baselineWithin1Hour())
        .isCloseTo(1 / 3.0, org.assertj.core.api.Assertions.within(1e-9));
  }

  /**
   * J1 asks 1,000 s but runs 100, then J2 (asks 1,000, runs 100) runs 100..200 and J3 arrives at
   * 101. The user's one finished job ran a tenth of its limit, so J2 is expected to end at 200, not
   * 1,100: J3 is told 200, exactly.
   */
  @Test
  void aUsersRecentShareOfTheLimitShortensTheExpectedRun() {
    var trace = of(job(1, 0, 1, 100, 1_000), job(2, 50, 1, 100, 1_000), job(3, 101, 1, 100, 1_000));
    var p = run(Policy.EASY, PREDICT, trace).predictions().orElseThrow();
    // J2 at 50 (J1 expected to its limit: told 1,000, off by 900) and J3 at 101 (told 200: exact).
    assertThat(p.predictions()).isEqualTo(2);
    assertThat(p.p50ErrorSec()).isZero();
    assertThat(p.p90ErrorSec()).isEqualTo(900);
  }

  @Test
  void predictionsAndTheirAbsenceChangeNoDecision() {
    var trace =
        SimTestTraces.prefix(SimTestTraces.read(SimTestTraces.KTH, EstimateMode.REQUESTED), 3_000);
    var cluster = Cluster.uniform(100, 1, 16, 8);
    for (Policy policy : Policy.ALL) {
      var plain = new SimOptions(false, Optional.empty(), true, 1, false);
      var a = new Simulator(cluster, "kth", policy, plain).run(trace);
      var b = new Simulator(cluster, "kth", policy, plain.withPredictions(true)).run(trace);
      assertThat(b.perJob().orElseThrow().startSec())
          .as(policy.name())
          .containsExactly(a.perJob().orElseThrow().startSec());
      assertThat(a.predictions()).isEmpty();
      assertThat(b.predictions().orElseThrow().predictions()).as(policy.name()).isPositive();
    }
  }

  /** A job that starts on arrival is never shown a prediction, under every policy. */
  @ParameterizedTest
  @ValueSource(strings = {"fcfs", "easy", "conservative", "sjf", "kairos"})
  void jobsThatNeverWaitAreNotScored(String name) {
    var report =
        run(Policy.byName(name).orElseThrow(), PREDICT, of(job(1, 0, 1, 10), job(2, 20, 1, 10)));
    assertThat(report.predictions().orElseThrow().predictions()).isZero();
  }
}
