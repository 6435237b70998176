package io.kairos.control.health;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * One {@link PhiAccrualDetector} per node, and each node's liveness: ALIVE, SUSPECT or DOWN.
 *
 * <p>The states, with {@code suspect} and {@code threshold} the two phi levels:
 *
 * <pre>
 *   ALIVE   --phi >= suspect-->    SUSPECT --phi >= threshold--> DOWN
 *   ALIVE   --phi >= threshold-->  DOWN        (one evaluation may skip SUSPECT)
 *   SUSPECT --heartbeat-->         ALIVE
 *   DOWN    --reset (the node registered again)--> ALIVE
 * </pre>
 *
 * <p>Why these levels: the default suspect level 3 is a one-in-a-thousand chance that a live node
 * would be this late; DOWN uses the detector's threshold (Akka's 8). With 1 s heartbeats and Akka's
 * defaults a silent node is SUSPECT 4.306 s after its last heartbeat and DOWN at 4.523 s. SUSPECT
 * is a warning (show it, stop placing new work there); DOWN is the decision.
 *
 * <p>A node may also be DOWN by silence alone ({@code maxSilenceMs}): the controller passes the
 * agent's lease plus its margin, after which the agent has surely fenced itself, so phi need not be
 * waited for.
 *
 * <p>Why DOWN is sticky: once a node is declared down the controller fences its lease (a new epoch
 * on re-registration), so a late heartbeat from the old incarnation must not revive it. A heartbeat
 * from a DOWN node is ignored; {@link #reset} (called on registration) starts a fresh detector.
 *
 * <p>Deterministic: time is a parameter; nodes are kept in name order, so {@link #evaluate} lists
 * its transitions in name order. Not thread-safe: one owner (the leader's liveness loop), or
 * external locking. Each heartbeat is O(log n) and allocates nothing once a node's ring buffer has
 * grown; {@code evaluate} is O(n) and allocates only the transitions it returns.
 */
public final class FailureDetectors {
  /** The default suspect level: phi 3, a one-in-a-thousand chance of a false suspicion. */
  public static final double DEFAULT_SUSPECT_THRESHOLD = 3.0;

  /** A node's liveness as the detector sees it. */
  public enum Liveness {
    ALIVE,
    SUSPECT,
    DOWN
  }

  /** A node's liveness changed at {@code atMs}; {@code phi} is the level that decided it. */
  public record Transition(String node, Liveness from, Liveness to, long atMs, double phi) {
    public Transition {
      Objects.requireNonNull(node, "node");
      Objects.requireNonNull(from, "from");
      Objects.requireNonNull(to, "to");
    }
  }

  private static final class Watched {
    final PhiAccrualDetector detector;
    Liveness liveness = Liveness.ALIVE;

    Watched(PhiAccrualDetector.Settings settings) {
      detector = new PhiAccrualDetector(settings);
    }
  }

  private final PhiAccrualDetector.Settings settings;
  private final double suspectThreshold;
  private final long maxSilenceMs;
  private final TreeMap<String, Watched> nodes = new TreeMap<>();

  /** Akka's defaults, suspect at phi {@value #DEFAULT_SUSPECT_THRESHOLD}. */
  public FailureDetectors() {
    this(PhiAccrualDetector.Settings.AKKA_DEFAULTS, DEFAULT_SUSPECT_THRESHOLD);
  }

  /**
   * @param suspectThreshold phi at which a node becomes SUSPECT: > 0 and at most the settings'
   *     threshold (equal means SUSPECT is never reported)
   */
  public FailureDetectors(PhiAccrualDetector.Settings settings, double suspectThreshold) {
    this(settings, suspectThreshold, Long.MAX_VALUE);
  }

  /**
   * As {@link #FailureDetectors(PhiAccrualDetector.Settings, double)}, and a node silent for {@code
   * maxSilenceMs} (> 0) is DOWN whatever its phi.
   */
  public FailureDetectors(
      PhiAccrualDetector.Settings settings, double suspectThreshold, long maxSilenceMs) {
    if (maxSilenceMs <= 0) {
      throw new IllegalArgumentException("maxSilenceMs must be > 0, got " + maxSilenceMs);
    }
    this.maxSilenceMs = maxSilenceMs;
    this.settings = Objects.requireNonNull(settings, "settings");
    if (!(suspectThreshold > 0 && suspectThreshold <= settings.threshold())) {
      throw new IllegalArgumentException(
          "suspectThreshold must be in (0, threshold "
              + settings.threshold()
              + "], got "
              + suspectThreshold);
    }
    this.suspectThreshold = suspectThreshold;
  }

  /**
   * Records a heartbeat from {@code node}, which starts being watched if it was not. A SUSPECT node
   * becomes ALIVE (the transition is returned); a DOWN node stays DOWN and the heartbeat is ignored
   * (see the class note).
   */
  public Optional<Transition> heartbeat(String node, long nowMs) {
    Watched w = nodes.get(node);
    if (w == null) {
      w = new Watched(settings);
      nodes.put(Objects.requireNonNull(node, "node"), w);
    }
    return switch (w.liveness) {
      case DOWN -> Optional.empty();
      case ALIVE -> {
        w.detector.heartbeat(nowMs);
        yield Optional.empty();
      }
      case SUSPECT -> {
        w.detector.heartbeat(nowMs);
        w.liveness = Liveness.ALIVE;
        yield Optional.of(
            new Transition(node, Liveness.SUSPECT, Liveness.ALIVE, nowMs, w.detector.phi(nowMs)));
      }
    };
  }

  /**
   * The node (re-)registered: forget its history, start a fresh detector with this as its first
   * heartbeat, and make it ALIVE. Returns the transition when it was SUSPECT or DOWN.
   */
  public Optional<Transition> reset(String node, long nowMs) {
    Watched fresh = new Watched(settings);
    fresh.detector.heartbeat(nowMs);
    Watched old = nodes.put(Objects.requireNonNull(node, "node"), fresh);
    if (old == null || old.liveness == Liveness.ALIVE) {
      return Optional.empty();
    }
    return Optional.of(new Transition(node, old.liveness, Liveness.ALIVE, nowMs, 0.0));
  }

  /** Stops watching {@code node}; true if it was watched. */
  public boolean remove(String node) {
    return nodes.remove(node) != null;
  }

  /**
   * Every ALIVE-to-SUSPECT, ALIVE-to-DOWN and SUSPECT-to-DOWN change at {@code nowMs}, in node name
   * order; DOWN when phi reaches the threshold or the node has been silent {@code maxSilenceMs}.
   * Nodes that improve without a heartbeat cannot exist (phi only grows between heartbeats), so
   * nothing returns to ALIVE here.
   */
  public List<Transition> evaluate(long nowMs) {
    List<Transition> changes = new ArrayList<>(0);
    for (var e : nodes.entrySet()) {
      Watched w = e.getValue();
      if (w.liveness == Liveness.DOWN) {
        continue;
      }
      double phi = w.detector.phi(nowMs);
      boolean silent =
          w.detector.isMonitoring() && nowMs - w.detector.lastHeartbeatMs() >= maxSilenceMs;
      Liveness next =
          phi >= settings.threshold() || silent
              ? Liveness.DOWN
              : phi >= suspectThreshold
                  ? Liveness.SUSPECT
                  : w.liveness; // SUSPECT stays SUSPECT until a heartbeat
      if (next != w.liveness) {
        changes.add(new Transition(e.getKey(), w.liveness, next, nowMs, phi));
        w.liveness = next;
      }
    }
    return changes;
  }

  /** The node's liveness, if it is watched. */
  public Optional<Liveness> liveness(String node) {
    Watched w = nodes.get(node);
    return w == null ? Optional.empty() : Optional.of(w.liveness);
  }

  /** The node's phi at {@code nowMs}, if it is watched. */
  public Optional<Double> phi(String node, long nowMs) {
    Watched w = nodes.get(node);
    return w == null ? Optional.empty() : Optional.of(w.detector.phi(nowMs));
  }

  /** How many nodes are watched. */
  public int size() {
    return nodes.size();
  }
}
