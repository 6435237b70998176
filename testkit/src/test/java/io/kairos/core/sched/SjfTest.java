package io.kairos.core.sched;

import static io.kairos.testkit.Scenario.reserved;
import static io.kairos.testkit.Scenario.starts;
import static io.kairos.testkit.Scenario.startsAt;
import static io.kairos.testkit.Scenario.waits;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.testkit.Clusters;
import io.kairos.testkit.Jobs;
import io.kairos.testkit.Passes;
import io.kairos.testkit.Scenario;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** SJF: shortest time limit first, one reservation for the first blocked job. */
class SjfTest {

  static Stream<Scenario> scenarios() {
    return Stream.of(
        Scenario.named("shortest limit starts first, next shortest is reserved")
            // One GPU. Limits 300, 100, 200 submitted together: order 100, 200, 300.
            .cluster(Clusters.oneRack(1, 1))
            .policy(Policy.SJF)
            .pending("a300", Jobs.gpus(1).limit(300))
            .pending("b100", Jobs.gpus(1).limit(100))
            .pending("c200", Jobs.gpus(1).limit(200))
            .expect(
                starts("b100"),
                reserved("c200", 100),
                waits("a300", Reason.INSUFFICIENT_GPUS),
                startsAt("b100", 0),
                startsAt("c200", 100),
                startsAt("a300", 300)),
        Scenario.named("equal limits keep arrival order")
            .cluster(Clusters.oneRack(1, 1))
            .policy(Policy.SJF)
            .pending("first", Jobs.gpus(1).limit(100))
            .pending("second", Jobs.gpus(1).limit(100))
            .expect(starts("first"), reserved("second", 100), startsAt("second", 100)),
        Scenario.named("priority goes before the limit")
            .cluster(Clusters.oneRack(1, 1))
            .policy(Policy.SJF)
            .pending("short", Jobs.gpus(1).limit(10))
            .pending("urgent", Jobs.gpus(1).limit(1000).priority(1))
            .expect(starts("urgent"), reserved("short", 1000), startsAt("short", 1000)),
        Scenario.named("short job that does not fit is reserved; longer ones backfill around it")
            // 4 x 1 GPU; r holds 2 until 100. The shortest job needs 4: blocked, reserved at
            // 100. A 1-GPU job of 100 s ends in time and starts; one of 500 s would delay it.
            .cluster(Clusters.oneRack(4, 1))
            .policy(Policy.SJF)
            .running("r", Jobs.gpus(2).limit(100))
            .pending("wide", Jobs.gpus(4).limit(50))
            .pending("long", Jobs.gpus(1).limit(500))
            .pending("fits", Jobs.gpus(1).limit(100))
            .expect(
                reserved("wide", 100),
                starts("fits"),
                waits("long", Reason.WOULD_DELAY_RESERVATION),
                startsAt("wide", 100)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scenarios")
  void scenario(Scenario s) {
    s.check();
  }

  @Test
  void passConsidersJobsByLimit() {
    var run =
        Scenario.named("order")
            .cluster(Clusters.oneRack(1, 1))
            .policy(Policy.SJF)
            .pending("a", Jobs.gpus(1).limit(300))
            .pending("b", Jobs.gpus(1).limit(100))
            .pending("c", Jobs.gpus(1).limit(200))
            .pending("d", Jobs.gpus(1).limit(100))
            .run();

    assertThat(Passes.order(run.pass()))
        .containsExactly(run.id("b"), run.id("d"), run.id("c"), run.id("a"));
  }
}
