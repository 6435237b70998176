package io.kairos.core.sched.preempt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Anti-thrashing: grace after a (re)start, protection after too many preemptions. */
class ProtectionPolicyTest {
  private final ProtectionPolicy policy = ProtectionPolicy.DEFAULT;

  private PreemptionHistory preemptedAt(long... times) {
    var h = PreemptionHistory.NONE;
    for (long t : times) {
      h = policy.record(h, t);
    }
    return h;
  }

  @Test
  void aJobThatNeverWasPreemptedIsProtectedOnlyForTheGraceAfterItsStart() {
    assertThat(policy.protectedUntilSec(PreemptionHistory.NONE, 100)).isEqualTo(130);
    assertThat(policy.isProtected(PreemptionHistory.NONE, 100, 129)).isTrue();
    assertThat(policy.isProtected(PreemptionHistory.NONE, 100, 130)).isFalse();
  }

  @Test
  void threePreemptionsInAnHourProtectForAnHourAfterTheLast() {
    var h = preemptedAt(100, 700, 1_500);

    assertThat(policy.preemptionsInWindow(h)).isEqualTo(3);
    assertThat(policy.protectedUntilSec(h, 1_600)).isEqualTo(5_100);
    assertThat(policy.isProtected(h, 1_600, 5_099)).isTrue();
    assertThat(policy.isProtected(h, 1_600, 5_100)).isFalse();
  }

  @Test
  void twoPreemptionsInTheWindowOnlyGetTheGrace() {
    var h = preemptedAt(100, 700);

    assertThat(policy.protectedUntilSec(h, 800)).isEqualTo(830);
  }

  @Test
  void preemptionsOutsideTheWindowAreForgotten() {
    var h = preemptedAt(0, 100, 5_000);

    assertThat(h.preemptedAtSec()).containsExactly(5_000L);
    assertThat(policy.protectedUntilSec(h, 5_100)).isEqualTo(5_130);
  }

  @Test
  void theHistoryKeepsOnlyWhatThePolicyNeeds() {
    var h = preemptedAt(10, 20, 30, 40, 50);

    assertThat(h.preemptedAtSec()).containsExactly(30L, 40L, 50L);
    assertThat(policy.protectedUntilSec(h, 60)).isEqualTo(50 + 3_600);
  }

  @Test
  void aPreemptionBeforeTheLastIsABug() {
    var h = preemptedAt(100);

    assertThatThrownBy(() -> policy.record(h, 99)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new PreemptionHistory(List.of(5L, 4L)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void feedsTheCandidatesProtection() {
    var h = preemptedAt(100, 200, 300);
    long until = policy.protectedUntilSec(h, 400);

    assertThat(until).isEqualTo(3_900);
    // A candidate carries it; the planner skips the job until then.
    assertThat(new ProtectionPolicy(0, 60, 1, 0).protectedUntilSec(h, 400)).isEqualTo(400);
  }
}
