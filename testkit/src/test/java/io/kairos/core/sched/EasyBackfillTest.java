package io.kairos.core.sched;

import static io.kairos.testkit.Scenario.reservations;
import static io.kairos.testkit.Scenario.reserved;
import static io.kairos.testkit.Scenario.starts;
import static io.kairos.testkit.Scenario.startsAt;
import static io.kairos.testkit.Scenario.startsOn;
import static io.kairos.testkit.Scenario.waits;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.testkit.Clusters;
import io.kairos.testkit.Jobs;
import io.kairos.testkit.Scenario;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * EASY backfilling: arrival order, one reservation for the first blocked job, later jobs start only
 * if they do not delay it.
 */
class EasyBackfillTest {

  /**
   * The textbook case, on 10 nodes of 1 GPU in one rack (node i = GPU i), at t=0:
   *
   * <pre>
   *   r  6 GPUs until t=100, started first: nodes 0..5. Free now: nodes 6..9 (4 GPUs).
   *   h  9 GPUs, limit 50   head; 9 > 4 free: INSUFFICIENT_GPUS, reserved at t=100 (r ends);
   *                         of the 10 GPUs free then, 1 is extra. One-GPU tasks: the
   *                         reservation floats (a count, held on no node in particular).
   *   a  1 GPU,  limit 50   ends at 50 <= 100: unconstrained, backfills on node 6 (best fit,
   *                         lowest index). Free: 7, 8, 9.
   *   b  2 GPUs, limit 500  ends after 100: may use only the extra GPU (1) -> would delay h.
   *   c  1 GPU,  limit 500  ends after 100 but fits in the extra GPU: starts on node 7 (any
   *                         free node will do). Free: 8, 9; extra left: 0.
   *   d  1 GPU,  limit 500  the extra GPU is used up -> would delay h.
   *   e  3 GPUs, limit 10   3 > 2 free: INSUFFICIENT_GPUS.
   *   f  2 GPUs, limit 100  ends exactly at 100, when h starts: unconstrained, starts on 8, 9.
   *   g  1 GPU,  limit 1    nothing is free any more: INSUFFICIENT_GPUS.
   * </pre>
   *
   * Running on (every job runs to its limit): a ends at 50 and g backfills 50..51 on node 6 (it
   * ends before 100); at 100 r and f end and h starts on the 9 free nodes; at 100 b is the first
   * blocked job and is reserved at 150, when h ends; at 150 b, d and e start together.
   */
  static Scenario textbook() {
    return Scenario.named("textbook EASY")
        .cluster(Clusters.oneRack(10, 1))
        .policy(Policy.EASY)
        .running("r", Jobs.gpus(6).limit(100))
        .pending("h", Jobs.gpus(9).limit(50))
        .pending("a", Jobs.gpus(1).limit(50))
        .pending("b", Jobs.gpus(2).limit(500))
        .pending("c", Jobs.gpus(1).limit(500))
        .pending("d", Jobs.gpus(1).limit(500))
        .pending("e", Jobs.gpus(3).limit(10))
        .pending("f", Jobs.gpus(2).limit(100))
        .pending("g", Jobs.gpus(1).limit(1));
  }

  static Stream<Arguments> textbookRows() {
    return Stream.of(
        row("blocked head is reserved when the running job ends", reserved("h", 100)),
        row("only the head gets a reservation", reservations(1)),
        row("short job backfills now", startsOn("a", 6)),
        row(
            "long job that needs GPUs the head needs waits",
            waits("b", Reason.WOULD_DELAY_RESERVATION)),
        row("long job in the GPU the head does not need starts", startsOn("c", 7)),
        row(
            "once the spare GPU is taken, a long job waits",
            waits("d", Reason.WOULD_DELAY_RESERVATION)),
        row("job larger than what is free waits", waits("e", Reason.INSUFFICIENT_GPUS)),
        row("job ending exactly at the reservation starts", startsOn("f", 8, 9)),
        row("nothing free is left for the last job", waits("g", Reason.INSUFFICIENT_GPUS)),
        row("the head starts exactly at its reservation", startsAt("h", 100)),
        row("a 1 s job backfills when the first short job ends", startsAt("g", 50)),
        row("the next head starts when the first head ends", startsAt("b", 150)),
        row("waiting jobs start together when the head ends", startsAt("e", 150)));
  }

