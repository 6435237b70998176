package io.kairos.sim.tenancy;

import io.kairos.core.fairshare.AccountTree;
import io.kairos.core.tenancy.TenancyConfig;
import java.util.Objects;

/**
 * A tenancy file as read by {@link TenancyYaml}: queues with quotas, the account tree for fair
 * share, and the fair-share half-life. Every part is already validated.
 *
 * @param config priority classes, cohorts and queues
 * @param accounts the fair-share account tree
 * @param halfLifeSec the half-life of recorded usage in fair share, in seconds, &gt; 0
 */
public record Tenancy(TenancyConfig config, AccountTree accounts, long halfLifeSec) {
  public Tenancy {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(accounts, "accounts");
    if (halfLifeSec <= 0) {
      throw new IllegalArgumentException("halfLifeSec must be > 0, got " + halfLifeSec);
    }
  }
}
