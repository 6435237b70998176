package io.kairos.core.sched;

import java.util.List;

/** A pass's decisions (starts in order, then reservations) and its diagnosis. */
public record PassResult(
    List<Decision.Start> starts, List<Decision.Reserve> reservations, Diagnosis diagnosis) {
  public PassResult {
    starts = List.copyOf(starts);
    reservations = List.copyOf(reservations);
  }
}
