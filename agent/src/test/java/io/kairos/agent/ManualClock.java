package io.kairos.agent;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;

/** A clock that moves only when a test advances it. Thread-safe. */
final class ManualClock implements InstantSource {
  private Instant now;

  ManualClock(Instant start) {
    this.now = start;
  }

  ManualClock() {
    this(Instant.parse("2030-01-01T00:00:00Z"));
  }

  @Override
  public synchronized Instant instant() {
    return now;
  }

  synchronized void advance(Duration by) {
    now = now.plus(by);
  }
}
