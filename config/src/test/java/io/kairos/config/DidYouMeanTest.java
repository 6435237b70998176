package io.kairos.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class DidYouMeanTest {
  private static final List<String> KEYS =
      List.of("fairShare", "priorityClasses", "cohorts", "queues", "accounts", "scheduling");

  @Test
  void suggestsTheNearestCandidateIgnoringCase() {
    assertThat(DidYouMean.closest("cohort", KEYS)).isEqualTo("cohorts");
    assertThat(DidYouMean.closest("ACCOUNTS", KEYS)).isEqualTo("accounts");
    assertThat(DidYouMean.closest("protectfor", List.of("minRuntime", "protectFor")))
        .isEqualTo("protectFor");
  }

  @Test
  void suggestsNothingWhenNoCandidateIsClose() {
    assertThat(DidYouMean.closest("racks", KEYS)).isNull();
    assertThat(DidYouMean.closest("x", List.of())).isNull();
  }

  @Test
  void theDefaultToleranceGrowsWithTheWord() {
    // Three edits: too many for a six-letter word (2 allowed), fine for a twelve-letter one (4).
    assertThat(DidYouMean.closest("qxxuxs", KEYS)).isNull();
    assertThat(DidYouMean.closest("sheduulingXY", KEYS)).isEqualTo("scheduling");
  }

  @Test
  void anExplicitToleranceIsTheLimit() {
    var keys = List.of("gpus", "gpusPerNode", "timeLimit");
    assertThat(DidYouMean.closest("gpu", keys, 2)).isEqualTo("gpus");
    assertThat(DidYouMean.closest("tmeLimt", keys, 2)).isEqualTo("timeLimit");
    assertThat(DidYouMean.closest("tmLimt", keys, 2)).isNull();
    assertThat(DidYouMean.closest("tmLimt", keys, 3)).isEqualTo("timeLimit");
  }

  @Test
  void tiesGoToTheEarlierCandidate() {
    assertThat(DidYouMean.closest("ab", List.of("ax", "ay"), 2)).isEqualTo("ax");
    assertThat(DidYouMean.closest("ab", List.of("ay", "ax"), 2)).isEqualTo("ay");
  }

  @Test
  void distanceCountsInsertionsDeletionsAndSubstitutions() {
    assertThat(DidYouMean.distance("", "")).isZero();
    assertThat(DidYouMean.distance("abc", "")).isEqualTo(3);
    assertThat(DidYouMean.distance("kitten", "sitting")).isEqualTo(3);
    assertThat(DidYouMean.distance("flaw", "lawn")).isEqualTo(2);
  }
}
