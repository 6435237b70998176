package io.kairos.control.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.state.CoreTime;
import org.junit.jupiter.api.Test;

class SchedulerLoopTimingTest {
  @Test
  void anIdleLoopWakesJustAfterTheNextWholeSecond() {
    assertThat(SchedulerLoop.idleWaitMs(12_300)).isEqualTo(702);
    assertThat(SchedulerLoop.idleWaitMs(12_999)).isEqualTo(3);
    assertThat(SchedulerLoop.idleWaitMs(12_000)).isEqualTo(1_002);
  }

  @Test
  void aJobEligibleWithinASecondIsDueWhenTheLoopWakes() {
    // A lost node's job eligible at 12.3 s is due in the core from second 13; the idle loop
    // woken at 12.3 s runs its next pass at 13.002 s, when the pass's clock reads second 13.
    long eligibleMs = 12_300;
    long wakeMs = 12_300 + SchedulerLoop.idleWaitMs(12_300);
    assertThat(CoreTime.sec(wakeMs)).isGreaterThanOrEqualTo(CoreTime.notBeforeSec(eligibleMs));
    assertThat(wakeMs - CoreTime.notBeforeSec(eligibleMs) * 1000).isLessThan(10);
  }
}
