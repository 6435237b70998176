package io.kairos.core.sched;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.Placement;
import io.kairos.core.state.ClusterSnapshot;
import io.kairos.core.tenancy.QuotaLedger;
import io.kairos.core.tenancy.Resource;
import java.util.Map;

/**
 * The quota an elastic job grows within: with tenancy, a node's GPUs may be added only while its
 * queue's usage of that GPU model (running jobs at their current sizes, this pass's starts and
 * growth so far) stays within its nominal quota: an elastic job never borrows for its extra nodes,
 * so no reclaim ever has to stop them. Without tenancy, growth is not limited by quota.
 */
final class ElasticQuota {
  private static final ElasticQuota UNLIMITED = new ElasticQuota(null);

  private final QuotaLedger ledger;

  private ElasticQuota(QuotaLedger ledger) {
    this.ledger = ledger;
  }

  static ElasticQuota of(
      PassInput in, ClusterSnapshot snapshot, PassResult pass, Map<JobId, Job> pendingById) {
    if (!in.tenants().enabled()) {
      return UNLIMITED;
    }
    var quota = new ElasticQuota(new QuotaLedger(in.tenants().config()));
    Cluster cluster = snapshot.cluster();
    for (int i = 0; i < snapshot.runningCount(); i++) {
      var r = snapshot.running(i);
      quota.chargeAll(cluster, r.job(), r.placement());
    }
    for (Decision.Start s : pass.starts()) {
      quota.chargeAll(cluster, pendingById.get(s.job()), s.placement());
    }
    return quota;
  }

  private void chargeAll(Cluster cluster, Job job, Placement placement) {
    for (int i = 0; i < placement.nodeCount(); i++) {
      charge(job, cluster.gpuModel(placement.node(i)), Long.bitCount(placement.gpuMask(i)));
    }
  }

  /** Whether {@code gpus} more GPUs of {@code model} keep the job's queue within nominal quota. */
  boolean admits(Job job, String model, int gpus) {
    if (ledger == null) {
      return true;
    }
    int q = ledger.queueId(job.spec().queue());
    int r = resourceOf(model);
    return q >= 0 && r >= 0 && ledger.usage(q, r) + gpus <= ledger.nominal(q, r);
  }

  void charge(Job job, String model, long gpus) {
    if (ledger == null || gpus == 0) {
      return;
    }
    int q = ledger.queueId(job.spec().queue());
    int r = resourceOf(model);
    if (q >= 0 && r >= 0) {
      ledger.add(q, r, gpus);
    }
  }

  private int resourceOf(String model) {
    if (model.isBlank() || !model.strip().equals(model) || model.indexOf(':') >= 0) {
      return -1;
    }
    return ledger.resourceId(Resource.gpu(model));
  }
}
