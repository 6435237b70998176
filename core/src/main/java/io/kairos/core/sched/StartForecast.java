package io.kairos.core.sched;

import io.kairos.core.model.RunningJob;
import io.kairos.core.sched.forecast.GpuTimeline;
import io.kairos.core.state.ClusterSnapshot;
import java.util.Arrays;

/**
 * When each waiting job is expected to start: what {@code kairos queue} and the API show as a job's
 * predicted start, and what the simulator measures ({@code --predictions}).
 *
 * <p>Model. Conservative backfilling over GPU counts ({@link GpuTimeline}), in the pass's order:
 * running jobs end, and waiting jobs run, for their <em>expected</em> run times (the limit times
 * the user's recent share of their limits, {@link ClusterSnapshot#expectedRunSec}), not their
 * limits, since most jobs end well before their limits; each job in order takes the earliest window
 * with enough free GPUs beside the jobs before it. The first {@value #PLACED} jobs in order are
 * placed so; a job after them is predicted by the GPU-seconds ahead of it (expected runs of running
 * jobs left, and of every job before it), spread over the cluster, and not before the last placed
 * start. What it leaves out, and so where it errs: later arrivals that the order puts first (under
 * {@code kairos}, short jobs that arrive later), which nodes and topology a gang needs, quotas, and
 * jobs that end before or after their expected time.
 *
 * <p>Cost: O(r log r) for r running jobs, plus O(PLACED x (r + PLACED)), plus O(n) for the rest.
 * Drivers compute it when asked (the controller, lazily per pass), not in every pass.
 */
public final class StartForecast {
  /** Jobs placed one by one on the timeline; later ones are predicted by the work ahead. */
  public static final int PLACED = 256;

  private StartForecast() {}

  /**
   * Predicted starts of the jobs {@code result} left waiting, by slot of {@code in}'s snapshot; -1
   * for a job that started in the pass or gets no prediction (held until a begin time, its queue
   * out of quota, never fits). The pass's starts count as running from now.
   */
  public static long[] after(PassInput in, PassResult result, boolean backfill) {
    var snapshot = in.snapshot();
    var diagnosis = result.diagnosis();
    int n = diagnosis.size();
    int[] order = new int[n];
    boolean[] skip = new boolean[n];
    var startedNow = new long[result.starts().size()];
    int s = 0;
    for (int rank = 0; rank < n; rank++) {
      int slot = diagnosis.slot(rank);
      order[rank] = slot;
      var reason = diagnosis.reason(rank);
      if (reason.isEmpty()) {
        skip[rank] = true;
        startedNow[s++] =
            GpuTimeline.release(
                in.nowSec() + snapshot.expectedRunSec(slot), snapshot.pendingJobs().gpus()[slot]);
      } else {
        skip[rank] =
            switch (reason.get()) {
              case BEGIN_TIME, QUOTA, NEVER_FITS -> true;
              default -> false;
            };
      }
    }
    return predict(snapshot, in.nowSec(), order, skip, Arrays.copyOf(startedNow, s), backfill);
  }

  /**
   * Predicted starts, by slot, of the pending jobs of {@code snapshot} visited in {@code order};
   * jobs with {@code skip[rank]} set, and jobs held until later, get -1. {@code startedNow} are
   * jobs started at {@code nowSec} that the snapshot still shows waiting ({@link
   * GpuTimeline#release} packed). Without {@code backfill} (a policy that never lets a job pass a
   * blocked one) no job is predicted before the one ahead of it.
   */
  static long[] predict(
      ClusterSnapshot snapshot,
      long nowSec,
      int[] order,
      boolean[] skip,
      long[] startedNow,
      boolean backfill) {
    var pending = snapshot.pendingJobs();
    long[] out = new long[pending.size()];
    Arrays.fill(out, -1);
    var cluster = snapshot.cluster();
    long freeNow = 0;
    for (int node = 0; node < cluster.nodeCount(); node++) {
      freeNow += Long.bitCount(snapshot.freeMask(node));
    }
    int r = snapshot.runningCount();
    long[] releases = Arrays.copyOf(startedNow, r + startedNow.length);
    // GPU-seconds the running jobs still hold, expected: the work ahead of every waiting job.
    double workAhead = 0;
    for (int i = 0; i < r; i++) {
      RunningJob job = snapshot.running(i);
      // A job past its expected end is expected to end halfway to its limit.
      long end = snapshot.expectedEndSec(i);
      if (end <= nowSec) {
        end = nowSec + Math.max(1, (job.endLimitSec() - nowSec) / 2);
      }
      releases[startedNow.length + i] = GpuTimeline.release(end, job.job().totalGpus());
      workAhead += (double) job.job().totalGpus() * (end - nowSec);
    }
    for (long started : startedNow) {
      int g = GpuTimeline.gpusOf(started);
      freeNow -= g;
      workAhead += (double) g * (GpuTimeline.endOf(started) - nowSec);
    }
    var timeline = new GpuTimeline(nowSec, Math.max(0, freeNow), releases);
    long capacity = Math.max(1, cluster.totalGpus());
    long[] eligible = pending.eligibleSec();
    int[] gpus = pending.gpus();
    int placed = 0;
    long lastStart = nowSec;
    for (int rank = 0; rank < order.length; rank++) {
      int slot = order[rank];
      if ((skip != null && skip[rank]) || eligible[slot] > nowSec) {
        continue;
      }
      long run = snapshot.expectedRunSec(slot);
      long start;
      if (placed < PLACED) {
        start =
            backfill ? timeline.place(gpus[slot], run) : timeline.place(gpus[slot], run, lastStart);
        if (start < 0) {
          continue;
        }
        placed++;
        lastStart = Math.max(lastStart, start);
      } else {
        start = Math.max(lastStart, nowSec + (long) (workAhead / capacity));
      }
      out[slot] = start;
      workAhead += (double) gpus[slot] * run;
    }
    return out;
  }
}
