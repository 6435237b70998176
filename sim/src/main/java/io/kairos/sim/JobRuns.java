package io.kairos.sim;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.model.TopologyLevel;
import io.kairos.core.sched.Decision;
import io.kairos.sim.trace.TraceJob;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The runs of each job: how long a run lasts, and what a preempted run keeps.
 *
 * <p>A run lasts the job's work left, stretched by the comm model when there is one (and cut at the
 * job's time limit, all of it lost). A preempted job is signalled, runs on for the grace period,
 * then stops and is requeued: it keeps the progress saved at its last checkpoint, and the finish
 * event of the stopped run, still in the event queue, becomes stale.
 *
 * <p>State it owns, per job (by index in submit order): work left, the current run's planned length
 * and start, when a preempted run stops (or -1), its stale finish events, whether and when it first
 * started, when its last run ended or will end, and its total run time. And the totals of the run:
 * GPU time lost to the comm model and runs stopped at their limit; preemptions signalled, ignored
 * (with the first described) and requeued, and the GPU time they lost.
 *
 * <p>Elastic jobs ({@link ElasticModel}) keep their progress in {@link ElasticRuns}: their work is
 * GPU-seconds, done at their current size, and the comm model does not stretch them. Their finish
 * events are stale unless they are due at the job's current end while it runs (a grown job ends
 * earlier than its stale event). With a checkpoint cost, a preempted job stops that long after its
 * signal and keeps its work up to the signal (preemption by checkpoint).
 */
final class JobRuns {
  private final Cluster cluster;
  private final List<TraceJob> jobs;
  private final List<JobSpec> specs;
  private final Optional<CommModel> commModel;

  /** Seconds a checkpoint on demand takes; 0: preempted jobs run out their grace instead. */
  private final long checkpointCostSec;

  /** Progress of elastic jobs, or null when none is elastic. */
  private final ElasticRuns elastic;

  private final boolean[] isElastic;

  /** Whether each elastic job runs now (its finish events are stale otherwise). */
  private final boolean[] running;

  /** When a job preempted by checkpoint was signalled (its work up to then is kept), or -1. */
  private final long[] signalledAt;

  /** GPU-seconds each job lost to preemptions. */
  private final double[] preemptionLost;

  /** Work left per job, in seconds of its trace duration (less after a checkpointed stop). */
  private final long[] workLeft;

  /** The run length the current run of the job was started with, and when it started. */
  private final long[] plannedRun;

  private final long[] lastStart;

  /** When a preempted job stops (end of its grace), or -1 while it is not being stopped. */
  private final long[] stopAt;

  /** Finish events of runs that were stopped and requeued, still in the heap. */
  private final int[] staleFinishes;

  private final boolean[] everStarted;

  /** When the job first started. */
  private final long[] start;

  /** When the job's last run ends (its planned end while it runs, its stop when requeued). */
  private final long[] end;

  /** Total run time of the job over all its runs. */
  private final long[] runSec;

  private double lostGpuSeconds;
  private int stoppedAtLimit;
  private int preemptionsSignalled;
  private int requeued;
  private int preemptionsIgnored;
  private String firstIgnored = "";
  private double preemptionLostGpuSeconds;
  private int migrations;

  /** How many times each job was moved ({@link #migrate}); allocated at the first move. */
  private int[] moved;

  JobRuns(
      Cluster cluster,
      List<TraceJob> jobs,
      List<JobSpec> specs,
      Optional<CommModel> commModel,
      long checkpointCostSec) {
    this.cluster = cluster;
    this.jobs = jobs;
    this.specs = specs;
    this.commModel = commModel;
    this.checkpointCostSec = checkpointCostSec;
    int n = jobs.size();
    isElastic = new boolean[n];
    boolean any = false;
    for (int i = 0; i < n; i++) {
      isElastic[i] = specs.get(i).gang().isElastic();
      any |= isElastic[i];
    }
    elastic = any ? new ElasticRuns(n, checkpointCostSec) : null;
    running = any ? new boolean[n] : null;
    signalledAt = new long[n];
    Arrays.fill(signalledAt, -1);
    preemptionLost = new double[n];
    start = new long[n];
    end = new long[n];
    workLeft = new long[n];
    plannedRun = new long[n];
    lastStart = new long[n];
    stopAt = new long[n];
    Arrays.fill(stopAt, -1);
    staleFinishes = new int[n];
    everStarted = new boolean[n];
    for (int i = 0; i < n; i++) {
      workLeft[i] = jobs.get(i).durationSec();
      if (isElastic[i]) {
        elastic.init(i, jobs.get(i).durationSec() * jobs.get(i).gpus());
      }
    }
    runSec = new long[n];
  }