  private static Arguments row(String name, Scenario.Expect expect) {
    return Arguments.of(Named.of(name, expect));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("textbookRows")
  void textbook(Scenario.Expect expect) {
    textbook().expect(expect).check();
  }

  @Test
  void textbookReservationHoldsEveryGpuTheHeadNeeds() {
    var run = textbook().run();
    var h = run.pass().reservations().getFirst();

    assertThat(h.job()).isEqualTo(run.id("h"));
    // A count of 9 one-GPU tasks, held on no node in particular.
    assertThat(h.placement().nodeCount()).isZero();
    assertThat(run.pass().starts())
        .extracting(Decision.Start::job)
        .containsExactly(run.id("a"), run.id("c"), run.id("f"));
    assertThat(run.pass().diagnosis().started()).isEqualTo(3);
    assertThat(run.pass().diagnosis().count(Reason.WOULD_DELAY_RESERVATION)).isEqualTo(2);
    assertThat(run.pass().diagnosis().count(Reason.INSUFFICIENT_GPUS)).isEqualTo(2);
    assertThat(run.pass().diagnosis().count(Reason.RESERVED)).isEqualTo(1);
  }

  static Stream<Scenario> scenarios() {
    return Stream.of(
        Scenario.named("head needs the whole cluster: only jobs ending by then backfill")
            // 4 x 1 GPU; r holds 3 until 100; h needs all 4 -> reserved at 100, no spare.
            .cluster(Clusters.oneRack(4, 1))
            .running("r", Jobs.gpus(3).limit(100))
            .pending("h", Jobs.gpus(4).limit(50))
            .pending("long", Jobs.gpus(1).limit(101))
            .pending("short", Jobs.gpus(1).limit(100))
            .expect(
                reserved("h", 100),
                waits("long", Reason.WOULD_DELAY_RESERVATION),
                starts("short"),
                startsAt("h", 100),
                startsAt("long", 150)),
        Scenario.named("reservation waits for the last release it needs")
            // 4 x 1 GPU; r1 holds 2 until 100, r2 holds 1 until 300: h (4) is reserved at 300,
            // so a 1-GPU job of 200 s (ends 200) backfills, one of 300 s (ends 300) too.
            .cluster(Clusters.oneRack(4, 1))
            .running("r1", Jobs.gpus(2).limit(100))
            .running("r2", Jobs.gpus(1).limit(300))
            .pending("h", Jobs.gpus(4).limit(10))
            .pending("fits-until-300", Jobs.gpus(1).limit(300))
            .expect(reserved("h", 300), starts("fits-until-300"), startsAt("h", 300)),
        Scenario.named("head that fits starts; the next blocked job is the one reserved")
            .cluster(Clusters.oneRack(4, 1))
            .running("r", Jobs.gpus(2).limit(100))
            .pending("fits", Jobs.gpus(2).limit(1000))
            .pending("blocked", Jobs.gpus(3).limit(10))
            .expect(starts("fits"), reserved("blocked", 1000), startsAt("blocked", 1000)),
        Scenario.named("per-node head: spare GPUs on its nodes may be backfilled")
            // 2 nodes x 4 GPUs; r holds 3 GPUs of each node until 100 (one flexible 6-GPU gang
            // packs node 0 with 4 and node 1 with 2: free 0 + 2). h = 2 tasks x 2 GPUs on
            // distinct nodes: at 100 both nodes are free, h is placed on 2 GPUs of each, and
            // 2 GPUs per node stay spare. A long 2-GPU job fits the spare of node 1 now.
            .cluster(Clusters.oneRack(2, 4))
            .running("r", Jobs.gpus(6).limit(100))
            .pending("h", Jobs.perNode(4, 2).limit(50).runtime(50))
            .pending("long", Jobs.tasks(1, 2).limit(1000))
            .expect(reserved("h", 100), startsOn("long", 1), startsAt("h", 100)));
  }

  /**
   * 3 nodes x 4 GPUs, one rack. r1 and r2 (one 4-GPU task each, kept off n0) hold nodes 1 and 2
   * until 100; node 0 is free now. h (2 tasks x 4 GPUs on distinct nodes) is reserved at 100, when
   * all three nodes are free: best fit, lowest index, pins nodes 0 and 1. x (one 4-GPU task, 1,000
   * s) fits only node 0, which h holds. But h fits nodes 1 and 2 as well at 100: the reservation
   * moves there, and x starts on node 0. (A count would not do here: h needs two whole nodes, and
   * x's 4 GPUs must not leave h with 4 GPUs spread over two nodes.)
   */
  static Scenario pinnedHead(Jobs.Builder head) {
    return Scenario.named("a pinned reservation moves out of a long job's way")
        .cluster(Clusters.oneRack(3, 4))
        .running("r1", Jobs.tasks(1, 4).limit(100).exclude("n0"))
        .running("r2", Jobs.tasks(1, 4).limit(100).exclude("n0"))
        .pending("h", head.limit(50))
        .pending("x", Jobs.tasks(1, 4).limit(1000));
  }

  @Test
  void aPinnedReservationMovesToLetALongJobStart() {
    var run =
        pinnedHead(Jobs.perNode(8, 4))
            .expect(reserved("h", 100), startsOn("x", 0), startsAt("h", 100))
            .check();
    assertThat(run.pass().reservations().getFirst().placement().nodes()).containsExactly(1, 2);
  }

  @Test
  void aPinnedReservationThatCannotMoveStillHoldsItsNodes() {
    // h needs all three nodes at 100: there is nowhere else to go, so x would delay it.
    pinnedHead(Jobs.perNode(12, 4))
        .expect(
            reserved("h", 100),
            waits("x", Reason.WOULD_DELAY_RESERVATION),
            startsAt("h", 100),
            startsAt("x", 150))
        .check();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scenarios")
  void scenario(Scenario s) {
    s.check();
  }
}
