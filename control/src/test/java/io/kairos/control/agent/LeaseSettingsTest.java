package io.kairos.control.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LeaseSettingsTest {
  @Test
  void theDefaultGivesALostNodesJobsBackWithinFourSecondsOfItsLastHeartbeat() {
    var d = LeaseSettings.DEFAULT;
    assertThat(d.silenceMs()).isEqualTo(d.leaseMs() + d.marginMs()).isLessThanOrEqualTo(4_000);
    assertThat(d.safeAfterMs(10_000)).isEqualTo(10_000 + d.silenceMs());
    assertThat(d.marginMs()).isGreaterThanOrEqualTo(LeaseSettings.leastMarginMs(d.leaseMs()));
  }

  @Test
  void theMarginCoversOnePercentOfTheLeaseAndTheKill() {
    assertThat(LeaseSettings.leastMarginMs(3_500)).isEqualTo(235);
    assertThat(LeaseSettings.leastMarginMs(60_000)).isEqualTo(800);
    new LeaseSettings(60_000, 800);
    assertThatThrownBy(() -> new LeaseSettings(60_000, 799))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lease margin must be at least 800 ms")
        .hasMessageContaining("got 799 ms");
    assertThatThrownBy(() -> new LeaseSettings(3_000, 3_001))
        .hasMessageContaining("at most the lease");
  }

  @Test
  void aLeaseOutsideTwoSecondsToAnHourIsRefusedWithItsBounds() {
    for (long bad : new long[] {-1, 0, 1_999, 3_600_001}) {
      assertThatThrownBy(() -> new LeaseSettings(bad, 40_000))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("lease must be between 2000 ms and 3600000 ms, got " + bad + " ms");
    }
  }
}
