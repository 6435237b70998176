package io.kairos.control.state;

import io.kairos.core.model.JobId;
import io.kairos.core.model.Placement;
import io.kairos.protocol.JobState;
import io.kairos.protocol.NodeState;
import io.kairos.protocol.TaskPlacement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The controller state's invariants (DESIGN.md "Invariants" 1 and 6, plus the state's own
 * bookkeeping), checked over a whole {@link ControlState}. Returns what is violated, in words, so
 * that a property can print it with its seed.
 */
final class StateInvariants {
  private StateInvariants() {}

  static List<String> violations(ControlState s) {
    if (s.storeIsStale()) {
      // Registrations since the store was built: the next command rebuilds it from the records,
      // as a restored snapshot does. Check that store (the records are the same).
      return violations(ControlState.of(s.image()));
    }
    var out = new ArrayList<String>();
    // Ids: unique (a TreeMap) and increasing, all below nextJobId.
    long previous = 0;
    for (JobRecord j : s.jobs()) {
      if (j.id <= previous) {
        out.add("job ids not increasing: " + j.id + " after " + previous);
      }
      previous = j.id;
      if (j.id >= s.nextJobId()) {
        out.add("job " + j.id + " is not below nextJobId " + s.nextJobId());
      }
    }
    // Active = PENDING + RUNNING, exactly.
    var activeIds = new TreeMap<Long, JobState>();
    for (JobRecord j : s.activeJobs()) {
      activeIds.put(j.id, j.state);
    }
    var expectedActive = new TreeMap<Long, JobState>();
    for (JobRecord j : s.jobs()) {
      if (j.state == JobState.PENDING || j.state == JobState.RUNNING) {
        expectedActive.put(j.id, j.state);
      }
    }
    if (!activeIds.equals(expectedActive)) {
      out.add("active jobs " + activeIds + " are not the PENDING+RUNNING jobs " + expectedActive);
    }
    // No (node, gpu) used twice among the jobs holding GPUs (running, or ended with tasks still
    // stopping); each within its node's GPUs.
    Map<String, Long> used = new HashMap<>();
    for (JobRecord j : s.jobs()) {
      if (j.releasing && (j.state == JobState.PENDING || j.state == JobState.RUNNING)) {
        out.add("job " + j.id + " is releasing but " + j.state);
      }
      if (!j.holdsGpus()) {
        if (j.state == JobState.PENDING && !j.placement.isEmpty()) {
          out.add("pending job " + j.id + " keeps a placement " + j.placement);
        }
        continue;
      }
      // An elastic job holds its minimum to its maximum live tasks (ranks that left add to its
      // placement); any other job exactly its gang.
      int live = ElasticResizes.liveTasks(j).size();
      boolean sized =
          j.request.isElastic()
              ? live >= j.request.tasks() && live <= j.request.maxTasks()
              : j.placement.size() == j.request.tasks();
      if (!sized || j.taskExits.size() != j.placement.size()) {
        out.add(
            "running job "
                + j.id
                + " has "
                + j.placement.size()
                + " tasks placed, "
                + j.taskExits.size()
                + " exits tracked, wants "
                + j.request.tasks());
      }
      Set<String> nodesOfJob = new HashSet<>();
      for (int t = 0; t < j.placement.size(); t++) {
        TaskPlacement p = j.placement.get(t);
        if (p.task() != t) {
          out.add("running job " + j.id + " has task rank " + p.task() + " at position " + t);
        }
        if (!nodesOfJob.add(p.node())) {
          out.add("running job " + j.id + " runs two tasks on " + p.node() + " (invariant 6)");
        }
        var node = s.node(p.node());
        if (node.isEmpty()) {
          out.add("running job " + j.id + " runs on unknown node " + p.node());
          continue;
        }
        int count = node.get().registration.gpus().size();
        if (j.releasedTask(t)) {
          continue; // stopped and let its GPUs go: the next job may use them
        }
        for (int g : p.gpus()) {
          if (g < 0 || g >= count) {
            out.add("job " + j.id + " holds GPU " + g + " of " + p.node() + ", which has " + count);
            continue;
          }
          long bit = 1L << g;
          long before = used.getOrDefault(p.node(), 0L);
          if ((before & bit) != 0) {
            out.add("GPU " + p.node() + "/" + g + " is held by two running jobs (invariant 1)");
          }
          used.put(p.node(), before | bit);
        }
        if (p.gpus().size() != j.request.gpusPerTask()) {
          out.add(
              "job "
                  + j.id
                  + " task "
                  + t
                  + " holds "
                  + p.gpus().size()
                  + " GPUs, wants "
                  + j.request.gpusPerTask());
        }
      }
    }
    // A requeue in progress: the job still runs (holding its GPUs) and waits for a task to stop.
    for (JobRecord j : s.jobs()) {
      if (j.requeueing
          && (j.state != JobState.RUNNING || j.releasing || !j.taskExits.contains(null))) {
        out.add(
            "job "
                + j.id
                + " is requeueing but "
                + j.state
                + (j.releasing ? ", releasing" : "")
                + ", task exits "
                + j.taskExits);
      }
      if (j.avoidNodes.stream().anyMatch(n -> s.node(n).isEmpty())) {
        out.add("job " + j.id + " avoids unknown nodes " + j.avoidNodes);
      }
    }
    // No task counts as running on a node that is DOWN: it was lost with the node.
    for (var n : s.nodes()) {
      if (n.state != NodeState.DOWN) {
        continue;
      }
      for (JobRecord j : s.jobsHoldingGpusOn(n.name)) {
        for (TaskPlacement t : j.placement) {
          if (t.node().equals(n.name) && j.taskExits.get(t.task()) == null) {
            out.add("job " + j.id + " task " + t.task() + " still runs on DOWN node " + n.name);
          }
        }
      }
    }
    limitCounters(s, out);
    // The store agrees with the records.
    var store = s.store();
    if (store == null) {
      for (JobRecord j : s.activeJobs()) {
        if (j.state == JobState.RUNNING) {
          out.add("job " + j.id + " runs but the store is empty");
        }
      }
      return out;
    }
    var cluster = store.cluster();
    for (var n : s.nodes()) {
      var index = cluster.indexOf(n.name);
      if (n.registration != null && index.isEmpty()) {
        out.add("registered node " + n.name + " is not in the store");
      } else if (index.isPresent() && store.isCordoned(index.get()) != (n.state != NodeState.UP)) {
        out.add(
            "node " + n.name + " is " + n.state + " but cordoned=" + store.isCordoned(index.get()));
      }
    }
    liveTasksHoldTheirGpus(s, out);
    gpusOutOfService(s, out);
    for (int i = 0; i < cluster.nodeCount(); i++) {
      String name = cluster.node(i).name();
      long full = cluster.gpuCount(i) == 64 ? -1L : (1L << cluster.gpuCount(i)) - 1;
      long expectedFree = full & ~used.getOrDefault(name, 0L);
      if (store.freeMask(i) != expectedFree) {
        out.add(
            "store free mask of "
                + name
                + " is "
                + Long.toBinaryString(store.freeMask(i))
                + ", records say "
                + Long.toBinaryString(expectedFree));
      }
    }
    // The per-node index of jobs holding GPUs matches their placements.
    for (var n : s.nodes()) {
      var expected = new java.util.ArrayList<Long>();
      for (JobRecord j : s.jobsHoldingGpus()) {
        if (j.runsOn(n.name)) {
          expected.add(j.id);
        }
      }
      var indexed = s.jobsHoldingGpusOn(n.name).stream().map(j -> j.id).toList();
      if (!indexed.equals(expected)) {
        out.add("node " + n.name + " indexes jobs " + indexed + ", placements say " + expected);
      }
    }
    int running = 0;
    int pendingInStore = 0;
    for (JobRecord j : s.jobsHoldingGpus()) {
      if (j.state != JobState.RUNNING) {
        running++;
        if (store.running(JobId.of(j.id)).isEmpty()) {
          out.add("releasing job " + j.id + " does not hold its GPUs in the store");
        }
      }
    }
    for (JobRecord j : s.activeJobs()) {
      if (j.state == JobState.RUNNING) {
        running++;
        var r = store.running(JobId.of(j.id));
        if (r.isEmpty()) {
          out.add("running job " + j.id + " is not running in the store");
        } else if (!r.get().placement().equals(placement(s, held(j)))) {
          out.add(
              "job "
                  + j.id
                  + " placement "
                  + j.placement
                  + " differs from the store's "
                  + r.get().placement());
        }
      } else {
        var pendingJob = store.pending(JobId.of(j.id));
        boolean inStore = pendingJob.isPresent();
        if (inStore) {
          pendingInStore++;
          long eligibleSec = Math.floorDiv(j.eligibleMs + 999, 1000);
          if (eligibleSec > pendingJob.get().submitSec()
              && pendingJob.get().eligibleSec() != eligibleSec) {
            out.add(
                "pending job "
                    + j.id
                    + " is eligible at "
                    + j.eligibleMs
                    + " ms, the store says "
                    + pendingJob.get().eligibleSec()
                    + " s");
          }
          var excluded = new java.util.TreeSet<>(j.request.excludeNodes());
          excluded.addAll(j.avoidNodes);
          if (!pendingJob.get().spec().excludedNodes().equals(excluded)) {
            out.add(
                "pending job "
                    + j.id
                    + " excludes "
                    + excluded
                    + ", the store says "
                    + pendingJob.get().spec().excludedNodes());
          }
        }
        boolean waiting = s.isWaitingOnDependency(j.id);
        boolean held = s.isHeldByArrayLimit(j.id);
        int places =
            (inStore ? 1 : 0)
                + (s.isUnplaceable(j.id) ? 1 : 0)
                + (waiting ? 1 : 0)
                + (held ? 1 : 0);
        if (places != 1) {
          out.add(
              "pending job "
                  + j.id
                  + " is in "
                  + places
                  + " of: the store ("
                  + inStore
                  + "), unplaceable, waiting on a dependency ("
                  + waiting
                  + "), held by its array's"
                  + " limit ("
                  + held
                  + ")");
        }
      }
    }
    out.addAll(dependencyViolations(s));
    out.addAll(arrayLimitViolations(s));
    if (store.runningCount() != running) {
      out.add("store runs " + store.runningCount() + " jobs, records " + running);
    }
    if (store.pendingCount() != pendingInStore) {
      out.add("store holds " + store.pendingCount() + " pending jobs, records " + pendingInStore);
    }
    return out;
  }

