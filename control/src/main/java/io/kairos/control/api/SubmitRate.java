package io.kairos.control.api;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Each user's submit rate: a token bucket per user, refilled at the user's {@code submitsPerSec} up
 * to its {@code submitBurst}, one token per job (as {@link io.kairos.control.state.JobSize#weight}
 * counts jobs). Kept by each replica for the submits it receives (not replicated: a user spreading
 * submits over three replicas gets up to three times the rate; the count limits, which the log
 * enforces, hold whatever the rate).
 *
 * <p>Bounded: at most {@link #MAX_USERS} buckets; past that, the full ones (whose users have been
 * idle long enough to refill) are dropped, which changes nothing for their users.
 */
final class SubmitRate {
  static final int MAX_USERS = 100_000;

  private static final class Bucket {
    double tokens;
    long atNanos;

    /** After a refusal: the user was told to retry then, and is refused at once until then. */
    long refusedUntilNanos;

    Bucket(double tokens, long atNanos) {
      this.tokens = tokens;
      this.atNanos = atNanos;
    }

    /** Refills up to {@code burst} for the time since the last call. */
    void refill(long nowNanos, double perSec, long burst) {
      double elapsedSec = Math.max(0, nowNanos - atNanos) / 1e9;
      tokens = Math.min(burst, tokens + elapsedSec * perSec);
      atNanos = nowNanos;
    }
  }

  private final LongSupplier nanos;
  private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();

  SubmitRate(LongSupplier nanos) {
    this.nanos = nanos;
  }

  /**
   * Takes {@code jobs} tokens from {@code user}'s bucket when it holds them.
   *
   * @return 0 when taken; else the seconds until the bucket would hold them (nothing taken)
   */
  double take(String user, long jobs, double perSec, long burst) {
    long now = nanos.getAsLong();
    if (buckets.size() >= MAX_USERS) {
      dropFull(now, perSec, burst);
    }
    Bucket b = buckets.computeIfAbsent(user, u -> new Bucket(burst, now));
    synchronized (b) {
      b.refill(now, perSec, burst);
      if (b.tokens >= jobs) {
        b.tokens -= jobs;
        b.refusedUntilNanos = now;
        return 0;
      }
      double waitSec = (jobs - b.tokens) / perSec;
      b.refusedUntilNanos = now + (long) (waitSec * 1e9);
      return waitSec;
    }
  }

  /**
   * The seconds until {@code user}'s bucket would hold {@code jobs} tokens, or until the time its
   * last refusal told it to retry, whichever is later; 0 when it may try now. Takes nothing. Lets
   * the API refuse a flooding user before reading its body: a user refused a 10,000-job submit is
   * refused at once, without another parse, until its Retry-After has passed.
   */
  double waitFor(String user, long jobs, double perSec, long burst) {
    Bucket b = buckets.get(user);
    if (b == null) {
      return 0;
    }
    synchronized (b) {
      long now = nanos.getAsLong();
      b.refill(now, perSec, burst);
      double tokenWait = b.tokens >= jobs ? 0 : (jobs - b.tokens) / perSec;
      return Math.max(tokenWait, Math.max(0, b.refusedUntilNanos - now) / 1e9);
    }
  }

  private void dropFull(long now, double perSec, long burst) {
    buckets
        .entrySet()
        .removeIf(
            e -> {
              synchronized (e.getValue()) {
                e.getValue().refill(now, perSec, burst);
                return e.getValue().tokens >= burst;
              }
            });
  }

  int users() {
    return buckets.size();
  }
}
