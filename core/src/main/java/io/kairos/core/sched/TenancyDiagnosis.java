package io.kairos.core.sched;

import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.state.PendingJobs;
import io.kairos.core.tenancy.Admission;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.core.tenancy.Resource;
import io.kairos.core.tenancy.Tenants;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The tenancy's detail texts in a pass's {@link Diagnosis}: for a job refused by quota, which
 * resource and the numbers; for a preemptor, the victims it waits for. Part of {@link
 * QueueTenancy}.
 *
 * <p>Design note. Nothing is built during the pass: {@link #details} returns a function that reads
 * the quota ledger and the admission's failure codes as they are after the pass, and most details
 * are never asked for. A quota detail costs one ledger check of one resource; a preemptor's detail
 * O(p) for p preemptions under way.
 */
final class TenancyDiagnosis {
  private final Tenants tenants;
  private final PendingJobs pending;
  private final QuotaAdmission admission;

  TenancyDiagnosis(Tenants tenants, PendingJobs pending, QuotaAdmission admission) {
    this.tenants = tenants;
    this.pending = pending;
    this.admission = admission;
  }

  /**
   * The details of a pass in {@code order} that decided {@code preemptions} (its preemptor first
   * among them): quota refusals, the new preemptor, the preemptors still waiting for victims.
   */
  Diagnosis.Details details(int[] order, List<Decision.Preempt> preemptions) {
    JobId preemptor = preemptions.isEmpty() ? null : preemptions.getFirst().preemptor();
    return (rank, reason) -> {
      Job job = pending.jobs()[order[rank]];
      return switch (reason) {
        case QUOTA -> quotaDetail(order[rank]);
        case PREEMPTING ->
            job.id().equals(preemptor)
                ? "waits for job"
                    + (preemptions.size() == 1 ? " " : "s ")
                    + preemptions.stream().map(p -> p.job().value()).toList()
                    + " to stop (preempted for it: "
                    + preemptions.getFirst().detail()
                    + ")"
                : preemptingDetail(job.id());
        default -> null;
      };
    };
  }

  /** Why a job refused by quota was refused, for people; built from the quota after the pass. */
  private String quotaDetail(int slot) {
    Job job = pending.jobs()[slot];
    int code = admission.failure(slot);
    if (code == QuotaAdmission.UNKNOWN_QUEUE) {
      return "queue '"
          + job.spec().queue()
          + "' is not configured (fix: submit to one of "
          + tenants.config().queues().stream().map(QueueSpec::name).toList()
          + ")";
    }
    if (code == QuotaAdmission.NO_FLAVOR) {
      return "queue "
          + job.spec().queue()
          + " has no GPU quota of a model the cluster has"
          + (job.spec().gpuModel().isEmpty()
              ? ""
              : " (the job asks for " + job.spec().gpuModel() + ")");
    }
    if (code < 0) {
      return "its queue has no quota left for it";
    }
    var quota = admission.quota();
    Resource resource = quota.resource(code);
    var shape = job.spec().gang().shape();
    long amount =
        switch (resource.kind()) {
          case GPU -> pending.gpus()[slot];
          case CPU -> (long) pending.tasks()[slot] * shape.cpus();
          case MEMORY -> (long) pending.tasks()[slot] * shape.memoryBytes();
        };
    Admission a = quota.check(job.spec().queue(), Map.of(resource, amount));
    return a instanceof Admission.DoesNotFit(_, _, _, _, var reason)
        ? reason
        : resource + ": queue " + job.spec().queue() + " had no quota left for it in this pass";
  }

  /** For a preemptor whose victims are still stopping: which ones. */
  private String preemptingDetail(JobId job) {
    var ids = new ArrayList<Long>();
    tenants
        .preempting()
        .forEach(
            (victim, preemptor) -> {
              if (preemptor.equals(job)) {
                ids.add(victim.value());
              }
            });
    ids.sort(null);
    return "waits for job" + (ids.size() == 1 ? " " : "s ") + ids + " to stop (preempted for it)";
  }
}
