package io.kairos.core.sched;

import java.util.List;

/**
 * A pass's decisions (starts in order, then reservations, then preemptions, then the resizes of
 * elastic jobs, then the migrations) and its diagnosis.
 */
public record PassResult(
    List<Decision.Start> starts,
    List<Decision.Reserve> reservations,
    List<Decision.Preempt> preemptions,
    Diagnosis diagnosis,
    List<Decision.Resize> resizes,
    List<Decision.Migrate> migrations) {
  public PassResult {
    starts = List.copyOf(starts);
    reservations = List.copyOf(reservations);
    preemptions = List.copyOf(preemptions);
    resizes = List.copyOf(resizes);
    migrations = List.copyOf(migrations);
  }

  /** A pass that moves no running job. */
  public PassResult(
      List<Decision.Start> starts,
      List<Decision.Reserve> reservations,
      List<Decision.Preempt> preemptions,
      Diagnosis diagnosis,
      List<Decision.Resize> resizes) {
    this(starts, reservations, preemptions, diagnosis, resizes, List.of());
  }

  /** This result with {@code migrations}. */
  public PassResult withMigrations(List<Decision.Migrate> migrations) {
    return new PassResult(starts, reservations, preemptions, diagnosis, resizes, migrations);
  }

  /** A pass that resizes no elastic job. */
  public PassResult(
      List<Decision.Start> starts,
      List<Decision.Reserve> reservations,
      List<Decision.Preempt> preemptions,
      Diagnosis diagnosis) {
    this(starts, reservations, preemptions, diagnosis, List.of());
  }

  public PassResult(
      List<Decision.Start> starts, List<Decision.Reserve> reservations, Diagnosis diagnosis) {
    this(starts, reservations, List.of(), diagnosis);
  }

  /**
   * Whether {@code other} decided the same: equal starts, reservations, preemptions and resizes in
   * the same order, and the same jobs in the same order with the same reasons in the diagnosis.
   */
  public boolean sameAs(PassResult other) {
    return starts.equals(other.starts)
        && reservations.equals(other.reservations)
        && preemptions.equals(other.preemptions)
        && resizes.equals(other.resizes)
        && migrations.equals(other.migrations)
        && diagnosis.sameAs(other.diagnosis);
  }
}
