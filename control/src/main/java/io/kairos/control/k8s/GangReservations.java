package io.kairos.control.k8s;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.NodeSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.model.TaskShape;
import io.kairos.core.model.TopologyLevel;
import io.kairos.core.sched.place.Capacity;
import io.kairos.core.sched.place.GangPlacer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Gangs placed ahead of their pods: one slot (a node) per pod, chosen all at once by the core's
 * {@link GangPlacer} over a {@link Cluster} built from the candidate Kubernetes nodes, each pod of
 * the gang taking one task of {@code gpusPerPod} GPUs. The placer prefers one node, then one rack,
 * block, zone, with best fit inside: the same placement Kairos gives its own jobs.
 *
 * <p>Not thread-safe: kept in the {@link PodLedger}, under {@link K8sExtender}'s lock.
 */
final class GangReservations {
  /** A pod's place: a node, the pod that took it (null while free), whether it is bound. */
  static final class Slot {
    final String node;
    String podUid;
    boolean bound;

    Slot(String node) {
      this.node = node;
    }
  }

  /** A placed gang and the time it last made progress (placed, a pod assigned, a pod bound). */
  static final class Reservation {
    private final PodInfo.Gang gang;
    private final int gpusPerPod;
    private final List<Slot> slots;
    private Instant touched;

    Reservation(PodInfo.Gang gang, int gpusPerPod, List<Slot> slots, Instant at) {
      this.gang = gang;
      this.gpusPerPod = gpusPerPod;
      this.slots = slots;
      this.touched = at;
    }

    int gpusPerPod() {
      return gpusPerPod;
    }

    List<String> nodes() {
      return slots.stream().map(s -> s.node).toList();
    }

    /**
     * The slot of {@code uid}, or a free one for it (preferring a node among {@code candidates} so
     * a pod whose other filters rule a node out can take another slot); empty when every slot has a
     * pod. Idempotent: the same pod gets the same slot.
     */
    Optional<String> assign(String uid, Collection<String> candidates, Instant at) {
      for (Slot s : slots) {
        if (uid.equals(s.podUid)) {
          return Optional.of(s.node);
        }
      }
      Slot chosen = null;
      for (Slot s : slots) {
        if (s.podUid == null
            && (chosen == null
                || (!candidates.contains(chosen.node) && candidates.contains(s.node)))) {
          chosen = s;
        }
      }
      if (chosen == null) {
        return Optional.empty();
      }
      chosen.podUid = uid;
      touched = at;
      return Optional.of(chosen.node);
    }
  }

  private final TreeMap<String, Reservation> byGang = new TreeMap<>();

  Reservation get(String gangKey) {
    return byGang.get(gangKey);
  }

  /**
   * Places the whole gang on {@code nodes} with {@code free} GPUs each, and reserves it; null when
   * it does not fit (nothing is reserved then).
   */
  Reservation place(
      PodInfo.Gang gang,
      int gpusPerPod,
      List<KubeNode> nodes,
      Map<String, Integer> free,
      Instant at) {
    if (nodes.isEmpty() || gpusPerPod > NodeSpec.MAX_GPUS) {
      return null;
    }
    var specs = new ArrayList<NodeSpec>(nodes.size());
    for (KubeNode n : nodes) {
      specs.add(
          new NodeSpec(
              n.name(),
              n.gpuModel(),
              n.gpus(),
              0,
              1 << 20,
              Long.MAX_VALUE / 4,
              Map.of(),
              n.zone(),
              n.block(),
              n.rack(),
              n.gpus() == 0 ? 0 : n.nvlinkDomainSize()));
    }
    Cluster cluster = Cluster.of(specs);
    int[] freeByIndex = new int[cluster.nodeCount()];
    for (int i = 0; i < freeByIndex.length; i++) {
      freeByIndex[i] = free.getOrDefault(cluster.node(i).name(), 0);
    }
    var spec = new GangSpec(gang.size(), TaskShape.gpus(gpusPerPod), false);
    Placement placement =
        new GangPlacer(cluster).place(spec, -1, capacity(cluster, freeByIndex), false);
    if (placement == null) {
      return null;
    }
    var slots = new ArrayList<Slot>();
    for (int i = 0; i < placement.nodeCount(); i++) {
      for (int t = 0; t < placement.tasksOn(i); t++) {
        slots.add(new Slot(cluster.node(placement.node(i)).name()));
      }
    }
    var r = new Reservation(gang, gpusPerPod, slots, at);
    byGang.put(gang.key(), r);
    return r;
  }

  /** The reserved node of a gang pod that holds a slot. */
  Optional<String> slotOf(PodInfo pod) {
    if (pod.gang() == null) {
      return Optional.empty();
    }
    Reservation r = byGang.get(pod.gang().key());
    if (r == null) {
      return Optional.empty();
    }
    for (Slot s : r.slots) {
      if (pod.uid().equals(s.podUid)) {
        return Optional.of(s.node);
      }
    }
    return Optional.empty();
  }

  /** Marks the pod's slot bound; a gang whose every slot is bound lives on in the ledger only. */
  void markBound(PodInfo pod, Instant at) {
    Reservation r = byGang.get(pod.gang().key());
    if (r == null) {
      return;
    }
    boolean all = true;
    for (Slot s : r.slots) {
      if (pod.uid().equals(s.podUid)) {
        s.bound = true;
      }
      all &= s.bound;
    }
    r.touched = at;
    if (all) {
      byGang.remove(pod.gang().key());
    }
  }

  /** GPUs held on {@code node} by unbound slots of gangs other than {@code exceptGang}. */
  int heldOn(String node, String exceptGang) {
    int held = 0;
    for (var e : byGang.entrySet()) {
      if (e.getKey().equals(exceptGang)) {
        continue;
      }
      for (Slot s : e.getValue().slots) {
        if (!s.bound && s.node.equals(node)) {
          held += e.getValue().gpusPerPod;
        }
      }
    }
    return held;
  }

  /**
   * Drops reservations that made no progress since {@code before}; bound pods stay in the ledger.
   */
  void expire(Instant before) {
    byGang.values().removeIf(r -> r.touched.isBefore(before));
  }

  private static Capacity capacity(Cluster cluster, int[] free) {
    return new Capacity() {
      @Override
      public int usableGpus(int node) {
        return free[node];
      }

      @Override
      public int freeCpus(int node) {
        return Integer.MAX_VALUE;
      }

      @Override
      public long freeMemoryBytes(int node) {
        return Long.MAX_VALUE;
      }

      @Override
      public long domainUpperBound(TopologyLevel level, int domain) {
        long sum = 0;
        for (int i = cluster.domainStart(level, domain);
            i < cluster.domainEnd(level, domain);
            i++) {
          sum += free[i];
        }
        return sum;
      }

      @Override
      public int nextNodeWithFree(int k, int from) {
        throw new UnsupportedOperationException("no best-fit buckets");
      }

      @Override
      public boolean hasBuckets() {
        return false;
      }
    };
  }
}
