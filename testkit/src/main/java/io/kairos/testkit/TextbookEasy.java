package io.kairos.testkit;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Textbook EASY backfilling (Lifka 1995; Mu'alem and Feitelson 2001) on a machine of identical
 * single-processor nodes, written apart from Kairos' scheduler as an oracle for it. Nothing here
 * reads Kairos' core: jobs are numbers, the machine is a count.
 *
 * <p>The algorithm, at every instant at which a job ends or arrives (ends first, then arrivals,
 * then one scheduling step):
 *
 * <ol>
 *   <li>start jobs from the head of the queue (arrival order) while the head fits the free
 *       processors;
 *   <li>if a job is still waiting, it is the head: its <em>shadow time</em> is the earliest time at
 *       which, by the running jobs' estimates, enough processors are free for it, and the
 *       <em>extra</em> processors are those free then beyond what it needs;
 *   <li>every later job, in queue order, starts now if it fits the free processors and either ends
 *       (by its estimate) no later than the shadow time, or uses no more than the extra processors,
 *       which it then uses up.
 * </ol>
 *
 * <p>A job's estimate is its time limit: it never runs longer (the simulator raises a limit below a
 * run time to the run time, and so must the caller).
 */
public final class TextbookEasy {
  private TextbookEasy() {}

  /**
   * One job: arrival, processors, run time and estimate, in seconds. Jobs are queued in the order
   * given (which must be by arrival).
   */
  public record Job(long submitSec, int procs, long runSec, long estimateSec) {
    public Job {
      if (procs < 1 || runSec < 1 || estimateSec < runSec || submitSec < 0) {
        throw new IllegalArgumentException("bad job: " + this);
      }
    }
  }

  /** Start times, by the jobs' positions in {@code jobs}, on {@code processors} processors. */
  public static long[] startTimes(List<Job> jobs, int processors) {
    int n = jobs.size();
    for (int i = 1; i < n; i++) {
      if (jobs.get(i).submitSec() < jobs.get(i - 1).submitSec()) {
        throw new IllegalArgumentException("jobs must be in arrival order (job " + i + ")");
      }
    }
    long[] start = new long[n];
    Arrays.fill(start, -1);
    // Running jobs by their real end: (end, index).
    var ends = new PriorityQueue<long[]>(Comparator.<long[]>comparingLong(e -> e[0]));
    var running = new ArrayList<Integer>();
    var queue = new ArrayDeque<Integer>();
    int free = processors;
    int next = 0;
    while (next < n || !ends.isEmpty()) {
      long now =
          ends.isEmpty()
              ? jobs.get(next).submitSec()
              : next < n ? Math.min(ends.peek()[0], jobs.get(next).submitSec()) : ends.peek()[0];
      while (!ends.isEmpty() && ends.peek()[0] == now) {
        int i = (int) ends.poll()[1];
        running.remove(Integer.valueOf(i));
        free += jobs.get(i).procs();
      }
      while (next < n && jobs.get(next).submitSec() == now) {
        if (jobs.get(next).procs() > processors) {
          throw new IllegalArgumentException("job " + next + " needs more than the machine");
        }
        queue.addLast(next++);
      }
      free = schedule(jobs, queue, running, ends, start, free, now);
    }
    return start;
  }

  /** One scheduling step at {@code now}; returns the processors left free. */
  private static int schedule(
      List<Job> jobs,
      ArrayDeque<Integer> queue,
      List<Integer> running,
      PriorityQueue<long[]> ends,
      long[] start,
      int free,
      long now) {
    // 1. Start from the head while it fits.
    while (!queue.isEmpty() && jobs.get(queue.peekFirst()).procs() <= free) {
      free = begin(jobs, queue.pollFirst(), running, ends, start, free, now);
    }
    if (queue.isEmpty()) {
      return free;
    }
    // 2. The head's shadow time and the extra processors, from the running jobs' estimates.
    Job head = jobs.get(queue.peekFirst());
    long[][] estimated = new long[running.size()][];
    for (int k = 0; k < estimated.length; k++) {
      int i = running.get(k);
      estimated[k] = new long[] {start[i] + jobs.get(i).estimateSec(), jobs.get(i).procs()};
    }
    Arrays.sort(estimated, Comparator.comparingLong(e -> e[0]));
    long shadow = -1;
    long freeThen = free;
    for (int k = 0; k < estimated.length && shadow < 0; k++) {
      freeThen += estimated[k][1];
      // Every job ending at the same instant frees its processors then.
      boolean lastAtThisTime = k + 1 == estimated.length || estimated[k + 1][0] != estimated[k][0];
      if (lastAtThisTime && freeThen >= head.procs()) {
        shadow = estimated[k][0];
      }
    }
    if (shadow < 0) {
      throw new IllegalStateException("the head never fits: " + head);
    }
    long extra = freeThen - head.procs();
    // 3. Backfill: later jobs that end by the shadow time or fit in the extra processors.
    var later = new ArrayList<>(queue);
    for (int k = 1; k < later.size(); k++) {
      int i = later.get(k);
      Job job = jobs.get(i);
      if (job.procs() > free) {
        continue;
      }
      boolean endsByShadow = now + job.estimateSec() <= shadow;
      if (endsByShadow || job.procs() <= extra) {
        if (!endsByShadow) {
          extra -= job.procs();
        }
        queue.remove(i);
        free = begin(jobs, i, running, ends, start, free, now);
      }
    }
    return free;
  }

  private static int begin(
      List<Job> jobs,
      int i,
      List<Integer> running,
      PriorityQueue<long[]> ends,
      long[] start,
      int free,
      long now) {
    start[i] = now;
    running.add(i);
    ends.add(new long[] {now + jobs.get(i).runSec(), i});
    return free - jobs.get(i).procs();
  }

  /**
   * Mean bounded slowdown as the simulator reports it: {@code max(1, (wait + run) / max(run, 10))}
   * over all jobs.
   */
  public static double meanBoundedSlowdown(List<Job> jobs, long[] start) {
    double sum = 0;
    for (int i = 0; i < jobs.size(); i++) {
      long wait = start[i] - jobs.get(i).submitSec();
      long run = jobs.get(i).runSec();
      sum += Math.max(1.0, (double) (wait + run) / Math.max(run, 10));
    }
    return jobs.isEmpty() ? 0 : sum / jobs.size();
  }
}