  /**
   * A job waiting on a dependency is one whose dependency does not hold yet (and can still); every
   * other pending job's dependency holds. Judged here from the records alone, without the state's
   * cursors.
   */
  static List<String> dependencyViolations(ControlState s) {
    var out = new ArrayList<String>();
    for (JobRecord j : s.activeJobs()) {
      if (j.state != JobState.PENDING) {
        continue;
      }
      boolean waiting = s.isWaitingOnDependency(j.id);
      if (!waiting && j.request.dependency() != null && namesForgotten(s, j.request.dependency())) {
        continue; // its dependency held, and some job it named has ended and been forgotten since
      }
      String verdict =
          j.request.dependency() == null ? "HOLDS" : verdict(s, j.id, j.request.dependency());
      if (verdict.equals("NEVER")) {
        out.add(
            "pending job "
                + j.id
                + " has a dependency that can never hold: "
                + j.request.dependency()
                + " (it should have been cancelled)");
      } else if (waiting != verdict.equals("WAITS")) {
        out.add(
            "pending job "
                + j.id
                + " with dependency "
                + j.request.dependency()
                + " ("
                + verdict
                + ") is "
                + (waiting ? "" : "not ")
                + "waiting");
      }
    }
    return out;
  }

  /** Whether a job {@code d} names (or an element of an array it names) is no longer kept. */
  private static boolean namesForgotten(ControlState s, Dependency d) {
    for (long named : d.jobs()) {
      if (named >= s.nextJobId()) {
        continue;
      }
      var r = s.job(named).orElse(null);
      if (r == null) {
        return true;
      }
      if (r.array != null && r.array.arrayJobId() == named) {
        for (long id = named; id <= r.array.lastJobId(); id++) {
          if (s.job(id).isEmpty()) {
            return true;
          }
        }
      }
    }
    return false;
  }

