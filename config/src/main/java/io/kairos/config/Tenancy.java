package io.kairos.config;

import io.kairos.core.fairshare.AccountTree;
import io.kairos.core.sched.MigrationSettings;
import io.kairos.core.tenancy.TenancyConfig;
import io.kairos.core.tenancy.Tenants;
import java.util.Objects;
import java.util.Optional;

/**
 * A tenancy file as read by {@link TenancyYaml}: queues with quotas, the account tree for fair
 * share, the fair-share half-life, and the preemption and starvation settings of the pass. Every
 * part is already validated. The simulator runs under one ({@code kairos simulate --tenancy}); the
 * controller schedules with one ({@code kairos server --tenancy}).
 *
 * @param config priority classes, cohorts and queues
 * @param accounts the fair-share account tree
 * @param halfLifeSec the half-life of recorded usage in fair share, in seconds, &gt; 0
 * @param settings preemption grace, protection against thrashing, the large-gang starvation guard
 * @param yaml the document it was read from, or null when built in code: what a controller started
 *     with {@code --tenancy FILE} puts in the log as the replicated configuration's first version
 * @param migration the {@code scheduling.migration} block when it turns migration on; empty: no
 *     running job is ever moved
 */
public record Tenancy(
    TenancyConfig config,
    AccountTree accounts,
    long halfLifeSec,
    Tenants.Settings settings,
    String yaml,
    Optional<MigrationSettings> migration) {
  public Tenancy {
    Objects.requireNonNull(migration, "migration (Optional.empty() for off)");
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(accounts, "accounts");
    Objects.requireNonNull(settings, "settings");
    if (halfLifeSec <= 0) {
      throw new IllegalArgumentException("halfLifeSec must be > 0, got " + halfLifeSec);
    }
  }

  /** Without migration. */
  public Tenancy(
      TenancyConfig config,
      AccountTree accounts,
      long halfLifeSec,
      Tenants.Settings settings,
      String yaml) {
    this(config, accounts, halfLifeSec, settings, yaml, Optional.empty());
  }

  /** Built in code: no document. */
  public Tenancy(
      TenancyConfig config, AccountTree accounts, long halfLifeSec, Tenants.Settings settings) {
    this(config, accounts, halfLifeSec, settings, null);
  }

  /** With {@link Tenants.Settings#DEFAULT}. */
  public Tenancy(TenancyConfig config, AccountTree accounts, long halfLifeSec) {
    this(config, accounts, halfLifeSec, Tenants.Settings.DEFAULT);
  }

  /**
   * Whether the file declares accounts; the controller computes fair share and checks jobs' account
   * names only then.
   */
  public boolean hasAccounts() {
    return accounts.size() > 0;
  }
}
