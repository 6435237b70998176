package io.kairos.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.sim.trace.EstimateMode;
import io.kairos.sim.trace.Trace;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Properties of whole runs on the real traces: determinism, pass skipping changes no decision, and
 * the invariant checker (including invariant 4, reservations kept) passes.
 */
class SimulatorDeterminismTest {
  /** Philly is slow in full (about 16 s per run here): its first jobs are enough. */
  private static final int PHILLY_PREFIX = 10_000;

  private static Trace kth;
  private static Trace philly;
  private static Trace lublin;

  private static synchronized Trace lublin() {
    if (lublin == null) {
      lublin = SimTestTraces.read(SimTestTraces.LUBLIN, EstimateMode.ACTUAL);
    }
    return lublin;
  }

  /** Read once per class: reading KTH costs about as much as simulating it. */
  private static synchronized Trace kth() {
    if (kth == null) {
      kth = SimTestTraces.read(SimTestTraces.KTH, EstimateMode.REQUESTED);
    }
    return kth;
  }

  private static synchronized Trace philly() {
    if (philly == null) {
      philly =
          SimTestTraces.prefix(
              SimTestTraces.read(SimTestTraces.PHILLY, EstimateMode.REQUESTED), PHILLY_PREFIX);
    }
    return philly;
  }

  private static SimOptions options(boolean check, boolean everyPass) {
    return new SimOptions(check, Optional.empty(), true, 1, everyPass);
  }

  private static Cluster flat(int nodes, int gpus) {
    return Cluster.uniform(nodes, gpus, 16, 8);
  }

  private static void assertSamePerJob(SimJobs a, SimJobs b, String what) {
    assertThat(b.size()).as(what).isEqualTo(a.size());
    assertThat(b.traceIds()).as(what + " ids").isEqualTo(a.traceIds());
    assertThat(b.submitSec()).as(what + " submits").isEqualTo(a.submitSec());
    assertThat(b.startSec()).as(what + " starts").isEqualTo(a.startSec());
    assertThat(b.endSec()).as(what + " ends").isEqualTo(a.endSec());
    assertThat(b.nodes()).as(what + " nodes").isDeepEqualTo(a.nodes());
  }

  @Test
  void sameInputGivesTheSameReportAndPerJobResults() {
    // The Kairos policy: its order depends on time and it uses the seed, the likeliest to drift.
    var cluster = flat(100, 1);
    var a =
        new Simulator(
                cluster, "100x1", Policy.KAIROS, options(false, false), System::nanoTime, null)
            .run(kth());
    var b = new Simulator(flat(100, 1), "100x1", Policy.KAIROS, options(false, false)).run(kth());
    assertThat(a.jobs()).isGreaterThan(28_000);
    assertThat(b.toMap(false)).isEqualTo(a.toMap(false));
    assertSamePerJob(a.perJob().orElseThrow(), b.perJob().orElseThrow(), "kairos on KTH");
  }

  @Test
  void sameInputGivesTheSameReportUnderEasyWithCommModel() {
    var trace = SimTestTraces.prefix(philly(), 3000);
    var options = new SimOptions(false, Optional.of(CommModel.defaults(0.2)), true, 7, false);
    var a = new Simulator(flat(16, 8), "16x8", Policy.EASY, options).run(trace);
    var b = new Simulator(flat(16, 8), "16x8", Policy.EASY, options).run(trace);
    assertThat(b.toMap(false)).isEqualTo(a.toMap(false));
    assertSamePerJob(a.perJob().orElseThrow(), b.perJob().orElseThrow(), "easy+comm on Philly");
  }

  static Stream<Arguments> everyPassCases() {
    return Stream.of(
        Arguments.of("fcfs", "kth"),
        Arguments.of("easy", "kth"),
        Arguments.of("conservative", "kth"),
        Arguments.of("sjf", "kth"),
        Arguments.of("kairos", "kth"),
        Arguments.of("easy", "philly"));
  }

  private static Trace trace(String name) {
    return switch (name) {
      case "kth" -> kth();
      case "philly" -> philly();
      default -> throw new IllegalArgumentException(name);
    };
  }

  private static Cluster clusterFor(String name) {
    return switch (name) {
      case "kth" -> flat(100, 1);
      case "philly" -> flat(64, 8);
      default -> throw new IllegalArgumentException(name);
    };
  }

  /** Skipping passes that provably start nothing changes no decision. */
  @ParameterizedTest(name = "{0} on {1}")
  @MethodSource("everyPassCases")
  void everyPassChangesNoDecision(String policyName, String traceName) {
    var policy = Policy.byName(policyName).orElseThrow();
    var trace = trace(traceName);
    var skipping =
        new Simulator(clusterFor(traceName), "c", policy, options(false, false)).run(trace);
    var every = new Simulator(clusterFor(traceName), "c", policy, options(false, true)).run(trace);
    assertThat(every.passes()).isGreaterThanOrEqualTo(skipping.passes());
    assertSamePerJob(skipping.perJob().orElseThrow(), every.perJob().orElseThrow(), policyName);
  }

  /**
   * Lublin 256 (10,000 jobs on 256x1, no requested times, so limits are run times exactly as with
   * {@code --estimate actual}): one run skipping passes with the invariant checker on (which, for
   * easy and conservative, also checks that a reserved job starts no later than its first
   * reservation), one running every pass; per-job results must match. Two runs instead of three
   * keeps conservative, the slow one, within budget.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"fcfs", "easy", "conservative", "sjf", "kairos"})
  void lublinInvariantsHoldAndEveryPassChangesNoDecision(String policyName) {
    var policy = Policy.byName(policyName).orElseThrow();
    var trace = lublin();
    assertThat(trace.jobs()).hasSize(10_000);
    assertThat(trace.jobs()).allMatch(j -> j.timeLimitSec() == j.durationSec());
    var checked = new SimReport[1];
    assertThatCode(
            () ->
                checked[0] =
                    new Simulator(flat(256, 1), "256x1", policy, options(true, false)).run(trace))
        .doesNotThrowAnyException();
    var every = new Simulator(flat(256, 1), "256x1", policy, options(false, true)).run(trace);
    assertThat(checked[0].jobs()).isEqualTo(10_000);
    assertThat(checked[0].skipped()).isZero();
    assertSamePerJob(checked[0].perJob().orElseThrow(), every.perJob().orElseThrow(), policyName);
    // Sanity of the metrics on a real run.
    var r = checked[0];
    assertThat(r.utilization()).isBetween(0.0, 1.0);
    assertThat(r.meanWaitSec()).isGreaterThanOrEqualTo(0);
    assertThat(r.p50WaitSec()).isLessThanOrEqualTo(r.p95WaitSec());
    assertThat(r.p95WaitSec()).isLessThanOrEqualTo(r.p99WaitSec());
    assertThat(r.p99WaitSec()).isLessThanOrEqualTo(r.maxWaitSec());
    assertThat(r.meanBoundedSlowdown()).isGreaterThanOrEqualTo(1.0);
    var jobs = r.perJob().orElseThrow();
    for (int i = 0; i < jobs.size(); i++) {
      assertThat(jobs.startSec()[i]).isGreaterThanOrEqualTo(jobs.submitSec()[i]);
      assertThat(jobs.endSec()[i] - jobs.startSec()[i])
          .isEqualTo(trace.jobs().get(i).durationSec());
    }
  }
}
