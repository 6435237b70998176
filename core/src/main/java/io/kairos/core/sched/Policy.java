package io.kairos.core.sched;

import io.kairos.core.Checks;
import io.kairos.core.sched.order.ExpansionFactorOrder;
import io.kairos.core.sched.order.JobOrder;
import io.kairos.core.sched.order.StarvationGuard;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A scheduling policy: the order jobs are considered in, whether later jobs may pass a blocked one,
 * and how many blocked jobs are protected by reservations. Chosen by name from configuration; the
 * pass has no feature flags of its own.
 *
 * @param name the stable name users select ({@code --policy easy})
 * @param order which job is considered first
 * @param backfill whether a job may start while an earlier one in the order waits
 * @param reservations how many blocked jobs (the first in order) get reservations; later jobs start
 *     only if they do not delay any of them
 */
public record Policy(
    String name,
    JobOrder order,
    boolean backfill,
    int reservations,
    Optional<StarvationGuard> starvationGuard) {
  public Policy {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(order, "order");
    Checks.nonNegative(reservations, "reservations");
    Objects.requireNonNull(starvationGuard, "starvationGuard");
  }

  public Policy(String name, JobOrder order, boolean backfill, int reservations) {
    this(name, order, backfill, reservations, Optional.empty());
  }

  /** Strict arrival order: the first job that cannot start stops the pass. No backfill. */
  public static final Policy FCFS = new Policy("fcfs", JobOrder.ARRIVAL, false, 0);

  /** Arrival order with EASY backfilling: one reservation, for the first blocked job. */
  public static final Policy EASY = new Policy("easy", JobOrder.ARRIVAL, true, 1);

  /** Arrival order with a reservation for every blocked job. */
  public static final Policy CONSERVATIVE =
      new Policy("conservative", JobOrder.ARRIVAL, true, Integer.MAX_VALUE);

  /** Shortest time limit first, with a reservation for the first blocked job. */
  public static final Policy SJF = new Policy("sjf", JobOrder.SHORTEST_LIMIT, true, 1);

  /**
   * Kairos' default: largest expansion factor first (short jobs go quickly), one reservation for
   * the first blocked job, and a starvation guard: the oldest job goes first, and so gets the
   * reservation, once it has waited an hour and 3 times its limit, or 2 days whatever its limit.
   * The 2-day bound keeps the longest waits near or below EASY's on every trace measured (without
   * it a job with a 53-day limit waited 36 days on Philly); the ideas measured against it, and what
   * each costs, are in docs/concepts.md.
   */
  public static final Policy KAIROS =
      new Policy(
          "kairos",
          new ExpansionFactorOrder(60),
          true,
          1,
          Optional.of(new StarvationGuard(3.0, 3_600, 172_800)));

  /**
   * {@link #KAIROS} with expected run times in the expansion factor: a job's factor is {@code (wait
   * + expected) / expected}, where the expected run is its limit times its user's recent share of
   * their limits (the last two finished jobs, Tsafrir, Etsion and Feitelson's predictor; the limit
   * while the user has none). Jobs whose users overstate their limits rise faster. Only the order
   * changes: reservations, backfill and the starvation guard keep to the limits, so backfill still
   * never delays a reservation. Lower mean bounded slowdown than {@code kairos} on the HPC traces,
   * longest waits still above EASY's on some (docs/concepts.md): an opt-in trade-off, not the
   * default.
   */
  public static final Policy KAIROS_PREDICTED =
      new Policy(
          "kairos-predicted",
          new ExpansionFactorOrder(60, true),
          true,
          1,
          Optional.of(new StarvationGuard(3.0, 3_600, 172_800)));

  public static final List<Policy> ALL =
      List.of(FCFS, EASY, CONSERVATIVE, SJF, KAIROS, KAIROS_PREDICTED);

  public static Optional<Policy> byName(String name) {
    return ALL.stream().filter(p -> p.name().equals(name)).findFirst();
  }

  public static List<String> names() {
    return ALL.stream().map(Policy::name).toList();
  }
}
