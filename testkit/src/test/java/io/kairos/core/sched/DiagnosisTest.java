package io.kairos.core.sched;

import static io.kairos.testkit.Scenario.reserved;
import static io.kairos.testkit.Scenario.starts;
import static io.kairos.testkit.Scenario.waits;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.testkit.Clusters;
import io.kairos.testkit.Jobs;
import io.kairos.testkit.Scenario;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Why jobs wait: each reason where it applies, and counts that add up. */
class DiagnosisTest {

  /**
   * 2 nodes x 4 GPUs, one rack. r runs 2 tasks of 2 GPUs on distinct nodes until 100: 2 GPUs free
   * on each node. h needs all 8: reserved at 100 with nothing spare.
   */
  static Scenario fragmented() {
    return Scenario.named("fragmented")
        .cluster(Clusters.oneRack(2, 4))
        .policy(Policy.EASY)
        .running("r", Jobs.perNode(4, 2).limit(100))
        .pending("h", Jobs.gpus(8).limit(50));
  }

  static Stream<Scenario> scenarios() {
    return Stream.of(
        fragmented()
            .pending("whole-node-short", Jobs.perNode(4, 4).limit(50))
            .pending("fits-short", Jobs.gpus(2).limit(50))
            .expect(
                reserved("h", 100),
                // 4 GPUs are free, but no node has 4; it would end before the reservation.
                waits("whole-node-short", Reason.NO_PLACEMENT),
                starts("fits-short")),
        fragmented()
            .pending("long", Jobs.gpus(2).limit(500))
            .expect(reserved("h", 100), waits("long", Reason.WOULD_DELAY_RESERVATION)),
        fragmented()
            .pending("too-big", Jobs.gpus(5).limit(10))
            .expect(waits("too-big", Reason.INSUFFICIENT_GPUS)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scenarios")
  void scenario(Scenario s) {
    s.check();
  }

  /**
   * A job that fits the free GPUs in total but that no set of nodes can hold even without any
   * reservation (fragmentation) is reported as WOULD_DELAY_RESERVATION as soon as it would run past
   * a reservation's start, although {@link Reason#WOULD_DELAY_RESERVATION} means "it would fit,
   * but...". Same job with a limit ending before the reservation: NO_PLACEMENT (above).
   */
  @Test
  void unplaceableGangIsNoPlacementEvenWhenItWouldRunPastAReservation() {
    fragmented()
        .pending("whole-node-long", Jobs.perNode(4, 4).limit(500))
        .expect(reserved("h", 100), waits("whole-node-long", Reason.NO_PLACEMENT))
        .check();
  }

  /** Same, through the failed-shape memo: the first job's NO_PLACEMENT is reused wrongly. */
  @Test
  void memoisedNoPlacementStaysNoPlacement() {
    fragmented()
        .pending("short", Jobs.perNode(4, 4).limit(50))
        .pending("long", Jobs.perNode(4, 4).limit(500))
        .expect(waits("short", Reason.NO_PLACEMENT), waits("long", Reason.NO_PLACEMENT))
        .check();
  }

  @Test
  void countsAddUpToThePendingJobs() {
    var run =
        fragmented()
            .pending("a", Jobs.gpus(1).limit(10))
            .pending("b", Jobs.gpus(2).limit(500))
            .pending("c", Jobs.gpus(7).limit(10))
            .run();
    var d = run.pass().diagnosis();

    int sum = d.started();
    for (Reason r : Reason.values()) {
      sum += d.count(r);
    }
    assertThat(d.size()).isEqualTo(4);
    assertThat(sum).isEqualTo(d.size());
    assertThat(d.started()).isEqualTo(run.pass().starts().size());
    assertThat(d.count(Reason.RESERVED)).isEqualTo(run.pass().reservations().size());
  }
}
