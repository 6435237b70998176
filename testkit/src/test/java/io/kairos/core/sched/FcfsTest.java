package io.kairos.core.sched;

import static io.kairos.testkit.Scenario.reservations;
import static io.kairos.testkit.Scenario.starts;
import static io.kairos.testkit.Scenario.startsAt;
import static io.kairos.testkit.Scenario.waits;

import io.kairos.testkit.Clusters;
import io.kairos.testkit.Jobs;
import io.kairos.testkit.Scenario;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** FCFS: strict arrival order; the first job that cannot start stops everything after it. */
class FcfsTest {

  static Stream<Scenario> scenarios() {
    return Stream.of(
        Scenario.named("blocked head stops every later job, without reservations")
            // 4 x 1 GPU; r holds 3 until 100. h needs 4: blocked. Jobs after it would fit the
            // free GPU but wait for h.
            .cluster(Clusters.oneRack(4, 1))
            .policy(Policy.FCFS)
            .running("r", Jobs.gpus(3).limit(100))
            .pending("h", Jobs.gpus(4).limit(50))
            .pending("short", Jobs.gpus(1).limit(10))
            .pending("long", Jobs.gpus(1).limit(1000))
            .expect(
                waits("h", Reason.INSUFFICIENT_GPUS),
                waits("short", Reason.WAITING_FOR_EARLIER_JOB),
                waits("long", Reason.WAITING_FOR_EARLIER_JOB),
                reservations(0),
                startsAt("h", 100),
                startsAt("short", 150),
                startsAt("long", 150)),
        Scenario.named("jobs before the blocked head start")
            .cluster(Clusters.oneRack(4, 1))
            .policy(Policy.FCFS)
            .running("r", Jobs.gpus(2).limit(100))
            .pending("first", Jobs.gpus(1).limit(1000))
            .pending("h", Jobs.gpus(2).limit(50))
            .pending("after", Jobs.gpus(1).limit(10))
            .expect(
                starts("first"),
                waits("h", Reason.INSUFFICIENT_GPUS),
                waits("after", Reason.WAITING_FOR_EARLIER_JOB),
                reservations(0),
                startsAt("h", 100),
                startsAt("after", 100)),
        Scenario.named("head blocked by fragmentation stops later jobs too")
            // 2 nodes x 4 GPUs; r takes 2 GPUs on each node: 4 free, but no node has 4.
            .cluster(Clusters.oneRack(2, 4))
            .policy(Policy.FCFS)
            .running("r", Jobs.perNode(4, 2).limit(100))
            .pending("h", Jobs.perNode(4, 4).limit(50))
            .pending("small", Jobs.gpus(1).limit(10))
            .expect(
                waits("h", Reason.NO_PLACEMENT),
                waits("small", Reason.WAITING_FOR_EARLIER_JOB),
                reservations(0),
                startsAt("h", 100),
                startsAt("small", 100)),
        Scenario.named("everything that fits in order starts")
            .cluster(Clusters.oneRack(4, 1))
            .policy(Policy.FCFS)
            .pending("a", Jobs.gpus(2))
            .pending("b", Jobs.gpus(1))
            .pending("c", Jobs.gpus(1))
            .expect(starts("a"), starts("b"), starts("c"), reservations(0)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scenarios")
  void scenario(Scenario s) {
    s.check();
  }
}
