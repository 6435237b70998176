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
import io.kairos.control.k8s.KubeObjects.Pod;
import io.kairos.control.k8s.VictimTrim.Victim;
import java.io.IOException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
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
 * <p>The ledger ({@link PodLedger}) is fed by bind and, when an API server is configured, replaced
 * at most every {@link #RESYNC_EVERY} by the pods the API server lists (so pods that ended, or that
 * another scheduler bound, are counted right). Without an API server nothing frees GPUs but a
 * restart: that mode is for trying the extender out and for tests. Preemption trims
 * kube-scheduler's victims per node ({@link VictimTrim}).
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

  private static final int MAX_SEEN = 10_000;

  private final Optional<KubeApi> api;
  private final InstantSource clock;
  private final PodLedger ledger;
  private final GangReservations gangs;
  private final LinkedHashMap<String, PodInfo> seen =
      new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, PodInfo> eldest) {
          return size() > MAX_SEEN;
        }
      };

  public K8sExtender(Optional<KubeApi> api, InstantSource clock) {
    this.api = api;
    this.clock = clock;
    this.ledger = new PodLedger(api, clock);
    this.gangs = ledger.gangs();
  }

  public boolean hasApiServer() {
    return api.isPresent();
  }

  // ---- filter ----

  public synchronized ExtenderFilterResult filter(ExtenderArgs args) {
    PodInfo pod = GpuDemand.pod(args.pod(), "Pod");
    Candidates candidates = candidates(args);
    ledger.refresh();
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
          int free = ledger.free(node, null);
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
      known.forEach(n -> free.put(n.name(), ledger.free(n, gang.key())));
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
    ledger.refresh();
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
        int free = ledger.free(node, pod.gang() == null ? null : pod.gang().key());
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
    ledger.refresh();
    String who = "pod " + namespace + "/" + name;
    PodLedger.Bound already = ledger.bound(uid);
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
    KubeNode node = ledger.node(nodeName);
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
    } else if (pod.gpus() > 0 && ledger.free(node, null) < pod.gpus()) {
      return error(
          "node "
              + nodeName
              + " has "
              + ledger.free(node, null)
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
    ledger.bind(pod, nodeName, clock.instant());
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
    ledger.refresh();
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
                  ledger.gpusOf(info.uid(), e.getKey()),
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
          PodLedger.Bound b = ledger.bound(uid);
          list.add(
              b == null
                  ? new Victim(uid, 0, null, false)
                  : new Victim(
                      uid,
                      ledger.gpusOf(uid, e.getKey()),
                      b.pod().priority(),
                      b.pod().gang() != null));
        }
        candidates.put(e.getKey(), list);
        pdb.put(e.getKey(), v == null ? 0 : v.numPdbViolations());
      }
    }
    var result = new TreeMap<String, MetaVictims>();
    for (var e : candidates.entrySet()) {
      KubeNode node = ledger.node(e.getKey());
      int free =
          node == null
              ? 0
              : ledger.free(node, preemptor.gang() == null ? null : preemptor.gang().key());
      VictimTrim.trim(preemptor, node, free, e.getValue())
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

  // ---- candidates and messages ----

  /** The candidate nodes of a filter or prioritize call, parsed; nodes sent in full are cached. */
  private Candidates candidates(ExtenderArgs args) {
    if (args.nodes() != null) {
      var items = args.nodes().items() == null ? List.<JsonNode>of() : args.nodes().items();
      Candidates sent = Candidates.ofNodes(items);
      ledger.learn(sent.byName());
      return sent;
    }
    if (args.nodeNames() != null) {
      var byName = new LinkedHashMap<String, KubeNode>();
      for (int i = 0; i < args.nodeNames().size(); i++) {
        String name = required(args.nodeNames().get(i), "NodeNames[" + i + "]");
        byName.put(name, ledger.node(name));
      }
      if (byName.containsValue(null)) {
        ledger.refreshNow(); // a node Kairos has not seen: refresh now rather than later
        byName.replaceAll((name, n) -> ledger.node(name));
      }
      return new Candidates(byName, false);
    }
    throw new ExtenderInputException(
        "Nodes", "either Nodes or NodeNames is required", "send the candidate nodes");
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

  private static ExtenderBindingResult ok() {
    return new ExtenderBindingResult("");
  }

  private static ExtenderBindingResult error(String message) {
    return new ExtenderBindingResult(message);
  }
}
