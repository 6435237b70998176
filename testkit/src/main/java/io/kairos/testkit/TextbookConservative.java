package io.kairos.testkit;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Textbook conservative backfilling (Mu'alem and Feitelson 2001) on a machine of identical
 * single-processor nodes, with the schedule rebuilt at every event, written apart from Kairos'
 * scheduler as an oracle for it. Nothing here reads Kairos' core: jobs are numbers, the machine is
 * a count, the plan is a step function of free processors over time.
 *
 * <p>At every instant at which a job ends or arrives (ends first, then arrivals), the plan starts
 * from the running jobs, each holding its processors until its start plus its estimate. Then every
 * waiting job, in arrival order, is given the earliest time from now at which enough processors
 * stay free for its whole estimate, and holds them from then on in the plan; a job whose time is
 * now starts. So no job starts if it would delay any earlier job's reservation, and every job gets
 * one.
 *
 * <p>Jobs are {@link TextbookEasy.Job}s: a job's estimate is its time limit and it never runs
 * longer.
 */
public final class TextbookConservative {
  private TextbookConservative() {}

  /** Start times, by the jobs' positions in {@code jobs}, on {@code processors} processors. */
  public static long[] startTimes(List<TextbookEasy.Job> jobs, int processors) {
    int n = jobs.size();
    long[] start = new long[n];
    Arrays.fill(start, -1);
    var ends = new PriorityQueue<long[]>(Comparator.<long[]>comparingLong(e -> e[0]));
    var running = new ArrayList<Integer>();
    var queue = new ArrayList<Integer>();
    int next = 0;
    while (next < n || !ends.isEmpty()) {
      long now =
          ends.isEmpty()
              ? jobs.get(next).submitSec()
              : next < n ? Math.min(ends.peek()[0], jobs.get(next).submitSec()) : ends.peek()[0];
      while (!ends.isEmpty() && ends.peek()[0] == now) {
        running.remove(Integer.valueOf((int) ends.poll()[1]));
      }
      while (next < n && jobs.get(next).submitSec() == now) {
        if (next > 0 && jobs.get(next).submitSec() < jobs.get(next - 1).submitSec()) {
          throw new IllegalArgumentException("jobs must be in arrival order (job " + next + ")");
        }
        if (jobs.get(next).procs() > processors) {
          throw new IllegalArgumentException("job " + next + " needs more than the machine");
        }
        queue.add(next++);
      }
      var plan = new Plan(now, processors);
      for (int i : running) {
        plan.hold(now, start[i] + jobs.get(i).estimateSec(), jobs.get(i).procs());
      }
      var waiting = new ArrayList<Integer>();
      for (int i : queue) {
        var job = jobs.get(i);
        long at = plan.earliest(job.procs(), job.estimateSec());
        plan.hold(at, at + job.estimateSec(), job.procs());
        if (at == now) {
          start[i] = now;
          running.add(i);
          ends.add(new long[] {now + job.runSec(), i});
        } else {
          waiting.add(i);
        }
      }
      queue = waiting;
    }
    return start;
  }

  /** Free processors from {@code times[k]} until {@code times[k + 1]} (the last: for ever). */
  private static final class Plan {
    private long[] times;
    private long[] free;
    private int size;

    Plan(long now, int processors) {
      times = new long[] {now, 0, 0, 0};
      free = new long[] {processors, 0, 0, 0};
      size = 1;
    }

    /** Takes {@code procs} processors over {@code [from, to)}. */
    void hold(long from, long to, int procs) {
      if (to <= from) {
        return;
      }
      int a = split(from);
      int b = split(to);
      for (int k = a; k < b; k++) {
        free[k] -= procs;
        if (free[k] < 0) {
          throw new IllegalStateException("plan overbooked at " + times[k]);
        }
      }
    }

    /** The index of the step starting at {@code t}, splitting the step that holds it. */
    private int split(long t) {
      int k = Arrays.binarySearch(times, 0, size, t);
      if (k >= 0) {
        return k;
      }
      int at = -k - 1; // the step before it, at - 1, holds t (t > times[0] always)
      if (size == times.length) {
        times = Arrays.copyOf(times, size * 2);
        free = Arrays.copyOf(free, size * 2);
      }
      System.arraycopy(times, at, times, at + 1, size - at);
      System.arraycopy(free, at, free, at + 1, size - at);
      times[at] = t;
      free[at] = free[at - 1];
      size++;
      return at;
    }

    /** The earliest step start from which {@code procs} stay free for {@code length} seconds. */
    long earliest(int procs, long length) {
      for (int k = 0; k < size; k++) {
        long t = times[k];
        int j = k;
        while (j < size && times[j] < t + length && free[j] >= procs) {
          j++;
        }
        if (j == size || times[j] >= t + length) {
          return t;
        }
        k = j; // every start up to step j runs into step j, where too few are free
      }
      throw new IllegalStateException("no time with " + procs + " processors free");
    }
  }
}
