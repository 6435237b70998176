package io.kairos.core.sched;

import static io.kairos.testkit.Scenario.reserved;
import static io.kairos.testkit.Scenario.starts;
import static io.kairos.testkit.Scenario.startsAt;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.JobId;
import io.kairos.core.sched.order.JobOrder;
import io.kairos.testkit.Clusters;
import io.kairos.testkit.Jobs;
import io.kairos.testkit.Scenario;
import io.kairos.testkit.SchedulerHarness;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * KAIROS: largest expansion factor {@code (wait + limit) / limit} first (limits below 60 s count as
 * 60), one reservation for the first blocked job.
 */
class KairosPolicyTest {

  /**
   * One GPU, held by a blocker until 1000. "long" (limit 10,000) arrives at 0, "short" (limit 100)
   * at 500. At 1000: long's factor is (1000 + 10000) / 10000 = 1.1, short's is (500 + 100) / 100 =
   * 6: short goes first. Arrival order (EASY) starts long instead.
   */
  static Scenario shortWaited(Policy policy) {
    return Scenario.named(policy.name() + ": a short job that waited vs. a long one")
        .cluster(Clusters.oneRack(1, 1))
        .policy(policy)
        .running("blocker", Jobs.gpus(1).limit(1000))
        .pendingAt(0, "long", Jobs.gpus(1).limit(10_000))
        .pendingAt(500, "short", Jobs.gpus(1).limit(100))
        .passAt(1000);
  }

  /**
   * One GPU, held by a blocker until 10,000. "long" (limit 1000) arrives at 0, "fresh" (limit 100)
   * at 10,000. At 10,000: long's factor is (10000 + 1000) / 1000 = 11, fresh's is 1: long goes
   * first. SJF starts the fresh short job instead.
   */
  static Scenario longWaitedLongEnough(Policy policy) {
    return Scenario.named(policy.name() + ": a long job that waited long enough vs. a fresh one")
        .cluster(Clusters.oneRack(1, 1))
        .policy(policy)
        .running("blocker", Jobs.gpus(1).limit(10_000))
        .pendingAt(0, "long", Jobs.gpus(1).limit(1000))
        .pendingAt(10_000, "fresh", Jobs.gpus(1).limit(100))
        .passAt(10_000);
  }

