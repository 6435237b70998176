package io.kairos.core.sched;

import java.util.List;

/**
 * A pass's decisions (starts in order, then reservations, then preemptions, then the resizes of
 * elastic jobs) and its diagnosis.
 */
public record PassResult(
    List<Decision.Start> starts,
    List<Decision.Reserve> reservations,
    List<Decision.Preempt> preemptions,
    Diagnosis diagnosis,
    List<Decision.Resize> resizes) {
  public PassResult {
    starts = List.copyOf(starts);
    reservations = List.copyOf(reservations);
    preemptions = List.copyOf(preemptions);
    resizes = List.copyOf(resizes);
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
        && diagnosis.sameAs(other.diagnosis);
  }
}
