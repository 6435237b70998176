package io.kairos.control.agent;

import io.kairos.control.health.FailureDetectors;
import io.kairos.control.health.PhiAccrualDetector;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's view of its nodes' heartbeats: when each last arrived, its failure detector, and
 * which nodes are being declared DOWN. One lock for all of it, so that a heartbeat's arrival and a
 * DOWN's reading of the last arrival are ordered: either the arrival counts in the DOWN's {@code
 * safeAfterMs}, or {@link #arrived} refuses it and its reply fences the agent ({@link #beginDown}).
 * Leader state, never replicated.
 *
 * <p>Its own pauses: when the evaluations come more than {@link #MAX_OWN_PAUSE_MS} apart (a
 * stop-the-world pause, a starved process on a loaded host), the heartbeats that came in meanwhile
 * may still wait in the sockets, unstamped, so no node is judged for {@link #AFTER_OWN_PAUSE_MS}
 * (Cassandra's failure detector does the same after a local pause). Never unsafe: the lease, not
 * the verdict, decides when a lost node's GPUs may go elsewhere; a pause only delays the verdict.
 */
final class NodeWatch {
  private static final Logger log = LoggerFactory.getLogger(NodeWatch.class);

  /** Evaluations further apart than this mean the controller itself paused. */
  static final long MAX_OWN_PAUSE_MS = 1_000;

  /** How long after its own pause no node is judged: the waiting heartbeats are read by then. */
  static final long AFTER_OWN_PAUSE_MS = 1_500;

  private final FailureDetectors detectors;
  private long lastEvaluatedMs = -1;
  private long quietUntilMs = -1;
  private final Map<String, Long> lastSeenMs = new HashMap<>();
  private final Set<String> goingDown = new HashSet<>();

  /** Phi-accrual detection, and DOWN at the latest once a node's lease has surely run out. */
  NodeWatch(PhiAccrualDetector.Settings detection, LeaseSettings lease) {
    detectors =
        new FailureDetectors(
            detection,
            Math.min(FailureDetectors.DEFAULT_SUSPECT_THRESHOLD, detection.threshold()),
            lease.silenceMs());
  }

  /** A heartbeat from {@code node} arrived; false, recording nothing, while it is going DOWN. */
  synchronized boolean arrived(String node, long nowMs) {
    if (goingDown.contains(node)) {
      return false;
    }
    lastSeenMs.put(node, nowMs);
    detectors.heartbeat(node, nowMs);
    return true;
  }

  /** The node registered: heard from now, with a fresh detector. */
  synchronized void registered(String node, long nowMs) {
    lastSeenMs.put(node, nowMs);
    detectors.reset(node, nowMs);
  }

  /** A new leader watches every live node as if it had just heard from it. */
  synchronized void adopt(List<String> nodes, long nowMs) {
    lastEvaluatedMs = nowMs; // not leader until now: not a pause
    for (String n : nodes) {
      detectors.reset(n, nowMs);
      lastSeenMs.putIfAbsent(n, nowMs);
    }
  }

  /** The detectors' changes at {@code nowMs}; none within a while after a pause of its own. */
  synchronized List<FailureDetectors.Transition> evaluate(long nowMs) {
    if (lastEvaluatedMs >= 0 && nowMs - lastEvaluatedMs > MAX_OWN_PAUSE_MS) {
      log.warn(
          "liveness: the controller itself was paused for {} ms; judging no node for {} ms",
          nowMs - lastEvaluatedMs,
          AFTER_OWN_PAUSE_MS);
      quietUntilMs = nowMs + AFTER_OWN_PAUSE_MS;
    }
    lastEvaluatedMs = nowMs;
    return nowMs < quietUntilMs ? List.of() : detectors.evaluate(nowMs);
  }

  synchronized Optional<Long> lastSeen(String node) {
    return Optional.ofNullable(lastSeenMs.get(node));
  }

  /** The detector's verdict and phi (at most 1,000), for a watched node. */
  synchronized Optional<AgentService.Liveness> liveness(String node, long nowMs) {
    return detectors
        .liveness(node)
        .map(
            l ->
                new AgentService.Liveness(
                    l.name(), Math.min(1000.0, detectors.phi(node, nowMs).orElse(0.0))));
  }

  /**
   * Starts declaring {@code node} DOWN: from now its heartbeats renew nothing, until {@link
   * #endDown}. Returns its last arrival, at least {@code floorMs} (when the leader took over).
   */
  synchronized long beginDown(String node, long floorMs) {
    goingDown.add(node);
    return Math.max(lastSeenMs.getOrDefault(node, floorMs), floorMs);
  }

  /** The DOWN was committed (its new epoch fences the agent) or given up. */
  synchronized void endDown(String node) {
    goingDown.remove(node);
  }
}
