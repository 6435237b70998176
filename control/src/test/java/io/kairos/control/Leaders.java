package io.kairos.control;

import java.time.Duration;

/**
 * Waits for an in-process controller to lead (agents' endpoints answer 421 until then) and to have
 * committed its bootstrap (tokens, limits), so no background commit lands in a test's comparison.
 */
public final class Leaders {
  private Leaders() {}

  public static void awaitLeader(Controller controller, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!controller.replica().isLeaderReady() || !controller.isBootstrapped()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the controller did not become leader within " + timeout);
      }
      Thread.sleep(20);
    }
  }
}
