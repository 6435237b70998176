package io.kairos.control.sched;

import io.kairos.core.fairshare.AccountTree;
import io.kairos.core.fairshare.FairShareFactor;
import io.kairos.core.tenancy.TenancyConfig;
import io.kairos.core.tenancy.Tenants;
import java.util.Objects;

/**
 * The controller's multi-tenant scheduling configuration, read from a tenancy file by the CLI
 * ({@code kairos server --tenancy FILE}) and handed in whole: it is not replicated through the log,
 * so every replica must be started with the same file. What it decided at submission (a job's
 * account, priority class and priority) is in the log, so a replay does not depend on it.
 *
 * @param config queues with quotas, cohorts, priority classes
 * @param accounts the fair-share account tree; empty: no fair share
 * @param halfLifeSec the fair-share usage half-life, &gt; 0
 * @param settings preemption grace, protection and the starvation guard
 * @param fairShare how the accounts' factors are computed
 */
public record TenancySetup(
    TenancyConfig config,
    AccountTree accounts,
    long halfLifeSec,
    Tenants.Settings settings,
    FairShareFactor.Algorithm fairShare) {
  public TenancySetup {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(accounts, "accounts");
    Objects.requireNonNull(settings, "settings");
    Objects.requireNonNull(fairShare, "fairShare");
    if (halfLifeSec <= 0) {
      throw new IllegalArgumentException("halfLifeSec must be > 0, got " + halfLifeSec);
    }
  }

  /** With Slurm's default Fair Tree factors. */
  public TenancySetup(
      TenancyConfig config, AccountTree accounts, long halfLifeSec, Tenants.Settings settings) {
    this(config, accounts, halfLifeSec, settings, FairShareFactor.Algorithm.FAIR_TREE);
  }

  /** Whether accounts are configured (and so fair share is on, and account names are checked). */
  public boolean hasAccounts() {
    return accounts.size() > 0;
  }
}