  private static String verdict(ControlState s, long self, Dependency d) {
    int holds = 0;
    int never = 0;
    for (Dependency.Clause c : d.clauses()) {
      boolean allHold = true;
      boolean anyNever = false;
      for (long named : c.jobs()) {
        var r = s.job(named).orElse(null);
        long last =
            r != null && r.array != null && r.array.arrayJobId() == named
                ? r.array.lastJobId()
                : named;
        for (long id = named; id <= last; id++) {
          var dep = id >= self ? null : s.job(id).orElse(null);
          var v =
              dep == null
                  ? DependencyWaits.Verdict.NEVER
                  : DependencyWaits.status(c.kind(), dep.state, dep.attempt);
          allHold &= v == DependencyWaits.Verdict.HOLDS;
          anyNever |= v == DependencyWaits.Verdict.NEVER;
        }
      }
      holds += allHold ? 1 : 0;
      never += anyNever ? 1 : 0;
    }
    int n = d.clauses().size();
    if (d.any()) {
      return holds > 0 ? "HOLDS" : never == n ? "NEVER" : "WAITS";
    }
    return never > 0 ? "NEVER" : holds == n ? "HOLDS" : "WAITS";
  }

  /**
   * An array with a limit has at most that many elements running or queued; elements are held back
   * only while it has that many, and only elements above every admitted one's id.
   */
  static List<String> arrayLimitViolations(ControlState s) {
    var out = new ArrayList<String>();
    var admitted = new TreeMap<Long, List<Long>>();
    var held = new TreeMap<Long, List<Long>>();
    for (JobRecord j : s.activeJobs()) {
      if (j.array == null || j.array.limit() == 0 || s.isWaitingOnDependency(j.id)) {
        continue;
      }
      (s.isHeldByArrayLimit(j.id) ? held : admitted)
          .computeIfAbsent(j.array.arrayJobId(), k -> new ArrayList<>())
          .add(j.id);
    }
    for (var e : admitted.entrySet()) {
      // Any element's (the array's first may have ended and been forgotten).
      int limit = s.job(e.getValue().getFirst()).orElseThrow().array.limit();
      if (e.getValue().size() > limit) {
        out.add(
            "array "
                + e.getKey()
                + " runs or queues "
                + e.getValue()
                + ", over its limit "
                + limit);
      }
      if (s.arrayAdmitted(e.getKey()) != e.getValue().size()) {
        out.add(
            "array "
                + e.getKey()
                + " counts "
                + s.arrayAdmitted(e.getKey())
                + " admitted elements, records say "
                + e.getValue());
      }
    }
    for (var e : held.entrySet()) {
      var in = admitted.getOrDefault(e.getKey(), List.of());
      // Any element's (the array's first may have ended and been forgotten).
      int limit = s.job(e.getValue().getFirst()).orElseThrow().array.limit();
      if (in.size() < limit) {
        out.add(
            "array "
                + e.getKey()
                + " holds back "
                + e.getValue()
                + " with only "
                + in
                + " admitted (limit "
                + limit
                + ")");
      }
      if (!in.isEmpty() && in.getLast() > e.getValue().getFirst()) {
        out.add(
            "array " + e.getKey() + " admitted " + in + " but holds back lower " + e.getValue());
      }
    }
    return out;
  }