  static Stream<Scenario> scenarios() {
    return Stream.of(
        shortWaited(Policy.KAIROS)
            .expect(starts("short"), reserved("long", 1100), startsAt("long", 1100)),
        shortWaited(Policy.EASY).expect(starts("long"), reserved("short", 11_000)),
        longWaitedLongEnough(Policy.KAIROS)
            .expect(starts("long"), reserved("fresh", 11_000), startsAt("fresh", 11_000)),
        longWaitedLongEnough(Policy.SJF).expect(starts("fresh"), reserved("long", 10_100)),
        Scenario.named("limits below 60 s count as 60 s")
            // At 1000: long (limit 1000, waited 1000) has factor 2; tiny (limit 1, waited 30)
            // has (30 + 60) / 60 = 1.5, not (30 + 1) / 1 = 31: long goes first.
            .cluster(Clusters.oneRack(1, 1))
            .policy(Policy.KAIROS)
            .running("blocker", Jobs.gpus(1).limit(1000))
            .pendingAt(0, "long", Jobs.gpus(1).limit(1000))
            .pendingAt(970, "tiny", Jobs.gpus(1).limit(1))
            .passAt(1000)
            .expect(starts("long"), reserved("tiny", 2000)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scenarios")
  void scenario(Scenario s) {
    s.check();
  }

  /** SJF without any reservation: short jobs always pass. */
  static final Policy SJF_NO_RESERVATION =
      new Policy("sjf-no-reservation", JobOrder.SHORTEST_LIMIT, true, 0);

  static final long STREAM_END_SEC = 2000;

  /**
   * A wide job in a stream of short ones. 4 nodes x 1 GPU. At t=0 two short jobs (1 GPU, 100 s) and
   * then the wide job (4 GPUs, 1000 s) arrive; every 50 s until {@value #STREAM_END_SEC} two more
   * short jobs arrive. Short jobs take the GPUs as they free up in pairs, so the four GPUs are
   * never free together unless the wide job holds a reservation that the short jobs must respect
   * while it is the first in order.
   *
   * <ul>
   *   <li>EASY: the wide job is first by arrival from t=50: reserved at 100, starts at 100.
   *   <li>KAIROS: at t=50 the wide job (factor 1.05) is first and is reserved at 100, so the two
   *       new short jobs wait. At t=100 those two have waited 50 s (factor 1.5) and go before the
   *       wide job (1.1): they start, the wide job is reserved at 200, and the same repeats every
   *       100 s. At t=500 the wide job's factor (500 + 1000) / 1000 = 1.5 ties with the waiting
   *       short jobs' (50 + 100) / 100 and its lower id wins: it starts at 500.
   *   <li>SJF: the new short jobs are always first; each pass they take the free GPUs before the
   *       wide job is reserved, so its reservation moves later every pass: it starts only after the
   *       stream ends (2100).
   *   <li>SJF without reservations: the same.
   * </ul>
   */
  static Stream<Arguments> stream() {
    return Stream.of(
        Arguments.of(Named.of("easy", Policy.EASY), 100L),
        Arguments.of(Named.of("kairos", Policy.KAIROS), 500L),
        Arguments.of(Named.of("sjf (starves)", Policy.SJF), STREAM_END_SEC + 100),
        Arguments.of(
            Named.of("sjf without reservation (starves)", SJF_NO_RESERVATION),
            STREAM_END_SEC + 100));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("stream")
  void wideJobInAStreamOfShortJobs(Policy policy, long expectedStart) {
    var h = SchedulerHarness.of(Clusters.oneRack(4, 1)).policy(policy);
    h.submit(Jobs.gpus(1).limit(100));
    h.submit(Jobs.gpus(1).limit(100));
    JobId wide = h.submit(Jobs.gpus(4).limit(1000));
    for (long t = 50; t <= STREAM_END_SEC; t += 50) {
      h.submitAt(t, Jobs.gpus(1).limit(100));
      h.submitAt(t, Jobs.gpus(1).limit(100));
    }

    h.runUntilIdle();

    assertThat(h.startOf(wide)).hasValue(expectedStart);
    assertThat(h.unfinished()).isEmpty();
  }

  /**
   * An overloaded stream: three short jobs (1 GPU, 100 s) every 50 s until t=5000 on 4 GPUs
   * (capacity: two per 50 s), so short jobs queue too. A short job that arrived at {@code a} has
   * factor {@code 1 + (t - a) / 100} at {@code t}, the wide job {@code 1 + t / 1000}: the wide job
   * goes first only when the oldest waiting short job has waited less than t / 10. With the backlog
   * growing, the oldest short job has waited about t / 3, so by expansion factor alone the wide job
   * is never first while the overload lasts (it started at 7600, after the backlog drained). The
   * starvation guard promotes it once it is the oldest job and has waited 3 times its limit and an
   * hour: it starts soon after t=3600.
   */
  @Test
  void wideJobInAnOverloadedStreamStartsBeforeTheOverloadEnds() {
    long start = overloadedStream(Policy.KAIROS);

    assertThat(start).isLessThan(5000);
  }

  @Test
  void wideJobInAnOverloadedStreamUnderEasyStartsAtOnce() {
    assertThat(overloadedStream(Policy.EASY)).isEqualTo(100);
  }

  private static long overloadedStream(Policy policy) {
    var h = SchedulerHarness.of(Clusters.oneRack(4, 1)).policy(policy);
    for (int i = 0; i < 3; i++) {
      h.submit(Jobs.gpus(1).limit(100));
    }
    JobId wide = h.submit(Jobs.gpus(4).limit(1000));
    for (long t = 50; t <= 5000; t += 50) {
      for (int i = 0; i < 3; i++) {
        h.submitAt(t, Jobs.gpus(1).limit(100));
      }
    }

    h.runUntilIdle();

    assertThat(h.unfinished()).isEmpty();
    return h.startOf(wide).orElseThrow();
  }
}
