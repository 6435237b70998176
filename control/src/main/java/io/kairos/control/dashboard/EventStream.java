package io.kairos.control.dashboard;

import io.kairos.control.raft.StateWatch;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Server-sent events for {@code GET /api/v1/events}: one {@code changed} event carrying the state
 * version when the replicated state changes, so a page refetches what it shows.
 *
 * <p>The stream opens with the current version (a client that reconnects learns at once whether it
 * missed something), sends at most one event per {@code minGap} however fast commands apply (one
 * event stands for all the changes before it), and a comment line every {@code keepAlive} so
 * proxies keep the connection and a vanished client is noticed by the failed write.
 *
 * <pre>
 * retry: 3000
 *
 * id: 42
 * event: changed
 * data: {"version":42}
 *
 * : keep-alive
 * </pre>
 */
public final class EventStream {
  public static final Duration KEEP_ALIVE = Duration.ofSeconds(15);
  public static final Duration MIN_GAP = Duration.ofMillis(250);

  /** How long a browser waits before it reconnects, in milliseconds (the {@code retry} field). */
  static final long RETRY_MS = 3000;

  private final StateWatch watch;
  private final Duration keepAlive;
  private final Duration minGap;

  public EventStream(StateWatch watch) {
    this(watch, KEEP_ALIVE, MIN_GAP);
  }

  EventStream(StateWatch watch, Duration keepAlive, Duration minGap) {
    this.watch = watch;
    this.keepAlive = keepAlive;
    this.minGap = minGap;
  }

  /**
   * Writes events to {@code out} until a write fails (the client left) or the thread is
   * interrupted; then returns. Blocks the calling (virtual) thread meanwhile.
   */
  public void serve(OutputStream out) throws IOException {
    long seen = watch.version();
    write(out, "retry: " + RETRY_MS + "\n\n" + changed(seen));
    try {
      while (!Thread.currentThread().isInterrupted()) {
        long now = watch.awaitChange(seen, keepAlive.toMillis());
        if (now == seen) {
          write(out, ": keep-alive\n\n");
          continue;
        }
        seen = now;
        write(out, changed(seen));
        Thread.sleep(minGap.toMillis()); // coalesce a burst of commits into the next event
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static String changed(long version) {
    return "id: " + version + "\nevent: changed\ndata: {\"version\":" + version + "}\n\n";
  }

  private static void write(OutputStream out, String frame) throws IOException {
    out.write(frame.getBytes(StandardCharsets.UTF_8));
    out.flush();
  }
}
