package io.kairos.core.state;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The last-two-jobs predictor as a share of the limit, and how it scales a limit. */
class RunHistoryTest {
  @Test
  void shareIsTheMeanOfTheUsersLastTwoJobs() {
    var history = new RunHistory();
    var alice = history.of("alice");
    assertThat(alice.shareMilli()).isEqualTo(-1);
    alice.finished(50, 100);
    assertThat(alice.shareMilli()).isEqualTo(500);
    alice.finished(100, 100);
    assertThat(alice.shareMilli()).isEqualTo(750);
    alice.finished(10, 100); // the oldest (500) drops out
    assertThat(alice.shareMilli()).isEqualTo(550);
    assertThat(history.of("bob").shareMilli()).isEqualTo(-1);
  }

  @Test
  void aCopyIsIndependent() {
    var history = new RunHistory();
    history.of("alice").finished(30, 100);
    var copy = history.copy();
    history.of("alice").finished(100, 100);
    assertThat(copy.of("alice").shareMilli()).isEqualTo(300);
  }

  @Test
  void scaledStaysBetweenOneSecondAndTheLimit() {
    assertThat(ClusterStore.scaled(1_000, -1)).isEqualTo(1_000);
    assertThat(ClusterStore.scaled(1_000, 250)).isEqualTo(250);
    assertThat(ClusterStore.scaled(10, 1)).isEqualTo(1);
    assertThat(ClusterStore.scaled(1_000, 1_000)).isEqualTo(1_000);
    // Runs longer than the limit, or no limit, count as the whole limit.
    var entry = new RunHistory().of("u");
    entry.finished(500, 100);
    assertThat(entry.shareMilli()).isEqualTo(1_000);
  }
}
