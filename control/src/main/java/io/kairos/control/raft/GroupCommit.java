package io.kairos.control.raft;

import io.kairos.control.Fatal;
import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlResult;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Group commit: packs items that callers hand over concurrently (submits, registrations) into one
 * log entry, so that thousands of them per second cost tens of log writes, not thousands.
 *
 * <p>A single thread drains the queue: it takes whatever is waiting (up to {@code maxWeight} per
 * entry), proposes it, and goes on without waiting for the commit. While an entry is in flight
 * ({@link #EAGER_IN_FLIGHT}), the next one waits for its commit, gathering the items that arrive
 * meanwhile, unless {@link #FULL_ENTRY} items are already waiting; at most {@link #MAX_IN_FLIGHT}
 * entries are in flight. So an item alone is its own entry and waits for nothing, a steady stream
 * of separate items shares entries (each entry, with its fsync and its replication, costs far more
 * than an item in it), and a heavy load still keeps the log busy with several large entries. Each
 * caller's future completes with its own answer once the entry is committed and applied.
 *
 * @param <T> what a caller hands over
 * @param <R> what it gets back
 */
public final class GroupCommit<T, R> implements Closeable {
  static final int MAX_IN_FLIGHT = 8;

  /** Entries proposed at once without waiting for a commit. */
  static final int EAGER_IN_FLIGHT = 1;

  /** Items waiting that make an entry worth proposing past {@link #EAGER_IN_FLIGHT}. */
  static final int FULL_ENTRY = 16;

  /** How items become one command, and how the command's result answers each of them. */
  public interface Packing<T, R> {
    /** What an item counts toward an entry's {@code maxWeight} (a submit: its jobs). */
    int weight(T item);

    /** The one command for these items, in order; {@code weight} is their total. */
    ControlCommand pack(List<T> items, int weight);

    /** Completes {@code done.get(i)} for {@code items.get(i)}, from the entry's result. */
    void unpack(List<T> items, ControlResult result, List<CompletableFuture<R>> done);
  }

  private record Pending<T, R>(T item, CompletableFuture<R> done) {}

  private final RaftReplica replica;
  private final Packing<T, R> packing;
  private final int maxWeight;
  private final LinkedBlockingQueue<Pending<T, R>> queue = new LinkedBlockingQueue<>();

  /** Guards {@link #inFlight}; notified when an entry completes or the queue fills. */
  private final Object gate = new Object();

  private int inFlight;
  private final Thread drainer;
  private volatile boolean closed;

  /**
   * @param name the draining thread's name
   * @param maxWeight the most an entry holds (a single heavier item still gets an entry)
   */
  public GroupCommit(String name, RaftReplica replica, Packing<T, R> packing, int maxWeight) {
    this.replica = replica;
    this.packing = packing;
    this.maxWeight = maxWeight;
    this.drainer =
        Thread.ofPlatform()
            .name(name)
            .daemon()
            .uncaughtExceptionHandler(Fatal.EXIT)
            .start(this::drain);
  }

  /** Queues an item for the next entry; completes with its answer once that entry is applied. */
  public CompletableFuture<R> add(T item) {
    var done = new CompletableFuture<R>();
    if (closed) {
      done.completeExceptionally(new IOException("the controller is shutting down"));
      return done;
    }
    queue.add(new Pending<>(item, done));
    if (queue.size() == FULL_ENTRY) {
      synchronized (gate) {
        gate.notifyAll();
      }
    }
    return done;
  }

  private void drain() {
    var batch = new ArrayList<Pending<T, R>>();
    while (!closed) {
      try {
        Pending<T, R> first = queue.poll(200, TimeUnit.MILLISECONDS);
        if (first == null) {
          continue;
        }
        awaitTurn();
        batch.add(first);
        int weight = packing.weight(first.item());
        Pending<T, R> next;
        while (weight < maxWeight && (next = queue.poll()) != null) {
          batch.add(next);
          weight += packing.weight(next.item());
        }
        propose(List.copyOf(batch), weight);
        batch.clear();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** Waits until an entry may be proposed (see the class comment), and counts it in flight. */
  private void awaitTurn() throws InterruptedException {
    synchronized (gate) {
      while (inFlight >= MAX_IN_FLIGHT
          || inFlight >= EAGER_IN_FLIGHT && queue.size() + 1 < FULL_ENTRY) {
        gate.wait(50); // notified on a commit or a full queue; the timeout is a safety net
      }
      inFlight++;
    }
  }

  private void landed() {
    synchronized (gate) {
      inFlight--;
      gate.notifyAll();
    }
  }

  private void propose(List<Pending<T, R>> batch, int weight) {
    var items = new ArrayList<T>(batch.size());
    var done = new ArrayList<CompletableFuture<R>>(batch.size());
    for (Pending<T, R> p : batch) {
      items.add(p.item());
      done.add(p.done());
    }
    CompletableFuture<ControlResult> proposed;
    try {
      proposed = replica.propose(packing.pack(items, weight));
    } catch (RuntimeException e) {
      proposed = CompletableFuture.failedFuture(e);
    }
    proposed.whenComplete(
        (result, error) -> {
          landed();
          if (error != null) {
            done.forEach(d -> d.completeExceptionally(error));
            return;
          }
          try {
            packing.unpack(items, result, done);
          } catch (RuntimeException e) {
            done.forEach(d -> d.completeExceptionally(e)); // no caller waits forever
          }
        });
  }

  @Override
  public void close() {
    closed = true;
    drainer.interrupt();
    Pending<T, R> p;
    while ((p = queue.poll()) != null) {
      p.done().completeExceptionally(new IOException("the controller is shutting down"));
    }
  }
}
