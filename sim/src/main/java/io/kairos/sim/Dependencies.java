package io.kairos.sim;

import io.kairos.sim.trace.TraceJob;
import java.util.HashMap;
import java.util.List;

/**
 * Jobs that wait for a preceding job (SWF's fields 17 and 18, the CSV's {@code depends_on}).
 *
 * <p>A job with a preceding job does not arrive at its own submit time: it arrives its think time
 * after the preceding job ends, as an {@link EventQueue#ARRIVAL} event. Only an earlier job in
 * submit order can be waited for; a preceding job that is not in the trace, was skipped or comes
 * later is ignored and counted, and the job arrives at its own submit time.
 *
 * <p>State it owns, per job (by index in submit order): the job it waits for (or -1), the jobs that
 * wait for it (a linked list through {@code firstDependent} and {@code nextDependent}), and when it
 * arrived (its submit time until it arrives); and the count of jobs that did wait for another.
 */
final class Dependencies {
  private final List<TraceJob> jobs;

  /** For each job, the index of the job it waits for, or -1. */
  private final int[] preceding;

  /** The jobs waiting for job i, as a list: firstDependent[i], then nextDependent[...]. */
  private final int[] firstDependent;

  private final int[] nextDependent;

  /** When each job arrived: its submit time, or its preceding job's end plus think time. */
  private final long[] arrival;

  /** Whether any job waits for another. */
  private final boolean any;

  /** Jobs that name a preceding job that is ignored. */
  private final int ignored;

  private int waited;

  private Dependencies(List<TraceJob> jobs, int[] preceding, int ignored) {
    int n = jobs.size();
    this.jobs = jobs;
    this.preceding = preceding;
    this.ignored = ignored;
    firstDependent = new int[n];
    nextDependent = new int[n];
    arrival = new long[n];
    java.util.Arrays.fill(firstDependent, -1);
    boolean some = false;
    for (int i = n - 1; i >= 0; i--) {
      arrival[i] = jobs.get(i).submitSec();
      if (preceding[i] >= 0) {
        nextDependent[i] = firstDependent[preceding[i]];
        firstDependent[preceding[i]] = i;
        some = true;
      }
    }
    any = some;
  }

  /** The dependencies among {@code jobs} (in submit order): only an earlier job is waited for. */
  static Dependencies of(List<TraceJob> jobs) {
    var indexOf = new HashMap<Long, Integer>();
    for (int i = 0; i < jobs.size(); i++) {
      indexOf.put(jobs.get(i).id(), i);
    }
    int[] preceding = new int[jobs.size()];
    int ignored = 0;
    for (int i = 0; i < jobs.size(); i++) {
      long p = jobs.get(i).precedingJobId();
      Integer j = p > 0 ? indexOf.get(p) : null;
      preceding[i] = j != null && j < i ? j : -1;
      ignored += p > 0 && preceding[i] < 0 ? 1 : 0;
    }
    return new Dependencies(jobs, preceding, ignored);
  }

  /** The first job from {@code i} on that arrives at its own submit time. */
  int nextOwnArrival(int i) {
    while (i < preceding.length && preceding[i] >= 0) {
      i++;
    }
    return i;
  }

  /** Job {@code i} arrives at {@code t}. */
  void arrived(int i, long t) {
    arrival[i] = t;
    if (preceding[i] >= 0) {
      waited++;
    }
  }

  /** Job {@code i} ended at {@code t}: the jobs waiting for it arrive after their think time. */
  void ended(int i, long t, EventQueue events) {
    for (int d = firstDependent[i]; d >= 0; d = nextDependent[d]) {
      events.add(t + jobs.get(d).thinkTimeSec(), EventQueue.ARRIVAL, d);
    }
  }

  /** Whether any job waits for another (such a job arrives out of id order). */
  boolean any() {
    return any;
  }

  /** When job {@code i} arrived (its submit time if it has not). */
  long arrival(int i) {
    return arrival[i];
  }

  /** Jobs that arrived after their preceding job ended. */
  int waited() {
    return waited;
  }

  /** Jobs that name a preceding job not in the trace, skipped, or later in submit order. */
  int ignored() {
    return ignored;
  }
}
