package io.kairos.control.state;

import static io.kairos.control.state.StateFixtures.T0;
import static io.kairos.control.state.StateFixtures.register;
import static io.kairos.control.state.StateFixtures.start;
import static io.kairos.control.state.StateFixtures.submit;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.state.ControlCommand.NodeDown;
import io.kairos.control.state.ControlCommand.SettleNodes;
import io.kairos.protocol.NodeState;
import org.junit.jupiter.api.Test;

/**
 * Registration is O(1): a burst of new nodes marks the store stale once and the next command of
 * another kind rebuilds it once; an agent that registers again with the same shape is updated in
 * place, without a rebuild. (The figures are {@code kairos bench heartbeats}'s, in
 * docs/performance.md.)
 */
class RegistrationCostTest {
  @Test
  void aBurstOfNewNodesIsOneRebuildAtTheNextOtherCommand() {
    var s = new ControlState();
    s.apply(register("n0", 8));
    s.apply(new SettleNodes(T0));
    var built = s.store();
    for (int i = 1; i <= 100; i++) {
      s.apply(register("n" + i, 8));
      assertThat(s.store()).as("registration %d rebuilt nothing", i).isSameAs(built);
    }
    assertThat(s.storeIsStale()).isTrue();
    assertThat(built.cluster().nodeCount()).isEqualTo(1);

    s.apply(submit(8));

    assertThat(s.storeIsStale()).isFalse();
    assertThat(s.store()).isNotSameAs(built);
    assertThat(s.store().cluster().nodeCount()).isEqualTo(101);
    assertThat(s.apply(start(1, "n100", 0, 1, 2, 3, 4, 5, 6, 7)).ids()).containsExactly(1L);
    assertThat(StateInvariants.violations(s)).isEmpty();
  }

  @Test
  void anAgentRestartWithTheSameShapeUpdatesTheStoreInPlace() {
    var s = new ControlState();
    s.apply(register("n1", 8));
    s.apply(register("n2", 8));
    s.apply(new SettleNodes(T0));
    var built = s.store();
    long epoch = s.node("n1").orElseThrow().epoch;
    s.apply(new NodeDown(T0 + 1, "n1", epoch, "lost", T0 + 2));
    int n1 = built.cluster().indexOf("n1").orElseThrow();
    assertThat(built.isCordoned(n1)).isTrue();

    s.apply(register("n1", 8));

    assertThat(s.storeIsStale()).isFalse();
    assertThat(s.store()).isSameAs(built);
    assertThat(s.node("n1").orElseThrow().state).isEqualTo(NodeState.UP);
    assertThat(built.isCordoned(n1)).as("uncordoned in place").isFalse();
    assertThat(StateInvariants.violations(s)).isEmpty();

    // Other hardware: the store must be rebuilt (stale until the next command).
    s.apply(register("n1", 4));
    assertThat(s.storeIsStale()).isTrue();
    s.apply(new SettleNodes(T0 + 3));
    assertThat(s.store().cluster().gpuCount(s.store().cluster().indexOf("n1").orElseThrow()))
        .isEqualTo(4);
    assertThat(StateInvariants.violations(s)).isEmpty();
  }
}