  /** Job {@code i} starts a run at {@code t} on {@code placement}: returns when the run ends. */
  long start(int i, long t, Placement placement) {
    if (!everStarted[i]) {
      everStarted[i] = true;
      start[i] = t;
    }
    lastStart[i] = t;
    if (isElastic[i]) {
      running[i] = true;
      long endSec = elastic.start(i, t, gpusOf(i, placement));
      runSec[i] += endSec - t;
      end[i] = endSec;
      return endSec;
    }
    long run = runtime(i, placement);
    plannedRun[i] = run;
    runSec[i] += run;
    end[i] = t + run;
    return t + run;
  }

  /**
   * The finish event of job {@code i} is due: whether it is stale, the end of a run that was
   * stopped early and never happens (then it is consumed). A stale event is never later than the
   * job's current end (a restart ends no earlier), so it comes first.
   */
  boolean staleFinish(int i, long t) {
    if (isElastic[i]) {
      return !running[i] || end[i] != t;
    }
    if (staleFinishes[i] > 0) {
      staleFinishes[i]--;
      return true;
    }
    return false;
  }

  /**
   * Job {@code i} finished. If it was signalled, it finished within its grace: nothing to stop (its
   * preemption stays under way until the preemptor starts).
   */
  void finished(int i, long t) {
    stopAt[i] = -1;
    signalledAt[i] = -1;
    if (isElastic[i]) {
      running[i] = false;
      elastic.finished(i, t);
    }
  }

  /** Whether job {@code i} is elastic. */
  boolean elastic(int i) {
    return isElastic[i];
  }

  /** Whether any job is elastic. */
  boolean anyElastic() {
    return elastic != null;
  }

  /** The GPUs job {@code i} holds on {@code placement}. */
  int gpusOf(int i, Placement placement) {
    return isElastic[i]
        ? placement.totalTasks() * specs.get(i).gang().shape().gpus()
        : specs.get(i).totalGpus();
  }

  /**
   * Elastic job {@code i}, running, is resized at {@code t} to {@code placement}: returns its new
   * end (its finish event at the old end becomes stale).
   */
  long resize(int i, long t, Placement placement) {
    long endSec = elastic.resize(i, t, gpusOf(i, placement));
    runSec[i] += endSec - end[i];
    end[i] = endSec;
    return endSec;
  }

  /** Whether job {@code i} has been signalled and is running out its grace. */
  boolean stopping(int i) {
    return stopAt[i] >= 0;
  }

  /** Victim {@code v} is signalled at {@code t}: returns when its grace ends and it stops. */
  long signal(int v, long t, long graceSec) {
    preemptionsSignalled++;
    if (checkpointCostSec > 0) {
      // Preemption by checkpoint: it stops once its checkpoint is written, keeping its work.
      signalledAt[v] = t;
      stopAt[v] = t + checkpointCostSec;
    } else {
      stopAt[v] = t + graceSec;
    }
    return stopAt[v];
  }

  /**
   * A preemption of victim {@code v} at {@code t} was ignored (not running, or already stopping).
   */
  void ignored(int v, Decision.Preempt p, long t) {
    if (preemptionsIgnored++ == 0) {
      firstIgnored =
          "job "
              + p.job().value()
              + " for job "
              + p.preemptor().value()
              + " at t="
              + t
              + (stopAt[v] >= 0 ? ", already stopping since its preemption" : ", not running")
              + " ("
              + p.kind()
              + ": "
              + p.detail()
              + ")";
    }
  }

  /**
   * The stop event of victim {@code v} is due at {@code s}: whether its grace ends now (then it is
   * no longer stopping), or it finished within its grace.
   */
  boolean graceEnds(int v, long s) {
    if (stopAt[v] != s) {
      return false;
    }
    stopAt[v] = -1;
    return true;
  }

  /**
   * Victim {@code v} stops at {@code s} and is requeued. It keeps the progress saved at its last
   * checkpoint (every {@code checkpointEverySec} of run time since it started); the run since then
   * is lost. Returns the GPU-seconds lost.
   */
  double requeue(int v, long s, long checkpointEverySec) {
    long signalled = signalledAt[v];
    signalledAt[v] = -1;
    if (isElastic[v]) {
      return requeueElastic(v, s, checkpointEverySec, signalled);
    }
    long ran = s - lastStart[v];
    long saved =
        signalled >= 0
            ? signalled - lastStart[v]
            : checkpointEverySec > 0 ? ran / checkpointEverySec * checkpointEverySec : 0;
    // Saved run time as work: the same unless the comm model stretched this run.
    long done =
        plannedRun[v] == workLeft[v]
            ? saved
            : (long) Math.floor((double) saved * workLeft[v] / plannedRun[v]);
    workLeft[v] -= done;
    int gpus = specs.get(v).totalGpus();
    double lost = (double) gpus * (ran - saved);
    runSec[v] -= plannedRun[v] - ran;
    end[v] = s;
    staleFinishes[v]++;
    requeued++;
    preemptionLostGpuSeconds += lost;
    preemptionLost[v] += lost;
    return lost;
  }

