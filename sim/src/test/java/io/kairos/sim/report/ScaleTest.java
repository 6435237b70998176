package io.kairos.sim.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class ScaleTest {
  @Test
  void linearTicksAreNiceAndCoverTheDomain() {
    Scale s = Scale.linear(0, 47, 0, 100, ReportCharts::number);
    assertThat(s.ticks()).containsExactly(0.0, 10.0, 20.0, 30.0, 40.0, 50.0);
    assertThat(s.pixel(0)).isEqualTo(0);
    assertThat(s.pixel(50)).isEqualTo(100);
    assertThat(s.pixel(25)).isCloseTo(50, within(1e-9));
  }

  @Test
  void linearScaleClampsAndMayRunDownwards() {
    Scale y = Scale.linear(0, 1, 300, 20, v -> Math.round(v * 100) + "%");
    assertThat(y.pixel(0)).isEqualTo(300);
    assertThat(y.pixel(1)).isEqualTo(20);
    assertThat(y.pixel(7)).isEqualTo(20);
    assertThat(y.ticks()).contains(0.0, 1.0);
    assertThat(y.label(0.4)).isEqualTo("40%");
  }

  @Test
  void emptyDomainStillGivesAnAxis() {
    Scale s = Scale.linear(0, 0, 0, 100, ReportCharts::number);
    assertThat(s.ticks()).hasSizeGreaterThanOrEqualTo(2);
    assertThat(Double.isFinite(s.pixel(0))).isTrue();
  }

  @Test
  void logTicksArePowersOfTen() {
    Scale s = Scale.log(1, 54_321, 0, 500, ReportCharts::powerOfTen);
    assertThat(s.ticks()).containsExactly(1.0, 10.0, 100.0, 1e3, 1e4, 1e5);
    assertThat(s.ticks().stream().map(s::label))
        .containsExactly("1", "10", "100", "1k", "10k", "100k");
    assertThat(s.pixel(1)).isEqualTo(0);
    assertThat(s.pixel(100_000)).isEqualTo(500);
    assertThat(s.pixel(0)).as("zero is drawn at the minimum").isEqualTo(0);
    assertThat(s.pixel(1000)).isCloseTo(300, within(1e-9));
  }
}
