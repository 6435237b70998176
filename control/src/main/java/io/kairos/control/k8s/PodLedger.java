package io.kairos.control.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.control.k8s.KubeObjects.Node;
import io.kairos.control.k8s.KubeObjects.Pod;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the extender counts on each node: the nodes it knows (sent whole by filter calls, or listed
 * by the API server), the GPU pods bound to them, and the gangs' reserved slots ({@link
 * GangReservations}). A node's free GPUs are its allocatable ones less both.
 *
 * <p>The bound pods are fed by bind and, when an API server is configured, replaced at most every
 * {@link K8sExtender#RESYNC_EVERY} by the pods the API server lists (so pods that ended, or that
 * another scheduler bound, are counted right); a pod bound within {@link #BIND_GRACE} is kept even
 * if the list does not show it yet. Without an API server nothing frees GPUs but a restart.
 *
 * <p>Not thread-safe: owned by {@link K8sExtender}, under its lock.
 */
final class PodLedger {
  private static final Logger LOG = LoggerFactory.getLogger(K8sExtender.class);

  /** A pod bound this recently is kept even if the API server's list does not show it yet. */
  static final Duration BIND_GRACE = Duration.ofSeconds(60);

  /** A pod Kairos counts on a node. */
  record Bound(PodInfo pod, String node, Instant at) {}

  private final Optional<KubeApi> api;
  private final InstantSource clock;
  private final TreeMap<String, KubeNode> nodes = new TreeMap<>();
  private final TreeMap<String, Bound> bound = new TreeMap<>();
  private final GangReservations gangs = new GangReservations();
  private Instant lastSync = Instant.MIN;

  PodLedger(Optional<KubeApi> api, InstantSource clock) {
    this.api = api;
    this.clock = clock;
  }

  GangReservations gangs() {
    return gangs;
  }

  /** A node Kairos knows, or null. */
  KubeNode node(String name) {
    return nodes.get(name);
  }

  /** Nodes a filter call sent whole: the freshest view of them. */
  void learn(Map<String, KubeNode> sent) {
    nodes.putAll(sent);
  }

  /** The pod bound under {@code uid}, or null. */
  Bound bound(String uid) {
    return bound.get(uid);
  }

  /** Counts {@code pod} on {@code node} from {@code at} on. */
  void bind(PodInfo pod, String node, Instant at) {
    bound.put(pod.uid(), new Bound(pod, node, at));
  }

  /** GPUs the pod {@code uid} holds on {@code node} in the ledger: 0 unless bound there. */
  int gpusOf(String uid, String node) {
    Bound b = bound.get(uid);
    return b != null && b.node().equals(node) ? b.pod().gpus() : 0;
  }

  /**
   * GPUs of {@code node} free for a pod of gang {@code ownGang} (null for none): allocatable, less
   * bound pods, less other gangs' reserved but unbound slots.
   */
  int free(KubeNode node, String ownGang) {
    int used = 0;
    for (Bound b : bound.values()) {
      if (b.node().equals(node.name())) {
        used += b.pod().gpus();
      }
    }
    used += gangs.heldOn(node.name(), ownGang);
    return Math.max(0, node.gpus() - used);
  }

  /** Refreshes from the API server now, if there is one, rather than when due. */
  void refreshNow() {
    if (api.isPresent()) {
      lastSync = Instant.MIN;
      refresh();
    }
  }

  /**
   * Expires stale gang reservations; refreshes nodes and the ledger from the API server when due.
   */
  void refresh() {
    Instant now = clock.instant();
    gangs.expire(now.minus(K8sExtender.RESERVATION_TTL));
    if (api.isEmpty()
        || (lastSync != Instant.MIN && now.isBefore(lastSync.plus(K8sExtender.RESYNC_EVERY)))) {
      return;
    }
    lastSync = now;
    try {
      for (JsonNode raw : api.get().listNodes()) {
        KubeNode node =
            GpuDemand.node(ExtenderJson.MAPPER.treeToValue(raw, Node.class), raw, "node");
        nodes.put(node.name(), node);
      }
      var fresh = new TreeMap<String, Bound>();
      var pods = api.get().listBoundPods().items();
      for (int i = 0; pods != null && i < pods.size(); i++) {
        Pod p = pods.get(i);
        String phase = p.status() == null ? null : p.status().phase();
        if (p.spec() == null
            || p.spec().nodeName() == null
            || p.spec().nodeName().isEmpty()
            || "Succeeded".equals(phase)
            || "Failed".equals(phase)) {
          continue;
        }
        PodInfo info = GpuDemand.pod(p, "items[" + i + "]");
        if (info.gpus() > 0) {
          fresh.put(info.uid(), new Bound(info, p.spec().nodeName(), Instant.MIN));
        }
      }
      for (Bound b : bound.values()) {
        if (!fresh.containsKey(b.pod().uid()) && b.at().isAfter(now.minus(BIND_GRACE))) {
          fresh.put(b.pod().uid(), b);
        }
      }
      bound.clear();
      bound.putAll(fresh);
    } catch (IOException | RuntimeException e) {
      LOG.warn("could not refresh nodes and pods from the API server: {}", e.toString());
    }
  }
}
