package io.kairos.agent;

/**
 * A generation counter a thread can wait on: waiters read {@link #generation}, check their
 * condition, then {@link #await} that generation, so a {@link #signal} between the check and the
 * wait is not lost. Thread-safe.
 */
final class Wakeup {
  private long generation;

  synchronized long generation() {
    return generation;
  }

  synchronized void signal() {
    generation++;
    notifyAll();
  }

  /** Returns when the generation is no longer {@code seen}, or after {@code maxMs} of real time. */
  synchronized void await(long seen, long maxMs) throws InterruptedException {
    long deadline = System.nanoTime() + maxMs * 1_000_000;
    while (generation == seen) {
      long leftMs = (deadline - System.nanoTime()) / 1_000_000;
      if (leftMs <= 0) {
        return;
      }
      wait(leftMs);
    }
  }
}
