package io.kairos.core.tenancy;

import java.util.Map;
import java.util.Objects;

/**
 * A queue with quotas (Kueue's ClusterQueue). Checked as a whole by {@link TenancyConfig}.
 *
 * @param name unique among queues
 * @param cohort the cohort it borrows from and lends to; {@code null}: none, so it neither borrows
 *     nor lends
 * @param quotas quota per resource; a resource without an entry cannot be used by the queue's jobs
 *     at all (not even borrowed), as a flavor missing from a ClusterQueue in Kueue
 * @param preemption what its pending jobs may preempt
 * @param defaults what its jobs get when they do not say
 */
public record QueueSpec(
    String name,
    String cohort,
    Map<Resource, ResourceQuota> quotas,
    PreemptionPolicy preemption,
    QueueDefaults defaults) {
  public QueueSpec {
    Objects.requireNonNull(name, "queue.name");
    quotas = Map.copyOf(quotas);
    Objects.requireNonNull(preemption, "queue.preemption");
    Objects.requireNonNull(defaults, "queue.defaults");
  }

  /** A queue with no preemption and no defaults. */
  public static QueueSpec of(String name, String cohort, Map<Resource, ResourceQuota> quotas) {
    return new QueueSpec(name, cohort, quotas, PreemptionPolicy.NONE, QueueDefaults.NONE);
  }
}
