package io.kairos.control.api;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.LongAdder;

/**
 * Sheds submits the controller cannot serve in time, before their bodies are read: at most {@link
 * #maxInFlight} submit requests are parsed, validated and waiting for their commit at once; one
 * more is answered 503 with {@code Retry-After} at once, having changed nothing, so that the
 * accepted ones keep their latency (a queue past the server's rate only adds waiting) and a client
 * knows that retrying is safe.
 *
 * <p>Why a count of requests: the submit path is bounded by the log's commits (the batcher puts up
 * to {@link io.kairos.control.raft.SubmitBatcher} 2,000 jobs in an entry, 8 entries in flight) and
 * by HTTP and JSON work per request; requests past a few hundred in flight only wait behind the
 * others. Each job's heap is bounded apart ({@link RequestBudget}), each user's rate too ({@link
 * SubmitRate}, 429).
 *
 * <p>Counts every shed request in {@code kairos_api_shed_total} (tagged with the route and the
 * reason), once {@link #register} has bound it to the registry. Thread-safe.
 */
public final class LoadShedder {
  /** Submit requests in flight at most, by default. */
  public static final int DEFAULT_MAX_IN_FLIGHT = 256;

  /** What a shed client is told to wait, in seconds. */
  static final long RETRY_AFTER_SEC = 1;

  private final int maxInFlight;
  private final Semaphore submits;
  private final LongAdder shedSubmits = new LongAdder();

  public LoadShedder(int maxInFlight) {
    if (maxInFlight < 1) {
      throw new IllegalArgumentException("maxInFlight must be >= 1, got " + maxInFlight);
    }
    this.maxInFlight = maxInFlight;
    this.submits = new Semaphore(maxInFlight);
  }

  /** The counter of shed requests, in {@code registry}. Call once per registry. */
  public void register(MeterRegistry registry) {
    FunctionCounter.builder("kairos.api.shed", shedSubmits, LongAdder::sum)
        .description("requests refused because the controller was at its bound (503 Retry-After)")
        .tag("route", "submit")
        .tag("reason", "in_flight")
        .register(registry);
  }

  /** A submit's place; closing it frees the place. */
  interface Admission extends AutoCloseable {
    @Override
    void close();
  }

  /**
   * Admits one submit, or refuses it at once.
   *
   * @throws ApiError 503 with {@code Retry-After} when {@link #maxInFlight} submits are in flight
   */
  Admission admitSubmit() {
    if (!submits.tryAcquire()) {
      shedSubmits.increment();
      throw new ApiError(
              503,
              "Unavailable",
              "the controller is at its bound of "
                  + maxInFlight
                  + " submits in flight; this one was not read and changed nothing",
              null,
              "retry after the Retry-After seconds (kairos submit does), or send more jobs per"
                  + " request (a JSON array or a job array) rather than more requests")
          .retryAfter(RETRY_AFTER_SEC);
    }
    return submits::release;
  }

  /** Submits shed so far. */
  long shedSubmits() {
    return shedSubmits.sum();
  }
}
