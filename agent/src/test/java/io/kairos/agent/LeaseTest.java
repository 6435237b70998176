package io.kairos.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.protocol.agent.Registered;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class LeaseTest {
  private static final Instant T0 = Instant.parse("2026-12-01T00:00:00Z");

  @Test
  void theTasksAreKilledTheFenceMarginBeforeTheLeaseEnds() {
    var clock = new ManualClock(T0);
    var lease = new Lease(250);
    lease.registered(new Registered("n1", 1, 1_000, 3_500), T0);
    assertThat(lease.fenceMs()).isEqualTo(3_250);

    clock.advance(Duration.ofMillis(3_250));
    assertThat(lease.holds(clock)).isTrue();
    assertThat(lease.lapse(clock)).as("at 3,250 ms").isEmpty();
    clock.advance(Duration.ofMillis(1));
    assertThat(lease.holds(clock)).as("a launch now would be fenced").isFalse();
    assertThat(lease.lapse(clock)).hasValue(3_250);
    assertThat(lease.lapse(clock)).as("reported once per lapse").isEmpty();

    lease.renewed(T0.plusMillis(3_000));
    assertThat(lease.lapse(clock)).isEmpty();
    clock.advance(Duration.ofMillis(3_000)); // 6,251 ms: 3,251 after the renewal
    assertThat(lease.lapse(clock)).hasValue(3_250);
  }

  @Test
  void theFenceMarginTakesAtMostAQuarterOfTheLease() {
    var lease = new Lease(5_000);
    lease.registered(new Registered("n1", 1, 1_000, 4_000), T0);
    assertThat(lease.fenceMs()).isEqualTo(3_000);
    var none = new Lease();
    none.registered(new Registered("n1", 1, 1_000, 4_000), T0);
    assertThat(none.fenceMs()).isEqualTo(4_000);
  }

  @Test
  void aReplyThatNamesALeaseMakesItTheAgentsFromThatRenewal() {
    var clock = new ManualClock(T0);
    var lease = new Lease(250);
    lease.registered(new Registered("n1", 1, 1_000, 10_000), T0);
    lease.renewed(T0.plusMillis(1_000), null);
    assertThat(lease.leaseMs()).as("a reply that names none keeps it").isEqualTo(10_000);

    lease.renewed(T0.plusMillis(1_500), Long.MAX_VALUE);
    assertThat(lease.leaseMs()).as("past an hour: ignored").isEqualTo(10_000);
    lease.renewed(T0.plusMillis(2_000), 3_500L);
    assertThat(lease.leaseMs()).isEqualTo(3_500);
    assertThat(lease.fenceMs()).isEqualTo(3_250);
    clock.advance(Duration.ofMillis(5_251));
    assertThat(lease.lapse(clock)).as("3,251 ms after that renewal").hasValue(3_250);
  }
}
