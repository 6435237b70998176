package io.kairos.control.raft;

import io.kairos.control.state.ControlState;
import io.kairos.control.state.StateImage;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * A second copy of the replicated state, kept by its own thread from the same log entries, from
 * which snapshots are taken: so the apply thread never copies the whole state (a snapshot of
 * 100,000 live jobs copied on it stalled every submit behind it for tens of milliseconds).
 *
 * <p>How: the apply thread hands each applied entry's bytes over (a reference, O(1)), and for a
 * snapshot a marker; this thread decodes and applies the entries to its own {@link ControlState} in
 * the same order, which is the same state at the marker since applying is deterministic (the
 * premise of the replicated log). At the marker it takes the image of its own copy, while the apply
 * thread goes on. The two copies share nothing: each decodes its own objects from the bytes.
 *
 * <p>Cost: the state's memory twice, and decoding and applying each entry twice (once here, off the
 * critical path). The hand-over queue is bounded ({@link #QUEUE}): should this thread fall that far
 * behind, the apply thread waits for it rather than fill the heap.
 *
 * <p>A failure here (an entry the live state applied but this copy cannot) would be a bug: it is
 * kept and every later image fails with it, so no snapshot is written from a diverged copy.
 */
final class ShadowState implements AutoCloseable {
  static final int QUEUE = 100_000;

  private final BlockingQueue<Runnable> tasks = new ArrayBlockingQueue<>(QUEUE);
  private final Thread thread;
  private volatile boolean closed;

  /** Touched by the shadow thread only. */
  private ControlState state = new ControlState();

  /** Touched by the shadow thread only: why this copy cannot be trusted any more. */
  private Throwable failed;

  ShadowState() {
    thread = Thread.ofPlatform().name("kairos-snapshot-state").daemon().start(this::run);
  }

  /**
   * Replaces the copy by {@code loaded} (a snapshot was loaded; built by the caller from the file,
   * so it shares nothing with the live state), after the entries handed over before.
   */
  void reset(ControlState loaded) {
    enqueue(
        () -> {
          state = loaded;
          failed = null;
        });
  }

  /** Applies one log entry's bytes (as the log holds them, format byte first) to the copy. */
  void apply(ByteString entry) {
    enqueue(
        () -> {
          if (failed != null) {
            return;
          }
          try {
            state.apply(CommandCodec.decode(entry.toByteArray()));
            state.takeForgotten(); // the live state keeps them; this copy only drops them
          } catch (RuntimeException | Error e) {
            failed = e;
          }
        });
  }

  /**
   * The copy's image once every entry handed over before this call is applied to it: the live
   * state's image at this point of the log, taken off the apply thread.
   */
  CompletableFuture<StateImage> image() {
    var done = new CompletableFuture<StateImage>();
    enqueue(
        () -> {
          if (failed != null) {
            done.completeExceptionally(
                new IllegalStateException("the snapshot copy of the state failed", failed));
          } else {
            try {
              done.complete(state.image());
            } catch (RuntimeException | Error e) {
              done.completeExceptionally(e);
            }
          }
        });
    return done;
  }

  private void enqueue(Runnable task) {
    if (closed) {
      return;
    }
    try {
      tasks.put(task);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while handing an entry to the snapshot copy", e);
    }
  }

  private void run() {
    while (!closed) {
      try {
        tasks.take().run();
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Entries handed over and not yet applied to the copy (how far it lags). */
  int backlog() {
    return tasks.size();
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
  }
}
