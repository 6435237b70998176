package io.kairos.control.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.health.FailureDetectors.Liveness;
import io.kairos.control.health.FailureDetectors.Transition;
import io.kairos.control.health.PhiAccrualDetector;
import java.util.List;
import org.junit.jupiter.api.Test;

class NodeWatchTest {
  /** Phi that never decides: only the lease (3.5 s + 0.5 s) does. */
  static final PhiAccrualDetector.Settings PATIENT_PHI =
      new PhiAccrualDetector.Settings(8.0, 1000, 100, 3_600_000, 1_000);

  static NodeWatch steady(String node, long untilMs) {
    var w = new NodeWatch(PATIENT_PHI, LeaseSettings.DEFAULT);
    w.registered(node, 0);
    for (long t = 0; t <= untilMs; t += 100) {
      if (t % 1000 == 0) {
        assertThat(w.arrived(node, t)).isTrue();
      }
      assertThat(w.evaluate(t)).isEmpty();
    }
    return w;
  }

  @Test
  void aNodeSilentForItsLeaseAndMarginIsDown() {
    var w = steady("n1", 10_000);
    for (long t = 10_100; t < 14_000; t += 100) {
      assertThat(w.evaluate(t)).as("at %d ms", t).isEmpty();
    }
    assertThat(w.evaluate(14_000)).extracting(Transition::to).containsExactly(Liveness.DOWN);
  }

  @Test
  void afterAPauseOfItsOwnTheWatchJudgesNoNodeUntilTheWaitingHeartbeatsAreIn() {
    var w = steady("n1", 10_000);
    // The controller stalls 5 s: the node's heartbeats wait in the socket meanwhile.
    assertThat(w.evaluate(15_000)).as("just after the pause").isEmpty();
    assertThat(w.arrived("n1", 15_050)).isTrue();
    assertThat(w.evaluate(15_100)).isEmpty();
    // A node that stays silent is judged as usual once the grace is over.
    for (long t = 15_200; t < 19_050; t += 100) {
      assertThat(w.evaluate(t)).as("at %d ms", t).isEmpty();
    }
    assertThat(w.evaluate(19_050)).extracting(Transition::to).containsExactly(Liveness.DOWN);
  }

  @Test
  void aHeartbeatArrivingWhileItsNodeGoesDownRenewsNothing() {
    var w = steady("n1", 10_000);
    assertThat(w.beginDown("n1", 0)).as("the last arrival").isEqualTo(10_000);
    assertThat(w.arrived("n1", 10_500)).as("refused while going down").isFalse();
    assertThat(w.lastSeen("n1")).contains(10_000L);
    w.endDown("n1");
    assertThat(w.arrived("n1", 10_600)).isTrue();
    assertThat(w.lastSeen("n1")).contains(10_600L);
  }

  @Test
  void aNewLeaderCountsEveryNodeAsHeardAtItsTakeover() {
    var w = new NodeWatch(PATIENT_PHI, LeaseSettings.DEFAULT);
    w.adopt(List.of("n1"), 50_000);
    assertThat(w.evaluate(50_100)).as("no pause: it was not leader before").isEmpty();
    assertThat(w.beginDown("n1", 50_000)).isEqualTo(50_000);
  }
}
