package io.kairos.control.api;

import io.javalin.config.JavalinConfig;
import io.kairos.control.dashboard.EventStream;
import io.kairos.control.dashboard.UtilizationHistory;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;

/**
 * What the dashboard reads besides the resources: {@code GET /api/v1/stats/utilization} (the
 * leader's load history) and {@code GET /api/v1/events} (server-sent events on state changes). Both
 * need a user token in the Authorization header, like every other read. Event streams are limited
 * per user ({@link #MAX_STREAMS_PER_USER}, 429 past it) and in all ({@link #MAX_STREAMS}, 503), so
 * one user cannot hold them all.
 */
final class EventRoutes {
  /** Open event streams at most; each holds a virtual thread and a connection. */
  static final int MAX_STREAMS = 1024;

  /** Open event streams of one user at most: a dashboard tab holds one. */
  static final int MAX_STREAMS_PER_USER = 8;

  private static final Semaphore STREAMS = new Semaphore(MAX_STREAMS);

  /** Open streams by user; a user with none is not in the map. */
  private static final ConcurrentHashMap<String, Integer> BY_USER = new ConcurrentHashMap<>();

  private EventRoutes() {}

  static void register(JavalinConfig config, Services s) {
    config.routes.get(
        "/api/v1/stats/utilization",
        ctx -> {
          Api.user(ctx);
          String label = ctx.queryParamAsClass("window", String.class).getOrDefault("6h");
          Duration window =
              UtilizationHistory.parseWindow(label)
                  .orElseThrow(
                      () ->
                          ApiError.invalid(
                              "window",
                              "'" + Submissions.clip(label) + "' is not a window of 1m to 14d",
                              "use a number and m, h or d, e.g. 30m, 6h or 2d"));
          ctx.json(s.utilization().query(label.trim(), window, s.clock().instant()));
        });
    config.routes.get(
        "/api/v1/events",
        ctx -> {
          String user = Api.user(ctx).user();
          if (!takeUserStream(user)) {
            throw ApiError.overLimit(
                "eventStreamsPerUser",
                MAX_STREAMS_PER_USER,
                user + " holds " + MAX_STREAMS_PER_USER + " open event streams already",
                "close a dashboard tab (or another stream) first",
                5);
          }
          if (!STREAMS.tryAcquire()) {
            releaseUserStream(user);
            throw ApiError.unavailable("too many open event streams (" + MAX_STREAMS + ")");
          }
          try {
            var res = ctx.res();
            res.setStatus(200);
            res.setContentType("text/event-stream");
            res.setCharacterEncoding("UTF-8");
            res.setHeader("Cache-Control", "no-cache");
            res.setHeader("X-Accel-Buffering", "no"); // nginx: do not buffer the stream
            new EventStream(s.replica().stateMachine().watch()).serve(res.getOutputStream());
          } catch (java.io.IOException e) {
            // The client went away: nothing to answer.
          } finally {
            STREAMS.release();
            releaseUserStream(user);
          }
        });
  }

  /** Counts one more stream of {@code user}; false (and nothing counted) at the user's limit. */
  private static boolean takeUserStream(String user) {
    boolean[] taken = {false};
    BY_USER.compute(
        user,
        (u, n) -> {
          int open = n == null ? 0 : n;
          if (open >= MAX_STREAMS_PER_USER) {
            return n;
          }
          taken[0] = true;
          return open + 1;
        });
    return taken[0];
  }

  private static void releaseUserStream(String user) {
    BY_USER.computeIfPresent(user, (u, n) -> n <= 1 ? null : n - 1);
  }
}
