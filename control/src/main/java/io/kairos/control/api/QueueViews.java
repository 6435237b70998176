package io.kairos.control.api;

import io.kairos.config.Tenancy;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.JobRecord;
import io.kairos.core.fairshare.AccountTree;
import io.kairos.core.fairshare.FairShareFactor;
import io.kairos.core.fairshare.UsageTracker;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.core.tenancy.Resource;
import io.kairos.core.tenancy.ResourceQuota;
import io.kairos.protocol.AccountView;
import io.kairos.protocol.JobState;
import io.kairos.protocol.QueueView;
import io.kairos.protocol.TaskPlacement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Queue and account views. Queue usage is recomputed from the running jobs (what they hold, GPUs by
 * their nodes' model), as the pass computes it: O(active jobs). Callers hold the read lock.
 */
final class QueueViews {
  private static final long MIB = 1L << 20;

  private QueueViews() {}

  static List<QueueView> queues(ControlState st, Tenancy tenancy) {
    // Per queue: pending, running, GPUs running, GPUs pending; configured queues first, in order.
    Map<String, int[]> counts = new LinkedHashMap<>();
    Map<String, Map<Resource, Long>> usage = new TreeMap<>();
    if (tenancy == null) {
      counts.put("default", new int[4]);
    } else {
      for (QueueSpec q : tenancy.config().queues()) {
        counts.put(q.name(), new int[4]);
      }
    }
    var others = new TreeMap<String, int[]>();
    for (JobRecord j : st.activeJobs()) {
      String queue = j.request.queue();
      int[] c =
          counts.containsKey(queue)
              ? counts.get(queue)
              : others.computeIfAbsent(queue, k -> new int[4]);
      if (j.state == JobState.PENDING) {
        c[0]++;
        c[3] += j.request.gpus();
      } else {
        c[1]++;
        c[2] += j.request.gpus();
      }
    }
    if (tenancy != null) {
      for (JobRecord j : st.jobsHoldingGpus()) {
        addUsage(st, j, usage.computeIfAbsent(j.request.queue(), k -> new TreeMap<>()));
      }
    }
    counts.putAll(others);
    var out = new ArrayList<QueueView>(counts.size());
    for (var e : counts.entrySet()) {
      int[] c = e.getValue();
      QueueSpec spec = tenancy == null ? null : tenancy.config().queue(e.getKey()).orElse(null);
      if (spec == null) {
        out.add(new QueueView(e.getKey(), c[0], c[1], c[2], c[3]));
        continue;
      }
      var used = usage.getOrDefault(e.getKey(), Map.of());
      var quotas = new ArrayList<QueueView.Quota>();
      for (var q : new TreeMap<>(spec.quotas()).entrySet()) {
        ResourceQuota rq = q.getValue();
        long u = used.getOrDefault(q.getKey(), 0L);
        quotas.add(
            new QueueView.Quota(
                q.getKey().toString(),
                rq.nominal(),
                rq.borrowingLimit(),
                rq.lendingLimit(),
                u,
                Math.max(0, u - rq.nominal())));
      }
      out.add(new QueueView(e.getKey(), c[0], c[1], c[2], c[3], spec.cohort(), quotas));
    }
    return out;
  }

  private static void addUsage(ControlState st, JobRecord j, Map<Resource, Long> into) {
    var r = j.request;
    for (TaskPlacement t : j.placement) {
      if (!t.gpus().isEmpty()) {
        String model =
            st.node(t.node())
                .map(n -> n.registration)
                .filter(reg -> !reg.gpus().isEmpty())
                .map(reg -> reg.gpus().get(0).model())
                .orElse(r.gpuModel());
        into.merge(Resource.gpu(model), (long) t.gpus().size(), Long::sum);
      }
      if (r.cpus() > 0) {
        into.merge(Resource.CPUS, (long) r.cpus(), Long::sum);
      }
      if (r.memoryMb() > 0) {
        into.merge(Resource.MEMORY_BYTES, r.memoryMb() * MIB, Long::sum);
      }
    }
  }

  static List<AccountView> accounts(Tenancy tenancy, FairShareFactor factors, UsageTracker usage) {
    if (tenancy == null || !tenancy.hasAccounts()) {
      return List.of();
    }
    AccountTree tree = tenancy.accounts();
    var out = new ArrayList<AccountView>(tree.size());
    for (int id = 0; id < tree.size(); id++) {
      int parent = tree.parent(id);
      Double gpuHours =
          usage == null
              ? null
              : Math.round(usage.usage(id, io.kairos.core.fairshare.Resource.GPU) / 36.0) / 100.0;
      Double factor = factors == null ? null : Math.round(factors.factor(id) * 10_000) / 10_000.0;
      out.add(
          new AccountView(
              tree.name(id),
              parent == AccountTree.NO_PARENT ? AccountTree.ROOT : tree.name(parent),
              tree.shares(id),
              Math.round(tree.normalizedShares(id) * 10_000) / 10_000.0,
              gpuHours,
              factor));
    }
    return out;
  }
}
