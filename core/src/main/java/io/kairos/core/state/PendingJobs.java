package io.kairos.core.state;

import io.kairos.core.model.Job;

/**
 * A snapshot's pending jobs in arrival order, as parallel arrays: the jobs, and the fields a pass
 * reads for every job. Read-only by contract; owned by one snapshot. The jobs are the first {@code
 * size} entries of each array: the arrays may be longer (a snapshot shares the store's arrays while
 * it can, see {@code PendingTable}), so read {@link #size()}, never an array's length.
 *
 * @param eligibleSec when each job may start ({@link Job#eligibleSec()}): order keys and ages count
 *     from it
 * @param gpus total GPUs of each job's gang
 * @param tasks tasks of each job's gang
 * @param shapeIds a dense id per gang shape (task shape, distinct nodes, GPU model, excluded
 *     nodes), below {@code shapeCount}: jobs with equal ids differ at most in their task count
 * @param tenantIds a dense id per (queue, account, priority class, user), an index into {@code
 *     tenantKeys}: what a tenancy-aware pass needs of a job without reading the job
 * @param tenantKeys the interned keys; only the first {@code max(tenantIds) + 1} are used
 * @param size how many jobs there are: the first {@code size} entries of each array
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
    int shapeCount,
    int[] tenantIds,
    TenantKey[] tenantKeys,
    int size) {

  /** Pending jobs filling their arrays. */
  public PendingJobs(
      Job[] jobs,
      long[] ids,
      long[] eligibleSec,
      long[] limitSec,
      int[] gpus,
      int[] priority,
      int[] tasks,
      int[] shapeIds,
      int shapeCount,
      int[] tenantIds,
      TenantKey[] tenantKeys) {
    this(
        jobs,
        ids,
        eligibleSec,
        limitSec,
        gpus,
        priority,
        tasks,
        shapeIds,
        shapeCount,
        tenantIds,
        tenantKeys,
        jobs.length);
  }

  /** The tenancy fields of a job spec, interned at submission. */
  public record TenantKey(String queue, String account, String priorityClass, String user) {
    public static TenantKey of(Job job) {
      var spec = job.spec();
      return new TenantKey(spec.queue(), spec.account(), spec.priorityClass(), spec.user());
    }
  }

  /** Pending jobs without interned tenancy keys (tests): every job gets its own key. */
  public PendingJobs(
      Job[] jobs,
      long[] ids,
      long[] eligibleSec,
      long[] limitSec,
      int[] gpus,
      int[] priority,
      int[] tasks,
      int[] shapeIds,
      int shapeCount) {
    this(
        jobs,
        ids,
        eligibleSec,
        limitSec,
        gpus,
        priority,
        tasks,
        shapeIds,
        shapeCount,
        java.util.stream.IntStream.range(0, jobs.length).toArray(),
        keysOf(jobs));
  }

  private static TenantKey[] keysOf(Job[] jobs) {
    var keys = new TenantKey[jobs.length];
    for (int i = 0; i < jobs.length; i++) {
      keys[i] = TenantKey.of(jobs[i]);
    }
    return keys;
  }
}
