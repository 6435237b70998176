package io.kairos.control.health;

import static io.kairos.control.health.FailureDetectors.Liveness.ALIVE;
import static io.kairos.control.health.FailureDetectors.Liveness.DOWN;
import static io.kairos.control.health.FailureDetectors.Liveness.SUSPECT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kairos.control.health.FailureDetectors.Transition;
import io.kairos.control.health.PhiAccrualDetector.Settings;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Liveness transitions with Akka's defaults: 1 s heartbeats, SUSPECT at phi 3, DOWN at 8. */
class FailureDetectorsTest {
  private final FailureDetectors fd = new FailureDetectors();

  /** Heartbeats from {@code node} every second from 0 to {@code lastMs}. */
  private void steady(String node, long lastMs) {
    for (long t = 0; t <= lastMs; t += 1000) {
      fd.heartbeat(node, t);
    }
  }

  private static List<String> summary(List<Transition> ts) {
    return ts.stream().map(t -> t.node() + ":" + t.from() + "->" + t.to()).toList();
  }

  @Test
  void aSilentNodeIsSuspectAt4306MsAndDownAt4523Ms() {
    // 101 heartbeats: std sqrt(125,000 / 102) = 35, floored to 100 (with 11 it would be 102).
    steady("n1", 100_000);
    assertThat(fd.evaluate(104_305)).isEmpty();
    var suspect = fd.evaluate(104_306);
    assertThat(summary(suspect)).containsExactly("n1:ALIVE->SUSPECT");
    assertThat(suspect.getFirst().phi()).isGreaterThanOrEqualTo(3.0).isLessThan(8.0);
    assertThat(suspect.getFirst().atMs()).isEqualTo(104_306);
    assertThat(fd.evaluate(104_522)).isEmpty();
    assertThat(summary(fd.evaluate(104_523))).containsExactly("n1:SUSPECT->DOWN");
    assertThat(fd.evaluate(160_000)).isEmpty();
    assertThat(fd.liveness("n1")).contains(DOWN);
  }

  @Test
  void anEvaluationAfterALongGapGoesStraightToDown() {
    steady("n1", 10_000);
    assertThat(summary(fd.evaluate(20_000))).containsExactly("n1:ALIVE->DOWN");
  }

  @Test
  void aHeartbeatRevivesASuspectNode() {
    steady("n1", 10_000);
    fd.evaluate(14_400);
    assertThat(fd.liveness("n1")).contains(SUSPECT);
    var revived = fd.heartbeat("n1", 14_450);
    assertThat(revived)
        .hasValueSatisfying(
            t -> {
              assertThat(t.from()).isEqualTo(SUSPECT);
              assertThat(t.to()).isEqualTo(ALIVE);
              assertThat(t.atMs()).isEqualTo(14_450);
            });
    assertThat(fd.evaluate(14_451)).isEmpty();
    assertThat(fd.liveness("n1")).contains(ALIVE);
  }

  @Test
  void aDownNodeStaysDownUntilItIsReset() {
    steady("n1", 10_000);
    fd.evaluate(20_000);
    assertThat(fd.heartbeat("n1", 20_100)).isEmpty();
    assertThat(fd.liveness("n1")).contains(DOWN);
    assertThat(fd.evaluate(20_200)).isEmpty();

    var reset = fd.reset("n1", 30_000);
    assertThat(reset).map(t -> t.from() + "->" + t.to()).contains("DOWN->ALIVE");
    assertThat(fd.liveness("n1")).contains(ALIVE);
    // A fresh detector seeded by the registration: down 5307 ms after it if nothing follows.
    assertThat(fd.evaluate(35_306)).extracting(Transition::to).doesNotContain(DOWN);
    assertThat(fd.evaluate(35_307)).extracting(Transition::to).containsExactly(DOWN);
  }

  @Test
  void resetOfAnAliveOrUnknownNodeReportsNothing() {
    assertThat(fd.reset("new", 0)).isEmpty();
    steady("n1", 3000);
    assertThat(fd.reset("n1", 3500)).isEmpty();
    assertThat(fd.size()).isEqualTo(2);
  }

  @Test
  void transitionsComeInNodeNameOrderAndOnlyOnce() {
    steady("b", 10_000);
    steady("a", 10_000);
    steady("c", 20_000);
    assertThat(summary(fd.evaluate(20_000))).containsExactly("a:ALIVE->DOWN", "b:ALIVE->DOWN");
    assertThat(fd.evaluate(20_001)).isEmpty();
    assertThat(fd.liveness("c")).contains(ALIVE);
  }

  @Test
  void removedNodesAreForgotten() {
    steady("n1", 10_000);
    assertThat(fd.remove("n1")).isTrue();
    assertThat(fd.remove("n1")).isFalse();
    assertThat(fd.evaluate(60_000)).isEmpty();
    assertThat(fd.liveness("n1")).isEmpty();
    assertThat(fd.phi("n1", 60_000)).isEmpty();
  }

  @Test
  void aSuspectLevelEqualToTheThresholdSkipsSuspect() {
    var strict = new FailureDetectors(Settings.AKKA_DEFAULTS, 8.0);
    for (long t = 0; t <= 100_000; t += 1000) {
      strict.heartbeat("n1", t);
    }
    assertThat(strict.evaluate(104_400)).isEmpty();
    assertThat(strict.evaluate(104_523)).extracting(Transition::to).containsExactly(DOWN);
  }

  @Test
  void theSuspectLevelMustBeBetweenZeroAndTheThreshold() {
    for (double bad : new double[] {0, -1, 8.01, Double.NaN}) {
      assertThatThrownBy(() -> new FailureDetectors(Settings.AKKA_DEFAULTS, bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("suspectThreshold must be");
    }
  }

  @Test
  void aNodeSilentForTheMaximumIsDownWhateverItsPhi() {
    // Patient phi (an hour of acceptable pause): only the silence bound can call the node DOWN.
    var patient = new Settings(8.0, 1000, 100, 3_600_000, 1_000);
    var fd = new FailureDetectors(patient, 3.0, 4_000);
    for (long t = 0; t <= 10_000; t += 1000) {
      fd.heartbeat("n1", t);
    }
    fd.heartbeat("n2", 12_000);
    assertThat(fd.evaluate(13_999)).isEmpty();
    assertThat(fd.phi("n1", 14_000)).hasValueSatisfying(phi -> assertThat(phi).isLessThan(3.0));
    assertThat(fd.evaluate(14_000))
        .singleElement()
        .satisfies(
            t -> {
              assertThat(t.node()).isEqualTo("n1");
              assertThat(t.to()).isEqualTo(DOWN);
            });
    assertThat(fd.liveness("n2")).contains(FailureDetectors.Liveness.ALIVE);
    assertThat(fd.evaluate(16_000)).extracting(Transition::node).containsExactly("n2");
  }

  @Test
  void theMaximumSilenceMustBePositive() {
    assertThatThrownBy(() -> new FailureDetectors(Settings.AKKA_DEFAULTS, 3.0, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("maxSilenceMs must be > 0");
  }
}
