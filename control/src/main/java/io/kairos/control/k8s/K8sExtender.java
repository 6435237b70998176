package io.kairos.control.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.control.k8s.ExtenderTypes.ExtenderArgs;
import io.kairos.control.k8s.ExtenderTypes.ExtenderBindingArgs;
import io.kairos.control.k8s.ExtenderTypes.ExtenderBindingResult;
import io.kairos.control.k8s.ExtenderTypes.ExtenderFilterResult;
import io.kairos.control.k8s.ExtenderTypes.ExtenderPreemptionArgs;
import io.kairos.control.k8s.ExtenderTypes.ExtenderPreemptionResult;
import io.kairos.control.k8s.ExtenderTypes.HostPriority;
import io.kairos.control.k8s.ExtenderTypes.MetaPod;
import io.kairos.control.k8s.ExtenderTypes.MetaVictims;
import io.kairos.control.k8s.ExtenderTypes.Victims;
import io.kairos.control.k8s.KubeObjects.Node;
import io.kairos.control.k8s.KubeObjects.NodeList;
import io.kairos.control.k8s.KubeObjects.Pod;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kube-scheduler extender: filter, prioritize, bind and preempt GPU pods against Kairos' ledger
 * of what it bound, with gangs placed all-or-nothing by the core's {@code GangPlacer}.
 *
 * <p>Design note. kube-scheduler schedules one pod at a time; a gang needs all its pods placed or
 * none. So the first pod of a gang to reach filter places the whole gang ({@link GangReservations})
 * on the candidate nodes' free GPUs and reserves a slot per pod; that pod and each later one are
 * filtered to their slot's node, prioritized 10 there, and bound there. A gang that does not fit
 * fails every node with a reason naming it (as {@code FailedNodes}, so the pod is retried).
 * Reserved slots count as used for every other pod until they are bound or expire ({@link
 * #RESERVATION_TTL} after the gang last made progress).
 *
 * <p>The ledger ({@link #bound}) is fed by bind and, when an API server is configured, replaced at
 * most every {@link #RESYNC_EVERY} by the pods the API server lists (so pods that ended, or that
 * another scheduler bound, are counted right). Without an API server nothing frees GPUs but a
 * restart: that mode is for trying the extender out and for tests.
 *
 * <p>Thread-safety: every verb runs under this object's lock. kube-scheduler calls one verb at a
 * time per pod, and a filter over 5,000 nodes is a few milliseconds, so one lock is enough. State
 * is soft and leader-local: a new leader starts empty and fills from the API server.
 */
public final class K8sExtender {
  private static final Logger LOG = LoggerFactory.getLogger(K8sExtender.class);

  /** How long a gang's reservation waits for its next pod before its unbound slots are freed. */
  public static final Duration RESERVATION_TTL = Duration.ofMinutes(2);

  /** How often the ledger and the node cache are refreshed from the API server, at most. */
  public static final Duration RESYNC_EVERY = Duration.ofSeconds(15);

  /** A pod bound this recently is kept even if the API server's list does not show it yet. */
  static final Duration BIND_GRACE = Duration.ofSeconds(60);

  private static final int MAX_SEEN = 10_000;

  /** A pod Kairos counts on a node. */
  record Bound(PodInfo pod, String node, Instant at) {}

  private final Optional<KubeApi> api;
  private final InstantSource clock;
  private final TreeMap<String, KubeNode> nodes = new TreeMap<>();
  private final TreeMap<String, Bound> bound = new TreeMap<>();
  private final GangReservations gangs = new GangReservations();
  private final LinkedHashMap<String, PodInfo> seen =
      new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, PodInfo> eldest) {
          return size() > MAX_SEEN;
        }
      };
  private Instant lastSync = Instant.MIN;

  public K8sExtender(Optional<KubeApi> api, InstantSource clock) {
    this.api = api;
    this.clock = clock;
  }

  public boolean hasApiServer() {
    return api.isPresent();
  }

  // ---- filter ----

  public synchronized ExtenderFilterResult filter(ExtenderArgs args) {
    PodInfo pod = GpuDemand.pod(args.pod(), "Pod");
    Candidates candidates = candidates(args);
    refresh();
    seen.put(pod.uid(), pod);
    var failed = new TreeMap<String, String>();
    var unresolvable = new TreeMap<String, String>();
    var pass = new ArrayList<String>();
    if (pod.gpus() == 0) {
      pass.addAll(candidates.names());
    } else if (pod.gangProblem() != null) {
      candidates.names().forEach(n -> unresolvable.put(n, pod.gangProblem()));
    } else if (pod.gang() != null) {
      filterGangPod(pod, candidates, pass, failed, unresolvable);
    } else {
      for (String name : candidates.names()) {
        KubeNode node = candidates.node(name);
        if (node == null) {
          failed.put(name, unknownNode(name));
        } else if (node.gpus() < pod.gpus()) {
          unresolvable.put(
              name,
              "node "
                  + name
                  + " has "
                  + node.gpus()
                  + " allocatable GPUs;"
                  + " pod "
                  + pod.key()
                  + " needs "
                  + pod.gpus());
        } else {
          int free = free(node, null);
          if (free < pod.gpus()) {
            failed.put(
                name,
                "node "
                    + name
                    + " has "
                    + free
                    + " free GPUs (Kairos' ledger);"
                    + " pod "
                    + pod.key()
                    + " needs "
                    + pod.gpus());
          } else {
            pass.add(name);
          }
        }
      }
    }
    return candidates.answer(pass, failed, unresolvable);
  }

  private void filterGangPod(
      PodInfo pod,
      Candidates candidates,
      List<String> pass,
      Map<String, String> failed,
      Map<String, String> unresolvable) {
    var gang = pod.gang();
    GangReservations.Reservation r = gangs.get(gang.key());
    if (r != null && r.gpusPerPod() != pod.gpus()) {
      String why =
          "gang "
              + gang.key()
              + " is reserved for pods of "
              + r.gpusPerPod()
              + " GPUs; pod "
              + pod.key()
              + " asks for "
              + pod.gpus()
              + ": every pod of a gang must ask for the same GPUs";
      candidates.names().forEach(n -> unresolvable.put(n, why));
      return;
    }
    if (r == null) {
      var known = new ArrayList<KubeNode>();
      for (String name : candidates.names()) {
        if (candidates.node(name) != null) {
          known.add(candidates.node(name));
        }
      }
      var free = new TreeMap<String, Integer>();
      known.forEach(n -> free.put(n.name(), free(n, gang.key())));
      r = gangs.place(gang, pod.gpus(), known, free, clock.instant());
      if (r == null) {
        String why =
            "gang "
                + gang.key()
                + " (queue "
                + gang.queue()
                + "): "
                + gang.size()
                + " pods of "
                + pod.gpus()
                + " GPUs do not fit on the free GPUs of the "
                + known.size()
                + " candidate nodes; Kairos places a gang all or nothing";
        candidates.names().forEach(n -> failed.put(n, why));
        return;
      }
      LOG.info("gang {} reserved: {}", gang.key(), r.nodes());
    }
    Optional<String> slot = r.assign(pod.uid(), candidates.names(), clock.instant());
    if (slot.isEmpty()) {
      String why =
          "gang "
              + gang.key()
              + " already has "
              + gang.size()
              + " pods placed ("
              + GpuDemand.GANG_SIZE
              + " is "
              + gang.size()
              + "); pod "
              + pod.key()
              + " is one too many";
      candidates.names().forEach(n -> unresolvable.put(n, why));
      return;
    }
    for (String name : candidates.names()) {
      if (name.equals(slot.get())) {
        pass.add(name);
      } else {
        failed.put(
            name,
            "pod " + pod.key() + " of gang " + gang.key() + " is reserved on node " + slot.get());
      }
    }
  }

  // ---- prioritize ----

  /**
   * Best fit: a node scores higher the fewer GPUs it has left after the pod, {@code 10 * (1 -
   * leftover / allocatable)} rounded down, so small pods fill busy nodes and whole nodes stay free
   * for large ones. Example: a 1-GPU pod scores 10 on a node with 1 free GPU, 1 on an idle 8-GPU
   * node. A gang pod scores 10 on its reserved node and 0 elsewhere; nodes it does not fit score 0.
   */
  public synchronized List<HostPriority> prioritize(ExtenderArgs args) {
    PodInfo pod = GpuDemand.pod(args.pod(), "Pod");
    Candidates candidates = candidates(args);
    refresh();
    seen.put(pod.uid(), pod);
    Optional<String> reserved = gangs.slotOf(pod);
    var scores = new ArrayList<HostPriority>();
    for (String name : candidates.names()) {
      long score;
      KubeNode node = candidates.node(name);
      if (pod.gpus() == 0 || node == null || node.gpus() == 0) {
        score = 0;
      } else if (reserved.isPresent()) {
        score = reserved.get().equals(name) ? ExtenderTypes.MAX_EXTENDER_PRIORITY : 0;
      } else {
        int free = free(node, pod.gang() == null ? null : pod.gang().key());
        int leftover = free - pod.gpus();
        score =
            leftover < 0
                ? 0
                : ExtenderTypes.MAX_EXTENDER_PRIORITY * (node.gpus() - leftover) / node.gpus();
      }
      scores.add(new HostPriority(name, score));
    }
    return scores;
  }

  // ---- bind ----

  public synchronized ExtenderBindingResult bind(ExtenderBindingArgs args) {
    String name = required(args.podName(), "PodName");
    String namespace = required(args.podNamespace(), "PodNamespace");
    String uid = required(args.podUid(), "PodUID");
    String nodeName = required(args.node(), "Node");
    refresh();
    String who = "pod " + namespace + "/" + name;
    Bound already = bound.get(uid);
    if (already != null) {
      return already.node().equals(nodeName)
          ? ok()
          : error(who + " is already bound to node " + already.node());
    }
    PodInfo pod = seen.get(uid);
    if (pod == null) {
      return error(
          "Kairos has not filtered "
              + who
              + " (UID "
              + uid
              + "), so it does not know"
              + " its GPUs; configure filterVerb together with bindVerb");
    }
    KubeNode node = nodes.get(nodeName);
    if (node == null) {
      return error(unknownNode(nodeName));
    }
    if (pod.gang() != null && pod.gpus() > 0) {
      Optional<String> slot = gangs.slotOf(pod);
      if (slot.isEmpty()) {
        return error(
            who
                + " of gang "
                + pod.gang().key()
                + " has no reserved place; it is"
                + " filtered again on the next attempt");
      }
      if (!slot.get().equals(nodeName)) {
        return error(
            who
                + " of gang "
                + pod.gang().key()
                + " is reserved on node "
                + slot.get()
                + ", not "
                + nodeName);
      }
    } else if (pod.gpus() > 0 && free(node, null) < pod.gpus()) {
      return error(
          "node "
              + nodeName
              + " has "
              + free(node, null)
              + " free GPUs;"
              + " "
              + who
              + " needs "
              + pod.gpus());
    }
    if (api.isPresent()) {
      try {
        api.get().bind(namespace, name, uid, nodeName);
      } catch (IOException e) {
        LOG.warn("binding {} to {} failed: {}", who, nodeName, e.getMessage());
        return error("binding " + who + " to node " + nodeName + " failed: " + e.getMessage());
      }
    }
    bound.put(uid, new Bound(pod, nodeName, clock.instant()));
    if (pod.gang() != null) {
      gangs.markBound(pod, clock.instant());
    }
    return ok();
  }

  // ---- preempt ----

  /**
   * Keeps the nodes where Kairos agrees with the victims, trimmed to the fewest GPU pods that free
   * enough GPUs. A node is dropped when Kairos does not know it, when the pod can never fit there,
   * when a victim's priority is not below the preemptor's, or when even all the victims do not free
   * enough GPUs. Victims that hold no GPUs in Kairos' ledger are kept as kube-scheduler chose them
   * (they may free CPU or memory, which Kairos does not track). {@code NumPDBViolations} is passed
   * through: an upper bound once victims are trimmed.
   */
  public synchronized ExtenderPreemptionResult preempt(ExtenderPreemptionArgs args) {
    PodInfo preemptor = GpuDemand.pod(args.pod(), "Pod");
    refresh();
    var candidates = new TreeMap<String, List<Victim>>();
    var pdb = new TreeMap<String, Long>();
    if (args.nodeNameToVictims() != null) {
      for (var e : args.nodeNameToVictims().entrySet()) {
        String field = "NodeNameToVictims." + e.getKey();
        Victims v = e.getValue();
        var list = new ArrayList<Victim>();
        for (int i = 0; v != null && v.pods() != null && i < v.pods().size(); i++) {
          Pod p = v.pods().get(i);
          PodInfo info = GpuDemand.pod(p, field + ".Pods[" + i + "]");
          list.add(
              new Victim(
                  info.uid(),
                  ledgerGpus(info.uid(), e.getKey()),
                  info.priority(),
                  info.gang() != null));
        }
        candidates.put(e.getKey(), list);
        pdb.put(e.getKey(), v == null ? 0 : v.numPdbViolations());
      }
    }
    if (args.nodeNameToMetaVictims() != null) {
      for (var e : args.nodeNameToMetaVictims().entrySet()) {
        String field = "NodeNameToMetaVictims." + e.getKey();
        MetaVictims v = e.getValue();
        var list = new ArrayList<Victim>();
        for (int i = 0; v != null && v.pods() != null && i < v.pods().size(); i++) {
          MetaPod p = v.pods().get(i);
          String uid = required(p == null ? null : p.uid(), field + ".Pods[" + i + "].UID");
          Bound b = bound.get(uid);
          list.add(
              b == null
                  ? new Victim(uid, 0, null, false)
                  : new Victim(
                      uid,
                      ledgerGpus(uid, e.getKey()),
                      b.pod().priority(),
                      b.pod().gang() != null));
        }
        candidates.put(e.getKey(), list);
        pdb.put(e.getKey(), v == null ? 0 : v.numPdbViolations());
      }
    }
    var result = new TreeMap<String, MetaVictims>();
    for (var e : candidates.entrySet()) {
      trim(preemptor, e.getKey(), e.getValue())
          .ifPresent(
              victims ->
                  result.put(
                      e.getKey(),
                      new MetaVictims(
                          victims.stream().map(v -> new MetaPod(v.uid())).toList(),
                          pdb.get(e.getKey()))));
    }
    return new ExtenderPreemptionResult(result);
  }

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

  private Optional<List<Victim>> trim(PodInfo preemptor, String nodeName, List<Victim> victims) {
    KubeNode node = nodes.get(nodeName);
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
    int free = free(node, preemptor.gang() == null ? null : preemptor.gang().key());
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

  private int ledgerGpus(String uid, String node) {
    Bound b = bound.get(uid);
    return b != null && b.node().equals(node) ? b.pod().gpus() : 0;
  }

  // ---- state ----

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

  /** The candidate nodes of a filter or prioritize call, parsed; nodes sent in full are cached. */
  private Candidates candidates(ExtenderArgs args) {
    if (args.nodes() != null) {
      var items = args.nodes().items() == null ? List.<JsonNode>of() : args.nodes().items();
      var parsed = new LinkedHashMap<String, KubeNode>();
      for (int i = 0; i < items.size(); i++) {
        String field = "Nodes.items[" + i + "]";
        Node n;
        try {
          n = ExtenderJson.MAPPER.treeToValue(items.get(i), Node.class);
        } catch (IOException | IllegalArgumentException e) {
          throw new ExtenderInputException(
              field + pathOf(e),
              "not a v1.Node: " + firstLine(e.getMessage()),
              "send v1.Node objects in Nodes.items");
        }
        KubeNode node = GpuDemand.node(n, items.get(i), field);
        parsed.put(node.name(), node);
      }
      nodes.putAll(parsed);
      return new Candidates(parsed, true);
    }
    if (args.nodeNames() != null) {
      var byName = new LinkedHashMap<String, KubeNode>();
      for (int i = 0; i < args.nodeNames().size(); i++) {
        String name = required(args.nodeNames().get(i), "NodeNames[" + i + "]");
        byName.put(name, nodes.get(name));
      }
      if (byName.containsValue(null) && api.isPresent()) {
        lastSync = Instant.MIN; // a node Kairos has not seen: refresh now rather than later
        refresh();
        byName.replaceAll((name, n) -> nodes.get(name));
      }
      return new Candidates(byName, false);
    }
    throw new ExtenderInputException(
        "Nodes", "either Nodes or NodeNames is required", "send the candidate nodes");
  }

  /** Candidate nodes by name, in the order sent; a null value is a node Kairos does not know. */
  private record Candidates(LinkedHashMap<String, KubeNode> byName, boolean full) {
    List<String> names() {
      return List.copyOf(byName.keySet());
    }

    KubeNode node(String name) {
      return byName.get(name);
    }

    ExtenderFilterResult answer(
        List<String> pass, Map<String, String> failed, Map<String, String> unresolvable) {
      if (full) {
        var items = new ArrayList<JsonNode>(pass.size());
        pass.forEach(n -> items.add(byName.get(n).raw()));
        return new ExtenderFilterResult(new NodeList(items), null, failed, unresolvable, "");
      }
      return new ExtenderFilterResult(null, List.copyOf(pass), failed, unresolvable, "");
    }
  }

  /**
   * Expires stale gang reservations; refreshes nodes and the ledger from the API server when due.
   */
  private void refresh() {
    Instant now = clock.instant();
    gangs.expire(now.minus(RESERVATION_TTL));
    if (api.isEmpty() || (lastSync != Instant.MIN && now.isBefore(lastSync.plus(RESYNC_EVERY)))) {
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

  private static String unknownNode(String name) {
    return "Kairos does not know node "
        + name
        + " yet (nodeCacheCapable: Kairos learns nodes"
        + " from the API server, KAIROS_K8S_API, or from filter calls that send whole nodes)";
  }

  private static String required(String value, String field) {
    if (value == null || value.isEmpty()) {
      throw new ExtenderInputException(field, field + " is required", null);
    }
    return value;
  }

  /** ".status.allocatable" for an error inside a node object, from Jackson's path. */
  private static String pathOf(Exception e) {
    var sb = new StringBuilder();
    if (e instanceof com.fasterxml.jackson.databind.JsonMappingException m) {
      for (var ref : m.getPath()) {
        if (ref.getFieldName() != null) {
          sb.append('.').append(ref.getFieldName());
        } else if (ref.getIndex() >= 0) {
          sb.append('[').append(ref.getIndex()).append(']');
        }
      }
    }
    return sb.toString();
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "";
    }
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }

  private static ExtenderBindingResult ok() {
    return new ExtenderBindingResult("");
  }

  private static ExtenderBindingResult error(String message) {
    return new ExtenderBindingResult(message);
  }
}
