package io.kairos.control.api;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The heap that requests in flight may take at once: a submit reserves {@link #SUBMIT_EXPANSION}
 * times its body (parsed jobs, validated requests, the log entry and its copies), a list its views,
 * a log read its chunk. A request that finds too little free waits up to {@link #WAIT_MS}, then is
 * answered 503 with {@code Retry-After}; one larger than the whole budget is 413. So however many
 * clients post 16 MiB batches at once, they cannot take more than the budget.
 */
final class RequestBudget {
  /** Heap a submit takes per byte of its body, measured (docs/operations.md). */
  static final int SUBMIT_EXPANSION = 8;

  static final long WAIT_MS = 2_000;
  private static final int KIB = 1024;

  private final long capacityBytes;
  private final Semaphore kib;

  RequestBudget(long capacityBytes) {
    this.capacityBytes = capacityBytes;
    this.kib = new Semaphore((int) Math.min(Integer.MAX_VALUE, capacityBytes / KIB));
  }

  long capacityBytes() {
    return capacityBytes;
  }

  /** A reservation; closing it gives the heap back. */
  interface Reservation extends AutoCloseable {
    @Override
    void close();
  }

  /**
   * Reserves {@code bytes} for {@code what}, waiting up to {@link #WAIT_MS}.
   *
   * @throws ApiError 413 when {@code bytes} is more than the whole budget, 503 when not enough is
   *     free in time
   */
  Reservation reserve(long bytes, String what, String fix) throws InterruptedException {
    checkFits(bytes, what, fix);
    int permits = (int) Math.max(1, (bytes + KIB - 1) / KIB);
    if (!kib.tryAcquire(permits, WAIT_MS, TimeUnit.MILLISECONDS)) {
      throw new ApiError(
              503,
              "Unavailable",
              "the controller is busy with other large requests (" + what + " must wait)",
              null,
              "retry in a moment")
          .retryAfter(1);
    }
    return () -> kib.release(permits);
  }

  /** 413 when {@code bytes} is more than the whole budget. */
  void checkFits(long bytes, String what, String fix) {
    if (bytes > capacityBytes) {
      throw new ApiError(
          413,
          "Body too large",
          what
              + " needs about "
              + mib(bytes)
              + " of the controller's heap, more than requests may take at once ("
              + mib(capacityBytes)
              + ", an eighth of its heap)",
          null,
          fix);
    }
  }

  private static String mib(long bytes) {
    return String.format(java.util.Locale.ROOT, "%.1f MiB", bytes / (double) (1 << 20));
  }
}
