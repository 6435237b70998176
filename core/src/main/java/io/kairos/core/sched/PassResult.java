package io.kairos.core.sched;

import java.util.List;

/** A pass's decisions (starts in order, then reservations, then preemptions) and its diagnosis. */
public record PassResult(
    List<Decision.Start> starts,
    List<Decision.Reserve> reservations,
    List<Decision.Preempt> preemptions,
    Diagnosis diagnosis) {
  public PassResult {
    starts = List.copyOf(starts);
    reservations = List.copyOf(reservations);
    preemptions = List.copyOf(preemptions);
  }

  public PassResult(
      List<Decision.Start> starts, List<Decision.Reserve> reservations, Diagnosis diagnosis) {
    this(starts, reservations, List.of(), diagnosis);
  }

  /**
   * Whether {@code other} decided the same: equal starts, reservations and preemptions in the same
   * order, and the same jobs in the same order with the same reasons in the diagnosis.
   */
  public boolean sameAs(PassResult other) {
    return starts.equals(other.starts)
        && reservations.equals(other.reservations)
        && preemptions.equals(other.preemptions)
        && diagnosis.sameAs(other.diagnosis);
  }
}
