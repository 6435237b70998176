package io.kairos.control.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.dashboard.UtilizationHistory.Sample;
import io.kairos.control.dashboard.UtilizationHistory.Tier;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class UtilizationHistoryTest {
  static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");

  static Sample busy(long busy) {
    return new Sample(16, busy, 3, 2, 1, 0);
  }

  @Test
  void aShortWindowReadsTenSecondPointsOldestFirst() {
    var h = new UtilizationHistory();
    for (int i = 0; i < 6; i++) {
      h.record(T0.plusSeconds(10L * i), busy(i));
    }
    var view = h.query("1m", Duration.ofMinutes(1), T0.plusSeconds(55));
    assertThat(view.resolutionSec()).isEqualTo(10);
    assertThat(view.points())
        .extracting(p -> p.gpusBusy())
        .containsExactly(0.0, 1.0, 2.0, 3.0, 4.0, 5.0);
    assertThat(view.points().getFirst().at()).isEqualTo("2025-01-01T00:00:00Z");
  }

  @Test
  void coarserTiersAverageTheLevelsAndSumTheStartsAndEnds() {
    var h = new UtilizationHistory();
    for (int i = 0; i < 6; i++) {
      h.record(T0.plusSeconds(10L * i), new Sample(16, i % 2 == 0 ? 4 : 8, 10, 1, 2, 1));
    }
    var view = h.query("2d", Duration.ofDays(2), T0.plusSeconds(59));
    assertThat(view.resolutionSec()).isEqualTo(60);
    assertThat(view.points())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.gpusBusy()).isEqualTo(6.0);
              assertThat(p.gpusTotal()).isEqualTo(16.0);
              assertThat(p.pending()).isEqualTo(10.0);
              assertThat(p.started()).isEqualTo(12);
              assertThat(p.finished()).isEqualTo(6);
            });
    assertThat(h.query("7d", Duration.ofDays(7), T0.plusSeconds(59)).resolutionSec())
        .isEqualTo(600);
  }

  @Test
  void pointsOutsideTheWindowOrOverwrittenByTheRingAreNotShown() {
    var h =
        new UtilizationHistory(List.of(new Tier(Duration.ofSeconds(10), Duration.ofMinutes(1))));
    for (int i = 0; i < 20; i++) { // 200 s into a 60 s ring: it wrapped three times
      h.record(T0.plusSeconds(10L * i), busy(i));
    }
    var all = h.query("1h", Duration.ofHours(1), T0.plusSeconds(195));
    assertThat(all.points())
        .extracting(p -> p.gpusBusy())
        .containsExactly(14.0, 15.0, 16.0, 17.0, 18.0, 19.0);
    var last = h.query("1m", Duration.ofSeconds(30), T0.plusSeconds(195));
    assertThat(last.points()).extracting(p -> p.gpusBusy()).containsExactly(17.0, 18.0, 19.0);
  }

  @Test
  void aGapLeavesNoPoints() {
    var h = new UtilizationHistory();
    h.record(T0, busy(1));
    h.record(T0.plusSeconds(120), busy(2));
    var view = h.query("6h", Duration.ofHours(6), T0.plusSeconds(125));
    assertThat(view.points())
        .extracting(p -> p.at())
        .containsExactly("2025-01-01T00:00:00Z", "2025-01-01T00:02:00Z");
  }

  @Test
  void windowsAreMinutesHoursOrDaysUpToFourteenDays() {
    assertThat(UtilizationHistory.parseWindow("30m")).contains(Duration.ofMinutes(30));
    assertThat(UtilizationHistory.parseWindow("6h")).contains(Duration.ofHours(6));
    assertThat(UtilizationHistory.parseWindow("14d")).contains(Duration.ofDays(14));
    assertThat(UtilizationHistory.parseWindow("15d")).isEmpty();
    assertThat(UtilizationHistory.parseWindow("0m")).isEmpty();
    assertThat(UtilizationHistory.parseWindow("6 hours")).isEmpty();
    assertThat(UtilizationHistory.parseWindow("")).isEmpty();
  }
}
