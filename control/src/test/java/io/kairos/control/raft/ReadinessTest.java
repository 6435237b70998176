package io.kairos.control.raft;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.raft.Readiness.Observation;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * {@link Readiness} on observations and a manual clock: what makes a replica not ready, and when.
 */
class ReadinessTest {
  final AtomicLong nanos = new AtomicLong();
  final Readiness readiness = new Readiness(Duration.ofSeconds(10), nanos::get);

  static Observation leader(int groupSize, int heard, long last, long committed, long applied) {
    return new Observation(true, true, true, true, groupSize, heard, -1, last, committed, applied);
  }

  static Observation follower(long silentMs, long last, long committed, long applied) {
    return new Observation(true, true, false, false, 3, 0, silentMs, last, committed, applied);
  }

  void advance(long seconds) {
    nanos.addAndGet(Duration.ofSeconds(seconds).toNanos());
  }

  @Test
  void aLeaderThatCommitsAndAppliesIsReady() {
    assertThat(readiness.judge(leader(1, 1, 10, 10, 10))).isEmpty();
    advance(60);
    assertThat(readiness.judge(leader(3, 2, 12, 12, 12))).isEmpty();
  }

  @Test
  void theServerDownOrNoLeaderIsNotReady() {
    assertThat(readiness.judge(new Observation(false, false, false, false, 1, 0, -1, 0, 0, 0)))
        .hasValueSatisfying(w -> assertThat(w).contains("not running"));
    assertThat(readiness.judge(new Observation(true, false, false, false, 3, 0, -1, 5, 5, 5)))
        .hasValueSatisfying(w -> assertThat(w).contains("no leader"));
    assertThat(readiness.judge(new Observation(true, true, true, false, 3, 3, -1, 5, 5, 5)))
        .hasValueSatisfying(w -> assertThat(w).contains("just elected"));
  }

  @Test
  void aLeaderWithoutAMajorityCannotCommit() {
    assertThat(readiness.judge(leader(3, 1, 10, 10, 10)))
        .hasValueSatisfying(w -> assertThat(w).contains("1 of 3"));
    assertThat(readiness.judge(leader(5, 3, 10, 10, 10))).isEmpty();
  }

  @Test
  void applyStalledForTheThresholdIsNotReadyAndRecovers() {
    assertThat(readiness.judge(leader(1, 1, 20, 20, 15))).as("just committed").isEmpty();
    advance(5);
    assertThat(readiness.judge(leader(1, 1, 20, 20, 15))).isEmpty();
    advance(6);
    assertThat(readiness.judge(leader(1, 1, 20, 20, 15)))
        .hasValueSatisfying(w -> assertThat(w).contains("applied 15, committed 20"));
    assertThat(readiness.judge(leader(1, 1, 20, 20, 16))).as("moving again").isEmpty();
    assertThat(readiness.judge(leader(1, 1, 20, 20, 20))).isEmpty();
  }

  @Test
  void entriesThatWaitForACommitTooLongAreNotReady() {
    assertThat(readiness.judge(leader(3, 3, 30, 25, 25))).isEmpty();
    advance(11);
    assertThat(readiness.judge(leader(3, 3, 30, 25, 25)))
        .hasValueSatisfying(w -> assertThat(w).contains("5 log entries"));
    assertThat(readiness.judge(leader(3, 3, 30, 30, 30))).isEmpty();
  }

  @Test
  void aFollowerThatHasNotHeardFromItsLeaderIsNotReady() {
    assertThat(readiness.judge(follower(500, 5, 5, 5))).isEmpty();
    assertThat(readiness.judge(follower(12_000, 5, 5, 5)))
        .hasValueSatisfying(w -> assertThat(w).contains("12 s"));
  }
}
