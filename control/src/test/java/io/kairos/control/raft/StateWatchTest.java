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
   * The changing (apply) thread never waits for the waiters' monitor: with a waiter asleep and the
   * monitor held by another thread, 100,000 changes still complete; the waiter wakes once the
   * monitor is free.
   */
  @Test
  void changesNeverWaitForTheWaitersMonitor() throws InterruptedException {
    var watch = new StateWatch();
    long seen = watch.version();
    var woken = new AtomicInteger();
    Thread waiter =
        Thread.ofVirtual()
            .start(
                () -> {
                  try {
                    watch.awaitChange(seen, 120_000);
                    woken.incrementAndGet();
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                });
    LockSupport.parkNanos(100_000_000L);
    var changed = new java.util.concurrent.CountDownLatch(1);
    synchronized (watch.waiters) {
      Thread.ofPlatform()
          .start(
              () -> {
                for (int i = 0; i < 100_000; i++) {
                  watch.changed();
                }
                changed.countDown();
              });
      assertThat(changed.await(60, java.util.concurrent.TimeUnit.SECONDS))
          .as("changes completed while the waiters' monitor was held")
          .isTrue();
      assertThat(woken.get()).isZero();
    }
    await().atMost(Duration.ofSeconds(60)).until(() -> woken.get() == 1);
    assertThat(watch.version()).isEqualTo(seen + 100_000);
    waiter.join(Duration.ofSeconds(10));
  }
}
