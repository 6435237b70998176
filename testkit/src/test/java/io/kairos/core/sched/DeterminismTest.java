package io.kairos.core.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.testkit.Generators;
import io.kairos.testkit.Passes;
import io.kairos.testkit.RuntimeModel;
import io.kairos.testkit.StoreState;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The same input gives the same decisions; a pass reads its snapshot and changes nothing. */
class DeterminismTest {

  static Stream<Arguments> policies() {
    return Policy.ALL.stream().map(p -> Arguments.of(Named.of(p.name(), p)));
  }

  private static void assertSameDecisions(PassResult a, PassResult b) {
    assertThat(b.starts()).isEqualTo(a.starts());
    assertThat(b.reservations()).isEqualTo(a.reservations());
    assertThat(Passes.order(b)).isEqualTo(Passes.order(a));
    for (var id : Passes.order(a)) {
      assertThat(Passes.reason(b, id)).isEqualTo(Passes.reason(a, id));
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("policies")
  void samePassInputTwiceGivesEqualDecisions(Policy policy) {
    var run = EasyBackfillTest.textbook().policy(policy).run();
    var h = run.harness();
    var input = new PassInput(h.store().snapshot(), h.nowSec(), 7);

    var first = new SchedulingPass(policy).run(input);
    var second = new SchedulingPass(policy).run(input);
    var fromAnotherSnapshot =
        new SchedulingPass(policy).run(new PassInput(h.store().snapshot(), h.nowSec(), 7));

    assertThat(first.diagnosis().size()).isEqualTo(8);
    if (policy.backfill()) {
      assertThat(first.starts()).isNotEmpty();
    }
    assertSameDecisions(first, second);
    assertSameDecisions(first, fromAnotherSnapshot);
    assertSameDecisions(first, run.pass());
  }

  @Test
  void aPassChangesNeitherItsSnapshotNorTheStore() {
    var run = EasyBackfillTest.textbook().run();
    var h = run.harness();
    var before = StoreState.of(h.store());
    var snapshot = h.store().snapshot();
    long[] masks = new long[snapshot.cluster().nodeCount()];
    for (int i = 0; i < masks.length; i++) {
      masks[i] = snapshot.freeMask(i);
    }
    var pending = new java.util.ArrayList<>();
    for (int i = 0; i < snapshot.pendingCount(); i++) {
      pending.add(snapshot.pending(i));
    }

    new SchedulingPass(Policy.CONSERVATIVE).run(new PassInput(snapshot, h.nowSec(), 0));

    for (int i = 0; i < masks.length; i++) {
      assertThat(snapshot.freeMask(i)).isEqualTo(masks[i]);
    }
    for (int i = 0; i < snapshot.pendingCount(); i++) {
      assertThat(snapshot.pending(i)).isEqualTo(pending.get(i));
    }
    assertThat(StoreState.of(h.store())).isEqualTo(before);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("policies")
  void sameGeneratedWorkloadTwiceGivesTheSameRun(Policy policy) {
    var generated = Generators.seeded(42).randomCase(40);

    var a = generated.harness(policy, RuntimeModel.EXPLICIT).runUntilIdle();
    var b = generated.harness(policy, RuntimeModel.EXPLICIT).runUntilIdle();

    assertThat(b.startTimes()).isEqualTo(a.startTimes());
    assertThat(b.log()).isEqualTo(a.log());
  }

  @Test
  void sameSeedGivesTheSameCase() {
    for (long seed : List.of(0L, 1L, 99L)) {
      assertThat(Generators.seeded(seed).randomCase(30).toString())
          .isEqualTo(Generators.seeded(seed).randomCase(30).toString());
    }
  }
}
