package io.kairos.agent;

import io.kairos.agent.ControllerClient.Outcome;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent loop's retry state: how many calls failed and were redirected in a row, and how long to
 * wait after a call that did not succeed (a redirect is followed at once, unless replicas that
 * disagree bounce the agent around; anything else backs off). Used by the loop thread only.
 */
final class Retries {
  private static final Logger log = LoggerFactory.getLogger(Retries.class);

  private final String node;
  private final List<String> controllers;
  private final Backoff backoff;
  private final ControllerClient client;
  private int failures;
  private int redirects;

  Retries(String node, List<String> controllers, Backoff backoff, ControllerClient client) {
    this.node = node;
    this.controllers = controllers;
    this.backoff = backoff;
    this.client = client;
  }

  /** A call succeeded: the next failure backs off from the start. */
  void succeeded() {
    failures = 0;
    redirects = 0;
  }

  /** A call reached the leader: redirects count from 0 again. */
  void reachedLeader() {
    redirects = 0;
  }

  /**
   * How long to wait after {@code outcome}, a call that neither succeeded nor was rejected (the
   * caller stops on a rejection).
   */
  Duration after(Outcome<?> outcome) {
    switch (outcome) {
      case Outcome.Ok<?> _, Outcome.Rejected<?> _ ->
          throw new IllegalStateException("no retry after " + outcome);
      case Outcome.Redirected<?> r -> {
        log.info("agent {}: following the leader to {}", node, r.leader());
        // A redirect loop between replicas that disagree must not spin.
        return ++redirects > controllers.size() + 1 ? backoff.delay(++failures) : Duration.ZERO;
      }
      case Outcome.Unreachable<?> u -> {
        log.warn(
            "agent {}: controller {} unreachable ({}); next: {}",
            node,
            u.url(),
            u.error(),
            client.current());
        return backoff.delay(++failures);
      }
      case Outcome.Failed<?> f -> {
        // A 4xx other than 401, 403 and 421 means the controller will not take what the agent
        // sends (an invalid registration): say so loudly, but keep trying (an upgrade may fix it).
        boolean refused = f.status() >= 400 && f.status() < 500 && f.status() != 421;
        String text = "agent {}: controller {} answered {}: {}";
        if (refused) {
          log.error(text, node, f.url(), f.status(), f.body());
        } else {
          log.warn(text, node, f.url(), f.status(), f.body());
        }
        // Never sooner than the controller's Retry-After (a shed or paced request).
        return backoff.delay(++failures, f.retryAfterMs());
      }
    }
  }
}