  private double requeueElastic(int v, long s, long checkpointEverySec, long signalled) {
    long keep =
        signalled >= 0 ? signalled : elastic.lastPeriodicCheckpoint(v, s, checkpointEverySec);
    double lost = elastic.requeue(v, s, keep);
    running[v] = false;
    runSec[v] -= end[v] - s;
    end[v] = s;
    requeued++;
    preemptionLostGpuSeconds += lost;
    preemptionLost[v] += lost;
    return lost;
  }

  /**
   * Job {@code i} is moved at {@code t} to {@code target}: it checkpoints at once (its run so far
   * is kept), and its restart costs {@code costSec} more run time. Returns when the new run ends.
   */
  long migrate(int i, long t, Placement target, long costSec) {
    long ran = t - lastStart[i];
    long done =
        plannedRun[i] == workLeft[i]
            ? ran
            : (long) Math.floor((double) ran * workLeft[i] / plannedRun[i]);
    // The stretch charged at the start for the part of the run that never happens is given back.
    if (plannedRun[i] > workLeft[i] && plannedRun[i] > 0) {
      double unrun = (double) (plannedRun[i] - ran) / plannedRun[i];
      lostGpuSeconds -= unrun * (plannedRun[i] - workLeft[i]) * jobs.get(i).gpus();
    }
    workLeft[i] = Math.max(0, workLeft[i] - done) + costSec;
    runSec[i] -= plannedRun[i] - ran;
    staleFinishes[i]++;
    migrations++;
    if (moved == null) {
      moved = new int[jobs.size()];
    }
    moved[i]++;
    return start(i, t, target);
  }

  int migrations() {
    return migrations;
  }

  /** How many times job {@code i} was moved. */
  int migrations(int i) {
    return moved == null ? 0 : moved[i];
  }

  private long runtime(int i, Placement placement) {
    TraceJob job = jobs.get(i);
    long work = workLeft[i];
    if (commModel.isEmpty()) {
      return work;
    }
    var model = commModel.get();
    TopologyLevel level = spanOf(placement, specs.get(i).gang());
    // Ceiling of the product, not of its rounding error (100 * 4.4000000000000004 is 440).
    double stretched = Math.ceil(work * model.slowdown(level) - 1e-6);
    if (stretched > job.timeLimitSec()) {
      // Stopped at its limit without finishing: all of its GPU time was lost.
      stoppedAtLimit++;
      lostGpuSeconds += (double) job.timeLimitSec() * job.gpus();
      return job.timeLimitSec();
    }
    long run = (long) stretched;
    lostGpuSeconds += (double) (run - work) * job.gpus();
    return run;
  }

  private TopologyLevel spanOf(Placement placement, GangSpec gang) {
    if (placement.nodeCount() == 1) {
      int node = placement.node(0);
      int size = cluster.nvlinkDomainSize(node);
      long mask = placement.gpuMask(0);
      int first = Long.numberOfTrailingZeros(mask) / size;
      int last = (63 - Long.numberOfLeadingZeros(mask)) / size;
      return first == last ? TopologyLevel.NVLINK : TopologyLevel.NODE;
    }
    return cluster.spanOf(placement.nodesUnsafe(), placement.nodeCount());
  }

  boolean everStarted(int i) {
    return everStarted[i];
  }

  /** When job {@code i} ended (its last run's end). */
  long end(int i) {
    return end[i];
  }

  /** Job {@code i}'s total run time over all its runs. */
  long runSec(int i) {
    return runSec[i];
  }

  /** Each job's first start, for the per-job output (the array itself, not a copy). */
  long[] firstStarts() {
    return start;
  }

  /** Each job's end, for the per-job output (the array itself, not a copy). */
  long[] ends() {
    return end;
  }

  /** GPU time lost to the comm model: stretched runs, and whole runs stopped at their limit. */
  double lostGpuSeconds() {
    return lostGpuSeconds;
  }

  int stoppedAtLimit() {
    return stoppedAtLimit;
  }

  int preemptionsSignalled() {
    return preemptionsSignalled;
  }

  int requeued() {
    return requeued;
  }

  int preemptionsIgnored() {
    return preemptionsIgnored;
  }

  /** The first preemption ignored, described; empty if none. */
  String firstIgnored() {
    return firstIgnored;
  }

  /** GPU-seconds job {@code i} held over all its runs. */
  double gpuSeconds(int i) {
    return isElastic[i] ? elastic.usedGpuSec(i) : (double) runSec[i] * jobs.get(i).gpus();
  }

  /** GPU-seconds job {@code i} lost to preemptions (work since its last checkpoint). */
  double preemptionLostGpuSeconds(int i) {
    return preemptionLost[i];
  }

  /** The elastic jobs' progress, or null when no job is elastic. */
  ElasticRuns elasticRuns() {
    return elastic;
  }

  /** GPU time lost by preempted runs since their last checkpoint. */
  double preemptionLostGpuSeconds() {
    return preemptionLostGpuSeconds;
  }
}
