package io.kairos.core.state;

import io.kairos.core.model.Job;

/**
 * A snapshot's pending jobs in arrival order, as parallel arrays: the jobs, and the fields a
 * pass reads for every job. Read-only by contract; owned by one snapshot.
 */
public record PendingJobs(
    Job[] jobs, long[] ids, long[] submitSec, long[] limitSec, int[] gpus, int[] priority) {
  public int size() {
    return jobs.length;
  }
}
