package io.kairos.control.state;

import static io.kairos.control.state.StateFixtures.T0;
import static io.kairos.control.state.StateFixtures.cancel;
import static io.kairos.control.state.StateFixtures.ended;
import static io.kairos.control.state.StateFixtures.gang;
import static io.kairos.control.state.StateFixtures.register;
import static io.kairos.control.state.StateFixtures.restartable;
import static io.kairos.control.state.StateFixtures.start;
import static io.kairos.control.state.StateFixtures.startTasks;
import static io.kairos.control.state.StateFixtures.submit;
import static io.kairos.control.state.StateFixtures.task;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.state.ControlCommand.NodeDown;
import io.kairos.control.state.ControlCommand.PreemptJobs;
import io.kairos.control.state.ControlCommand.Preemption;
import io.kairos.protocol.JobState;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * No overlap, ever (DESIGN.md invariant 6): a stopping two-node gang lets its GPUs go node by node,
 * each when that node has confirmed its task ended. Whatever stops the gang (a cancel, a failure
 * that requeues it, a preemption, the loss of one node, an agent restart), the next job may start
 * on the node that confirmed, and is refused on the node whose task may still run.
 *
 * <p>Before this rule, a stopping gang held every node until all had stopped (wasteful), and a node
 * that came back with other resources let the whole gang go at once, its tasks elsewhere still
 * running (the overlap).
 */
class GangReleaseTest {
  /** How a gang running on n1 and n2 (GPUs 0-3 each) is made to stop, leaving n2 unconfirmed. */
  record Stop(String name, Consumer<ControlState> stop) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Stop> stops() {
    return Stream.of(
        new Stop(
            "a cancel, n1's task confirmed",
            s -> {
              ok(s, cancel(1));
              ok(s, ended("n1", epoch(s, "n1"), 1, 1, 0, 143));
            }),
        new Stop(
            "a failure on n1 that requeues the gang",
            s -> ok(s, ended("n1", epoch(s, "n1"), 1, 1, 0, 1))),
        new Stop(
            "a preemption, n1's task confirmed",
            s -> {
              ok(s, new PreemptJobs(T0 + 10, 30, List.of(new Preemption(1, 2, "PRIORITY", ""))));
              ok(s, ended("n1", epoch(s, "n1"), 1, 1, 0, 143));
            }),
        new Stop(
            "n1 lost (down, fenced)",
            s -> ok(s, new NodeDown(T0 + 10, "n1", epoch(s, "n1"), "lost", T0 + 20_000))),
        new Stop(
            "n1's agent restarted (a new epoch: it killed its tasks first)",
            s -> s.apply(register("n1", 8))),
        new Stop("n1's agent came back with fewer GPUs", s -> s.apply(register("n1", 6))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("stops")
  void theNextJobMayUseTheConfirmedNodeButNotTheOther(Stop how) {
    var s = new ControlState();
    s.apply(register("n1", 8));
    s.apply(register("n2", 8));
    s.apply(submit(restartable(8, 4, 1), StateFixtures.job(4)));
    ok(s, startTasks(1, task(0, "n1", 0, 1, 2, 3), task(1, "n2", 0, 1, 2, 3)));
    assertThat(StateInvariants.violations(s)).isEmpty();

    how.stop().accept(s);

    JobRecord gang = s.job(1).orElseThrow();
    assertThat(gang.holdsGpus()).as("n2's task has not confirmed its end").isTrue();
    assertThat(StateInvariants.violations(s)).isEmpty();
    // Job 2 (4 GPUs) may not take n2's GPUs 0-3: the gang's task there may still run.
    assertThat(s.apply(start(2, "n2", 0, 1, 2, 3)).ids()).isEmpty();
    if (s.node("n1").orElseThrow().state == io.kairos.protocol.NodeState.UP) {
      // n1 confirmed (or its agent restarted, killing its tasks): its GPUs are free now.
      assertThat(s.apply(start(2, "n1", 0, 1, 2, 3)).ids()).containsExactly(2L);
    } else {
      // A lost node takes no work until its agent registers again; its GPUs are free in the store.
      int n1 = s.store().cluster().indexOf("n1").orElseThrow();
      assertThat(s.store().freeMask(n1)).isEqualTo(0xFFL);
    }
    assertThat(StateInvariants.violations(s)).isEmpty();

    // n2 confirms: the gang lets go of its last node.
    long epoch = epoch(s, "n2");
    ok(s, ended("n2", epoch, 1, 1, 1, 143));
    assertThat(s.job(1).orElseThrow().holdsGpus()).isFalse();
    int n2 = s.store().cluster().indexOf("n2").orElseThrow();
    assertThat(s.store().freeMask(n2)).isEqualTo(0xFFL);
    assertThat(StateInvariants.violations(s)).isEmpty();
    ControlStateTest.assertRoundTrip(s, how.name());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("stops")
  void aSnapshotTakenMidwayKeepsTheUnconfirmedNodeHeld(Stop how) {
    var s = new ControlState();
    s.apply(register("n1", 8));
    s.apply(register("n2", 8));
    s.apply(submit(gang(8, 4), StateFixtures.job(4)));
    ok(s, startTasks(1, task(0, "n1", 0, 1, 2, 3), task(1, "n2", 0, 1, 2, 3)));
    how.stop().accept(s);

    // A rebuilt store (a snapshot restored on a new leader) holds n2 for the gang, not n1.
    ControlStateTest.assertRoundTrip(s, how.name());
    var restored = ControlState.of(s.image());
    int n2 = restored.store().cluster().indexOf("n2").orElseThrow();
    assertThat(restored.store().freeMask(n2)).isEqualTo(0xF0L);
    assertThat(restored.apply(start(2, "n2", 0, 1, 2, 3)).ids()).isEmpty();
    assertThat(restored.job(1).orElseThrow().state)
        .isIn(JobState.RUNNING, JobState.CANCELLED, JobState.FAILED);
  }

  private static long epoch(ControlState s, String node) {
    return s.node(node).orElseThrow().epoch;
  }

  private static void ok(ControlState s, ControlCommand c) {
    var r = s.apply(c);
    assertThat(r.status()).as("%s: %s", c, r).isEqualTo(200);
  }
}
