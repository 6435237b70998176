package io.kairos.sim.trace;

import java.util.ArrayList;
import java.util.List;

/**
 * Where a trace's time limits came from, said once for every reader: whether run times stand in for
 * estimates, and the notes the report prints about it.
 *
 * @param fromRuntime no estimate was used (asked for, or the trace has none)
 * @param notes the report's remarks, in a fixed order
 */
record EstimateNotes(boolean fromRuntime, List<String> notes) {
  /**
   * @param jobs jobs that count
   * @param given jobs that carried an estimate
   * @param raised jobs whose estimate was below their run time and was raised to it
   * @param singular the trace's name for an estimate ("requested time", "time limit")
   */
  static EstimateNotes of(EstimateMode mode, int jobs, int given, int raised, String singular) {
    var notes = new ArrayList<String>();
    boolean fromRuntime = false;
    if (mode == EstimateMode.ACTUAL) {
      fromRuntime = true;
      notes.add("--estimate actual: run times used as time limits");
    } else if (jobs > 0 && given == 0) {
      fromRuntime = true;
      notes.add("trace has no " + singular + "s: run times used as time limits");
    } else if (given < jobs) {
      notes.add((jobs - given) + " jobs have no " + singular + ": run time used as time limit");
    }
    if (raised > 0) {
      notes.add(raised + " jobs ran longer than their " + singular + ": limit raised to run time");
    }
    return new EstimateNotes(fromRuntime, notes);
  }
}
