package io.kairos.core.sched;

import io.kairos.core.Checks;

/**
 * The knobs of migration for packing ({@link MigrationStage}), all in the core's units.
 *
 * @param protectionWindowSec a job moved at time t is not moved again before t + this
 * @param restartCostSec what a restart costs on top of the job's own checkpoint time (launch,
 *     reload, warm-up), in seconds of the whole gang's time
 * @param consolidationGain the fraction of a spread gang's remaining run time saved when it is put
 *     into a narrower topology level (one rack, one node): its communication overhead; 0.30 after
 *     the "up to 30%" of topology-aware placement
 */
public record MigrationSettings(
    long protectionWindowSec, long restartCostSec, double consolidationGain) {
  /** One hour of protection, a 60 s restart, 30% saved by consolidation. */
  public static final MigrationSettings DEFAULT = new MigrationSettings(3_600, 60, 0.30);

  public MigrationSettings {
    Checks.nonNegative(protectionWindowSec, "migration.protectionWindowSec");
    Checks.nonNegative(restartCostSec, "migration.restartCostSec");
    Checks.argument(
        consolidationGain >= 0 && consolidationGain <= 1,
        () -> "migration.consolidationGain must be in [0, 1], got " + consolidationGain);
  }
}
