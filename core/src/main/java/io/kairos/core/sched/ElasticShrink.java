package io.kairos.core.sched;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.Job;
import io.kairos.core.sched.place.GangPlacer;
import io.kairos.core.sched.place.PlacementStrategy;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Step 2 of {@link ElasticStage}: which nodes running elastic jobs give up so that a waiting job
 * can be placed; none when it cannot be placed even with every elastic job at its minimum.
 */
final class ElasticShrink {
  private record Removal(ElasticMember member, int node, long gpus) {}

  private ElasticShrink() {}

  /**
   * Shrinks {@code members} (in {@code order}, last node first, never below the minimum or the
   * anchor) until {@code waiting} fits on {@code free}, then puts back every removal it does not
   * need. Returns the shrunk members, changed in place with {@code free}; empty (and nothing
   * changed) when shrinking cannot place the job, or when it fits without.
   */
  static List<ElasticMember> forWaiting(
      Cluster cluster,
      ElasticFreeNodes free,
      List<ElasticMember> members,
      Job waiting,
      PlacementStrategy strategy,
      Comparator<ElasticMember> order) {
    var gang = waiting.spec().gang();
    int model = cluster.modelIdOf(waiting.spec().gpuModel());
    long[] excluded = cluster.excludedMask(waiting.spec().excludedNodes());
    var placer = new GangPlacer(cluster, strategy);
    if (placer.place(gang, model, free, true, excluded) != null) {
      return List.of();
    }
    var donors =
        members.stream().filter(m -> !m.startedNow() && m.size() > m.min()).sorted(order).toList();
    var removed = new ArrayList<Removal>();
    boolean fits = false;
    removing:
    for (ElasticMember m : donors) {
      var shape = m.job().spec().gang().shape();
      while (m.size() > m.min()) {
        // The last node that is not the job's first (its rendezvous).
        int node =
            m.nodes().lastKey() != m.anchor()
                ? m.nodes().lastKey()
                : m.nodes().lowerKey(m.anchor());
        long gpus = m.nodes().remove(node);
        free.give(node, gpus, shape);
        removed.add(new Removal(m, node, gpus));
        if (placer.place(gang, model, free, true, excluded) != null) {
          fits = true;
          break removing;
        }
      }
    }
    // Fill back, last removal first: keep only the removals the waiting job needs (all of them
    // when it does not fit at all).
    for (Removal r : removed.reversed()) {
      var shape = r.member().job().spec().gang().shape();
      free.take(r.node(), r.gpus(), shape);
      r.member().nodes().put(r.node(), r.gpus());
      if (fits && placer.place(gang, model, free, true, excluded) == null) {
        free.give(r.node(), r.gpus(), shape);
        r.member().nodes().remove(r.node());
      }
    }
    return fits ? donors.stream().filter(ElasticMember::changed).toList() : List.of();
  }
}
