package io.kairos.control;

import java.time.Duration;

/** Waits for an in-process controller to lead (agents' endpoints answer 421 until then). */
public final class Leaders {
  private Leaders() {}

  public static void awaitLeader(Controller controller, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!controller.replica().isLeaderReady()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the controller did not become leader within " + timeout);
      }
      Thread.sleep(20);
    }
  }
}