  /**
   * Invariant 6: a GPU is never held by two live tasks. A live task is one that has not confirmed
   * its end (or has a step entry on its node that has not): its GPUs are held in the store by its
   * own job, so no other job can be placed on them, and no other live task has them.
   */
  static void liveTasksHoldTheirGpus(ControlState s, List<String> out) {
    var store = s.store();
    var cluster = store.cluster();
    Map<String, Long> live = new HashMap<>();
    for (JobRecord j : s.jobsHoldingGpus()) {
      var inStore = store.running(JobId.of(j.id)).orElse(null);
      for (int t = 0; t < j.placement.size(); t++) {
        if (!liveOn(j, t)) {
          continue;
        }
        TaskPlacement p = j.placement.get(t);
        int index = cluster.indexOf(p.node()).orElse(-1);
        long mask = 0;
        for (int g : p.gpus()) {
          mask |= 1L << g;
        }
        if (index < 0 || inStore == null || inStore.placement().slotOf(index) < 0) {
          out.add("live task " + t + " of job " + j.id + " on " + p.node() + " is not held");
          continue;
        }
        if ((store.freeMask(index) & mask) != 0) {
          out.add(
              "GPUs of live task "
                  + t
                  + " of job "
                  + j.id
                  + " on "
                  + p.node()
                  + " are free in the store (invariant 6)");
        }
        long before = live.getOrDefault(p.node(), 0L);
        if ((before & mask) != 0) {
          out.add("a GPU of " + p.node() + " is held by two live tasks (invariant 6)");
        }
        live.put(p.node(), before | mask);
      }
    }
  }

