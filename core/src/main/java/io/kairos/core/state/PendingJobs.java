package io.kairos.core.state;

import io.kairos.core.model.Job;

/**
 * A snapshot's pending jobs in arrival order, as parallel arrays: the jobs, and the fields a
 * pass reads for every job. Read-only by contract; owned by one snapshot.
 *
 * @param eligibleSec when each job may start ({@link Job#eligibleSec()}): order keys and ages
 *     count from it
 * @param gpus total GPUs of each job's gang
 * @param tasks tasks of each job's gang
 * @param shapeIds a dense id per gang shape (task shape, distinct nodes, GPU model, excluded
 *     nodes), below {@code shapeCount}: jobs with equal ids differ at most in their task count
 */
public record PendingJobs(
    Job[] jobs,
    long[] ids,
    long[] eligibleSec,
    long[] limitSec,
    int[] gpus,
    int[] priority,
    int[] tasks,
    int[] shapeIds,
    int shapeCount) {
  public int size() {
    return jobs.length;
  }
}
