package io.kairos.core.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.command.Applied;
import io.kairos.core.sched.Policy;
import io.kairos.testkit.Generators;
import io.kairos.testkit.Properties;
import io.kairos.testkit.RuntimeModel;
import io.kairos.testkit.StoreState;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Replay: applying a run's command log to an empty store gives the same state, at the end and after
 * every prefix of the log checked along the way (the state machine is deterministic).
 */
class ReplayProperties {
  static Stream<Arguments> seeds() {
    return Properties.policiesAndSeeds(java.util.List.of(Policy.KAIROS));
  }

  @ParameterizedTest(name = "{0} seed {1}")
  @MethodSource("seeds")
  void replayingTheLogGivesTheSameState(Policy policy, long seed) {
    var c = Generators.seeded(seed).randomCase(40);
    Properties.check(
        seed,
        () -> {
          var h = c.harness(policy, RuntimeModel.EXPLICIT);
          h.runUntil(h.nowSec() + 1 + seed * 37 % 3000);
          var live = StoreState.of(h.store());

          var replica = new ClusterStore(c.cluster());
          for (var command : h.log()) {
            assertThat(Reducer.apply(replica, command)).isEqualTo(Applied.ACCEPTED);
          }

          assertThat(StoreState.of(replica)).isEqualTo(live);
        });
  }
}