  /**
   * The store takes out of service exactly the GPUs the records do, and no running job (other than
   * one being requeued) holds one: a job placed with a GPU that went bad is requeued.
   */
  static void gpusOutOfService(ControlState s, List<String> out) {
    var store = s.store();
    for (var n : s.nodes()) {
      var index = store.cluster().indexOf(n.name);
      if (index.isEmpty()) {
        continue;
      }
      long expected = 0;
      for (int g : n.gpusOutOfService.keySet()) {
        expected |= 1L << g;
      }
      if (store.outOfServiceMask(index.get()) != expected) {
        out.add(
            "node "
                + n.name
                + " has GPUs "
                + n.gpusOutOfService.keySet()
                + " out of service, the store "
                + Long.toBinaryString(store.outOfServiceMask(index.get())));
      }
      for (JobRecord j : s.jobsHoldingGpusOn(n.name)) {
        if (j.state != JobState.RUNNING || j.requeueing) {
          continue;
        }
        for (TaskPlacement t : j.placement) {
          if (t.node().equals(n.name)
              && t.gpus().stream().anyMatch(n.gpusOutOfService::containsKey)) {
            out.add("running job " + j.id + " holds an out-of-service GPU of " + n.name);
          }
        }
      }
    }
  }

  /** Whether task {@code t} of {@code j} may still run: its end, or a step's there, unconfirmed. */
  private static boolean liveOn(JobRecord j, int t) {
    if (j.taskExits.get(t) == null) {
      return true;
    }
    String node = j.placement.get(t).node();
    for (StepRecord step : j.steps) {
      for (int e = 0; e < step.placement.size(); e++) {
        if (step.entryExits.get(e) == null && step.placement.get(e).node().equals(node)) {
          return true;
        }
      }
    }
    return false;
  }

  /** The tasks of a GPU-holding job that still hold their GPUs. */
  static List<TaskPlacement> held(JobRecord j) {
    var out = new ArrayList<TaskPlacement>();
    for (int t = 0; t < j.placement.size(); t++) {
      if (!j.releasedTask(t)) {
        out.add(j.placement.get(t));
      }
    }
    return out;
  }

  /** The core placement the records describe (ascending node index, one task per node). */
  static Placement placement(ControlState s, List<TaskPlacement> tasks) {
    var cluster = s.store().cluster();
    var byNode = new TreeMap<Integer, Long>();
    for (TaskPlacement t : tasks) {
      long mask = 0;
      for (int g : t.gpus()) {
        mask |= 1L << g;
      }
      byNode.put(cluster.indexOf(t.node()).orElse(-1), mask);
    }
    int[] nodes = new int[byNode.size()];
    int[] counts = new int[byNode.size()];
    long[] masks = new long[byNode.size()];
    int i = 0;
    for (var e : byNode.entrySet()) {
      nodes[i] = e.getKey();
      counts[i] = 1;
      masks[i] = e.getValue();
      i++;
    }
    return Placement.of(nodes, counts, masks);
  }

  /**
   * What counts against the limits equals what the records say; and beyond {@code maxEndedJobs}
   * only ended jobs that must stay are kept (still stopping, or named by a waiting dependency).
   */
  static void limitCounters(ControlState s, List<String> out) {
    long live = 0;
    long ended = 0;
    var byUser = new TreeMap<String, Long>();
    for (JobRecord j : s.jobs()) {
      long w = JobSize.weight(j.request);
      if (j.isActive()) {
        live += w;
        byUser.merge(j.request.user(), w, Long::sum);
      } else {
        ended += w;
      }
    }
    if (live != s.liveWeight()) {
      out.add("live weight counted " + s.liveWeight() + ", records say " + live);
    }
    for (var e : byUser.entrySet()) {
      if (s.liveWeightOf(e.getKey()) != e.getValue()) {
        out.add(
            e.getKey()
                + "'s live weight "
                + s.liveWeightOf(e.getKey())
                + ", records say "
                + e.getValue());
      }
    }
    if (ended != s.endedWeight()) {
      out.add("ended weight counted " + s.endedWeight() + ", records say " + ended);
    }
    var limits = s.limits().orElse(null);
    if (limits != null && s.endedWeight() > limits.maxEndedJobs()) {
      for (JobRecord j : s.jobs()) {
        if (j.state.isFinal() && !j.releasing && !s.isKeptForDependency(j)) {
          out.add(
              "ended job "
                  + j.id
                  + " is kept though ended jobs weigh "
                  + s.endedWeight()
                  + " > maxEndedJobs "
                  + limits.maxEndedJobs());
        }
      }
    }
  }
}
