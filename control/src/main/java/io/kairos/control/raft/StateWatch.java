package io.kairos.control.raft;

/**
 * Wakes waiters when the replicated state changes: the scheduler loop and long-polling agent
 * heartbeats wait here instead of polling.
 */
public final class StateWatch {
  private long version;

  synchronized void changed() {
    version++;
    notifyAll();
  }

  /** Wakes every waiter without a state change (a gang's barrier opened). */
  public void poke() {
    changed();
  }

  public synchronized long version() {
    return version;
  }

  /**
   * Waits until the version passes {@code seen} or {@code timeoutMs} elapse; returns the current
   * version. Interrupts are passed on.
   */
  public synchronized long awaitChange(long seen, long timeoutMs) throws InterruptedException {
    long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
    while (version == seen) {
      long left = (deadline - System.nanoTime()) / 1_000_000L;
      if (left <= 0) {
        break;
      }
      wait(left);
    }
    return version;
  }
}
