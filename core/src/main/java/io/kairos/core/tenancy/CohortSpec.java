package io.kairos.core.tenancy;

import java.util.Objects;

/**
 * A group of queues that lend each other unused nominal quota. A cohort has no quota of its own:
 * what it lends is what its members leave unused, within their lending limits. Queues join it by
 * naming it in {@link QueueSpec#cohort()}; {@link TenancyConfig} requires it to be declared, so a
 * misspelt cohort is an error rather than a queue that silently cannot borrow.
 *
 * @param name unique among cohorts
 */
public record CohortSpec(String name) {
  public CohortSpec {
    Objects.requireNonNull(name, "cohort.name");
  }
}
