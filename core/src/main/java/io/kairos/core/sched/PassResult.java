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
}
