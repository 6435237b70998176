package io.kairos.core.sched;

import io.kairos.core.model.JobId;
import io.kairos.core.model.Placement;

/** What a pass decided for one job; the driver commits it (controller) or applies it (sim). */
public sealed interface Decision {
  JobId job();

  /** Start the whole gang now on {@code placement} (GPU masks chosen). */
  record Start(JobId job, Placement placement) implements Decision {}

  /**
   * The job cannot start now; it is promised {@code startSec} on {@code placement}'s nodes (no GPU
   * masks yet), assuming running jobs run to their time limits. Later jobs were only started if
   * they do not delay this.
   */
  record Reserve(JobId job, long startSec, Placement placement) implements Decision {}
}
