package io.kairos.control.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The per-user token bucket on a manual clock. */
class SubmitRateTest {
  final AtomicLong nanos = new AtomicLong();
  final SubmitRate rate = new SubmitRate(nanos::get);

  void advanceMs(long ms) {
    nanos.addAndGet(ms * 1_000_000);
  }

  @Test
  void aFullBucketTakesABurstThenRefillsAtTheRate() {
    assertThat(rate.take("alice", 10, 2, 10)).isZero();
    assertThat(rate.take("alice", 1, 2, 10)).isCloseTo(0.5, within(1e-9));
    advanceMs(500);
    assertThat(rate.take("alice", 1, 2, 10)).isZero();
    advanceMs(60_000);
    assertThat(rate.take("alice", 10, 2, 10)).as("refilled up to the burst, no more").isZero();
    assertThat(rate.take("alice", 1, 2, 10)).isPositive();
  }

  @Test
  void eachUserHasItsOwnBucket() {
    assertThat(rate.take("alice", 5, 1, 5)).isZero();
    assertThat(rate.take("alice", 1, 1, 5)).isPositive();
    assertThat(rate.take("bob", 5, 1, 5)).isZero();
  }

  @Test
  void aRefusedUserIsRefusedBeforeItsBodyIsReadUntilItsRetryAfter() {
    assertThat(rate.waitFor("alice", 1, 1000, 10_000)).as("unknown user: may try").isZero();
    assertThat(rate.take("alice", 10_000, 1000, 10_000)).isZero();
    // A second 10,000-job batch at once: refused, told to wait 10 s.
    assertThat(rate.take("alice", 10_000, 1000, 10_000)).isCloseTo(10, within(1e-6));
    advanceMs(100);
    // Its bucket holds 100 tokens again, but the next request is refused unread until then.
    assertThat(rate.waitFor("alice", 1, 1000, 10_000)).isCloseTo(9.9, within(1e-6));
    advanceMs(9_900);
    assertThat(rate.waitFor("alice", 1, 1000, 10_000)).isZero();
    assertThat(rate.take("alice", 10_000, 1000, 10_000)).isZero();
  }

  @Test
  void bucketsAreBoundedByDroppingFullOnes() {
    for (int i = 0; i < SubmitRate.MAX_USERS; i++) {
      rate.take("user" + i, 1, 1000, 10);
    }
    assertThat(rate.users()).isEqualTo(SubmitRate.MAX_USERS);
    advanceMs(1_000);
    rate.take("one-more", 1, 1000, 10);
    assertThat(rate.users()).as("the refilled buckets went").isLessThan(10);
  }
}
