package io.kairos.control.k8s;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Preemption on one node: kube-scheduler proposes victims; Kairos keeps the fewest GPU pods that
 * free enough GPUs for the preemptor, or drops the node. Pure: the node, the preemptor and the GPUs
 * free for it come in as values.
 */
final class VictimTrim {
  /** A victim as Kairos sees it: GPUs it holds in the ledger, its priority (null: unknown). */
  record Victim(String uid, int gpus, Integer priority, boolean inGang) {}

  /**
   * Victim order for trimming: 1. pods outside gangs first (evicting one pod of a gang stops the
   * whole gang's work); 2. lower priority first; 3. more GPUs first (fewer victims); 4. UID, so the
   * order is total.
   */
  static final Comparator<Victim> VICTIM_ORDER =
      Comparator.comparing(Victim::inGang)
          .thenComparingInt((Victim v) -> v.priority() == null ? Integer.MIN_VALUE : v.priority())
          .thenComparing(Victim::gpus, Comparator.reverseOrder())
          .thenComparing(Victim::uid);

  private VictimTrim() {}

  /**
   * The victims to evict on {@code node} (null: a node Kairos does not know), or empty when the
   * node should be dropped: the pod can never fit there, a victim's priority is not below the
   * preemptor's, or even all the victims do not free enough GPUs. Victims that hold no GPUs in the
   * ledger are kept as kube-scheduler chose them (they may free CPU or memory, which Kairos does
   * not track).
   *
   * @param free the node's GPUs free for the preemptor now, before any eviction
   */
  static Optional<List<Victim>> trim(
      PodInfo preemptor, KubeNode node, int free, List<Victim> victims) {
    if (node == null) {
      return Optional.empty();
    }
    if (preemptor.gpus() == 0) {
      return Optional.of(victims);
    }
    if (node.gpus() < preemptor.gpus()) {
      return Optional.empty();
    }
    for (Victim v : victims) {
      if (v.priority() != null && v.priority() >= preemptor.priority()) {
        return Optional.empty();
      }
    }
    var kept = new ArrayList<Victim>();
    var gpuVictims = new ArrayList<Victim>();
    for (Victim v : victims) {
      (v.gpus() > 0 ? gpuVictims : kept).add(v);
    }
    gpuVictims.sort(VICTIM_ORDER);
    // 1. Remove victims in order until the preemptor fits.
    var removed = new ArrayList<Victim>();
    for (Victim v : gpuVictims) {
      if (free >= preemptor.gpus()) {
        break;
      }
      free += v.gpus();
      removed.add(v);
    }
    if (free < preemptor.gpus()) {
      return Optional.empty();
    }
    // 2. Put back, in reverse order, every victim the preemptor does not need.
    for (int i = removed.size() - 1; i >= 0; i--) {
      if (free - removed.get(i).gpus() >= preemptor.gpus()) {
        free -= removed.get(i).gpus();
        removed.remove(i);
      }
    }
    kept.addAll(removed);
    return Optional.of(kept);
  }
}
