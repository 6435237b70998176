package io.kairos.control.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The state watch wakes every waiter after a change, misses no change however it races with a
 * waiter going to sleep, and never makes the changing (apply) thread wait for the waiters.
 */
class StateWatchTest {
  @Test
  void returnsAtOnceWhenTheVersionAlreadyMovedAndTimesOutWhenNothingChanges()
      throws InterruptedException {
    var watch = new StateWatch();
    long seen = watch.version();
    watch.changed();
    assertThat(watch.awaitChange(seen, 60_000)).isEqualTo(seen + 1);
    long t0 = System.nanoTime();
    assertThat(watch.awaitChange(seen + 1, 50)).isEqualTo(seen + 1);
    assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(40_000_000L);
  }

  @Test
  void oneChangeWakesEveryWaiter() {
    var watch = new StateWatch();
    long seen = watch.version();
    var woken = new AtomicInteger();
    var threads = new ArrayList<Thread>();
    for (int i = 0; i < 64; i++) {
      threads.add(
          Thread.ofVirtual()
              .start(
                  () -> {
                    try {
                      if (watch.awaitChange(seen, 120_000) > seen) {
                        woken.incrementAndGet();
                      }
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  }));
    }
    // All of them asleep (or about to be): a change made now must reach each one.
    LockSupport.parkNanos(200_000_000L);
    watch.poke();
    await().atMost(Duration.ofSeconds(60)).until(() -> woken.get() == 64);
    threads.forEach(Thread::interrupt);
  }

  /**
   * A waiter that reads the version, then goes to sleep while the change lands in between, at
   * random offsets, many times over (each round with a fresh watch, so its notifier thread starts
   * in the race too): every round ends by the change, none by the 2-minute timeout.
   */
  @Test
  void noChangeIsMissedWhileAWaiterGoesToSleep() throws InterruptedException {
    var random = new Random(15);
    var late = new ConcurrentLinkedQueue<Integer>();
    for (int round = 0; round < 300; round++) {
      var watch = new StateWatch();
      long seen = watch.version();
      int r = round;
      long delayNanos = random.nextInt(200_000);
      Thread waiter =
          Thread.ofPlatform()
              .start(
                  () -> {
                    try {
                      long t0 = System.nanoTime();
                      watch.awaitChange(seen, 120_000);
                      if (System.nanoTime() - t0 > 60_000_000_000L) {
                        late.add(r);
                      }
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  });
      LockSupport.parkNanos(delayNanos);
      watch.changed();
      waiter.join(Duration.ofSeconds(90));
      assertThat(waiter.isAlive()).as("round %d's waiter still waits", r).isFalse();
    }
    assertThat(late).isEmpty();
  }

  /**
   * Waiters that keep coming and going while changes stream in (as long-polling heartbeats do under
   * load) each see every change they wait for: each waits for the next version in turn, with a
   * timeout far beyond the test's, until the stream has passed 20,000 changes.
   */
  @Test
  void waitersKeepUpWithAStreamOfChanges() throws InterruptedException {
    var watch = new StateWatch();
    var timedOut = new AtomicInteger();
    var waiters = new ArrayList<Thread>();
    for (int i = 0; i < 32; i++) {
      waiters.add(
          Thread.ofVirtual()
              .start(
                  () -> {
                    try {
                      for (long v = watch.version(); v < 20_000; ) {
                        long t0 = System.nanoTime();
                        long next = watch.awaitChange(v, 120_000);
                        if (next == v && System.nanoTime() - t0 > 60_000_000_000L) {
                          timedOut.incrementAndGet();
                        }
                        v = next;
                      }
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  }));
    }
    Thread changer =
        Thread.ofPlatform()
            .start(
                () -> {
                  for (int i = 0; i < 20_000; i++) {
                    watch.changed();
                    if (i % 100 == 0) {
                      LockSupport.parkNanos(100_000L);
                    }
                  }
                });
    changer.join(Duration.ofSeconds(60));
    assertThat(changer.isAlive()).as("the changes were made").isFalse();
    for (Thread t : waiters) {
      t.join(Duration.ofSeconds(60));
      assertThat(t.isAlive()).as("a waiter still waits").isFalse();
    }
    assertThat(timedOut.get()).isZero();
  }

  @Test
  void anInterruptedWaiterStops() throws InterruptedException {
    var watch = new StateWatch();
    var interrupted = new AtomicInteger();
    Thread waiter =
        Thread.ofVirtual()
            .start(
                () -> {
                  try {
                    watch.awaitChange(watch.version(), 120_000);
                  } catch (InterruptedException e) {
                    interrupted.incrementAndGet();
                  }
                });
    LockSupport.parkNanos(100_000_000L);
    waiter.interrupt();
    waiter.join(Duration.ofSeconds(30));
    assertThat(interrupted.get()).isEqualTo(1);
  }
}
