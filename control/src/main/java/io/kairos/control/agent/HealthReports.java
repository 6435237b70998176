package io.kairos.control.agent;

import io.kairos.control.state.ControlCommand.DrainNode;
import io.kairos.control.state.ControlCommand.GpusUnhealthy;
import io.kairos.protocol.agent.Heartbeat;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The commands a heartbeat's health problems call for: a drain for problems of the node as a whole,
 * GPUs taken out of service alone for problems of single GPUs. Bounded, so that an agent cannot
 * grow the log: reasons are clipped, and GPU indexes beyond 63 ignored. Pure.
 */
final class HealthReports {
  private HealthReports() {}

  /** Drains the node and requeues its jobs, with its problems (after {@code prefix}) as reason. */
  static DrainNode drain(Heartbeat hb, String prefix, long nowMs) {
    String reason = prefix + String.join("; ", hb.problems());
    if (reason.length() > 1000) {
      reason = reason.substring(0, 1000) + "...";
    }
    return new DrainNode(nowMs, hb.node(), reason, true);
  }

  /**
   * Takes the GPUs this heartbeat reports unhealthy out of service, each alone, when one is not out
   * yet ({@code known}: the state keeps the first reason; an admin returns the GPU); empty when
   * none is new.
   */
  static Optional<GpusUnhealthy> gpusOut(Heartbeat hb, Set<Integer> known, long nowMs) {
    var fresh = new TreeMap<Integer, String>();
    for (var e : hb.gpuProblems().entrySet()) {
      Integer gpu = e.getKey();
      if (gpu != null && gpu >= 0 && gpu < 64 && !known.contains(gpu)) {
        String reason = e.getValue() == null ? "unhealthy" : e.getValue().strip();
        fresh.put(gpu, reason.length() > 300 ? reason.substring(0, 300) + "..." : reason);
      }
    }
    return fresh.isEmpty()
        ? Optional.empty()
        : Optional.of(new GpusUnhealthy(nowMs, hb.node(), hb.epoch(), fresh));
  }
}
