package io.kairos.sim;

import io.kairos.core.command.Applied;
import io.kairos.core.command.Command;
import io.kairos.core.invariant.InvariantChecker;
import io.kairos.core.model.Cluster;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.model.TopologyLevel;
import io.kairos.core.sched.Decision;
import io.kairos.core.sched.PassInput;
import io.kairos.core.sched.PassResult;
import io.kairos.core.sched.Policy;
import io.kairos.core.sched.SchedulingPass;
import io.kairos.core.sched.order.JobOrder;
import io.kairos.core.state.ClusterStore;
import io.kairos.core.state.Reducer;
import io.kairos.sim.trace.Trace;
import io.kairos.sim.trace.TraceJob;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Replays a trace through the scheduling core on a virtual clock.
 *
 * <p>Loop: take the next instant (the earliest of the next completion, from a 4-ary heap, and
 * the next arrival, from the sorted trace); apply all completions at that instant, then all
 * arrivals; then run one scheduling pass and apply its starts through the same {@link Reducer}
 * the controller uses, scheduling each started job's completion. A pass is skipped when no
 * waiting job could fit in the free GPUs (it could not start anything).
 *
 * <p>With {@link SimOptions#recordSeries()}, a {@link SeriesRecorder} is told of every start,
 * finish and interval between instants, for the report's charts; it changes no decision.
 *
 * <p>A job with a preceding job (SWF's fields 17 and 18, the CSV's {@code depends_on}) does not
 * arrive at its own submit time: it arrives its think time after the preceding job ends, as an
 * event in the same heap (completions at an instant come before arrivals). A preceding job that
 * is not in the trace, was skipped, or comes later in submit order is ignored and counted.
 *
 * <p>Deterministic and single-threaded. The only outside input is an optional nanosecond source
 * used to time passes, which never influences a decision.
 */
public final class Simulator {
  /** Told how far the simulation has come; may be called often, must be cheap. */
  public interface Progress {
    void update(long finished, long total);
  }

  /** Simulated times stay below 2^40 s (35,000 years), far from overflow in the event keys. */
  public static final long MAX_TIME_SEC = 1L << 40;

  private final Cluster cluster;
  private final String clusterName;
  private final Policy policy;
  private final SimOptions options;
  private final LongSupplier nanoTime;
  private final Progress progress;

  public Simulator(
      Cluster cluster,
      String clusterName,
      Policy policy,
      SimOptions options,
      LongSupplier nanoTime,
      Progress progress) {
    this.cluster = cluster;
    this.clusterName = clusterName;
    this.policy = policy;
    this.options = options;
    this.nanoTime = nanoTime;
    this.progress = progress;
  }

  public Simulator(Cluster cluster, String clusterName, Policy policy, SimOptions options) {
    this(cluster, clusterName, policy, options, null, null);
  }

  public SimReport run(Trace trace) {
    // Jobs that can never fit are reported and skipped.
    var notes = new ArrayList<>(trace.notes());
    var kept = new ArrayList<TraceJob>(trace.jobs().size());
    var specs = new ArrayList<JobSpec>(trace.jobs().size());
    var skippedIds = new ArrayList<Long>();
    for (TraceJob t : trace.jobs()) {
      if (t.submitSec() < 0
          || t.durationSec() <= 0
          || t.timeLimitSec() < t.durationSec()
          || t.submitSec() > MAX_TIME_SEC - t.timeLimitSec()
          || t.thinkTimeSec() < 0
          || t.thinkTimeSec() > MAX_TIME_SEC) {
        throw new IllegalArgumentException(
            trace.source() + ": job " + t.id() + ": submit " + t.submitSec() + " s, duration "
                + t.durationSec() + " s, limit " + t.timeLimitSec() + " s: times must be >= 0"
                + " (duration >= 1, limit >= duration) and submit + limit below 2^40 s, think time "
                + t.thinkTimeSec() + " s between 0 and 2^40 s");
      }
      if (t.gpus() > cluster.totalGpus()
          || t.gpus() > GangSpec.MAX_TASKS
          || t.gpusPerNode() > cluster.maxGpusPerNode()) {
        skippedIds.add(t.id());
        continue;
      }
      GangSpec gang =
          t.gpusPerNode() > 0 ? GangSpec.perNode(t.gpus(), t.gpusPerNode()) : GangSpec.flexible(
              t.gpus());
      if (!cluster.canEverHold(gang, "")) {
        skippedIds.add(t.id());
        continue;
      }
      kept.add(t);
      specs.add(new JobSpec(t.user(), t.queue(), t.priority(), gang, t.timeLimitSec(), ""));
    }
    if (!skippedIds.isEmpty()) {
      notes.add(
          skippedIds.size() + " jobs larger than the cluster were skipped (first ids: "
              + skippedIds.subList(0, Math.min(5, skippedIds.size())) + ")");
    }
    // Preceding jobs, by index in submit order; only an earlier job can be waited for.
    var indexOf = new java.util.HashMap<Long, Integer>();
    for (int i = 0; i < kept.size(); i++) {
      indexOf.put(kept.get(i).id(), i);
    }
    int[] preceding = new int[kept.size()];
    int ignored = 0;
    for (int i = 0; i < kept.size(); i++) {
      long p = kept.get(i).precedingJobId();
      Integer j = p > 0 ? indexOf.get(p) : null;
      preceding[i] = j != null && j < i ? j : -1;
      ignored += p > 0 && preceding[i] < 0 ? 1 : 0;
    }
    if (ignored > 0) {
      notes.add(ignored + " jobs name a preceding job that is not in the trace, was skipped or"
          + " comes later: they arrive at their own submit time");
    }
    return new Loop(kept, specs, notes, trace, skippedIds.size(), preceding, ignored).run();
  }

  /** The state of one run. */
  private final class Loop {
    private final List<TraceJob> jobs;
    private final List<JobSpec> specs;
    private final List<String> notes;
    private final Trace trace;
    private final int skipped;
    private final int n;
    private final ClusterStore store = new ClusterStore(cluster);
    private final SchedulingPass pass = new SchedulingPass(policy, options.placement());
    private final EventQueue finishes = new EventQueue();
    private final long[] start;
    private final long[] end;
    private final long[] runSec;
    private final long[] firstReservedStart;
    private final int[][] nodes;
    private final int[] pendingBySize;
    private int minPendingGpus = Integer.MAX_VALUE;
    // Whether the next pass could start something a skipped pass would not (see needsPass).
    private boolean dirty = true;
    private long lastPriority = Long.MIN_VALUE;
    private long lastKey = Long.MIN_VALUE;
    private final boolean checkReservations;
    private long[] passNanos = new long[1024];
    private int passes;
    private double fragGpuSeconds;
    private long fragSeconds;
    private double lostGpuSeconds;
    private int stoppedAtLimit;
    private final SeriesRecorder series;
    /** For each job, the index of the job it waits for, or -1. */
    private final int[] preceding;
    /** The jobs waiting for job i, as a list: firstDependent[i], then nextDependent[...]. */
    private final int[] firstDependent;
    private final int[] nextDependent;
    /** When each job arrived: its submit time, or its preceding job's end plus think time. */
    private final long[] arrival;
    private final boolean dependencies;
    private final int dependenciesIgnored;
    private int waitedOnDependency;

    Loop(List<TraceJob> jobs, List<JobSpec> specs, List<String> notes, Trace trace, int skipped,
        int[] preceding, int dependenciesIgnored) {
      this.jobs = jobs;
      this.specs = specs;
      this.notes = notes;
      this.trace = trace;
      this.skipped = skipped;
      this.n = jobs.size();
      start = new long[n];
      end = new long[n];
      runSec = new long[n];
      firstReservedStart = new long[n];
      Arrays.fill(firstReservedStart, Long.MAX_VALUE);
      this.preceding = preceding;
      this.dependenciesIgnored = dependenciesIgnored;
      firstDependent = new int[n];
      nextDependent = new int[n];
      arrival = new long[n];
      Arrays.fill(firstDependent, -1);
      boolean any = false;
      for (int i = n - 1; i >= 0; i--) {
        arrival[i] = jobs.get(i).submitSec();
        if (preceding[i] >= 0) {
          nextDependent[i] = firstDependent[preceding[i]];
          firstDependent[preceding[i]] = i;
          any = true;
        }
      }
      dependencies = any;
      nodes = options.recordJobs() ? new int[n][] : null;
      series = options.recordSeries() ? new SeriesRecorder(cluster, jobs) : null;
      pendingBySize = new int[(int) Math.min(Integer.MAX_VALUE - 8, cluster.totalGpus() + 1)];
      boolean samePriority = jobs.stream().mapToInt(TraceJob::priority).distinct().count() <= 1;
      boolean exact = jobs.stream().allMatch(j -> j.durationSec() == j.timeLimitSec());
      checkReservations =
          options.checkInvariants()
              && options.commModel().isEmpty()
              && exact
              && samePriority
              && policy.order() == JobOrder.ARRIVAL
              && policy.backfill();
    }

    SimReport run() {
      int next = skipDeferred(0);
      long finished = 0;
      long progressStep = Math.max(1, n / 200);
      while (next < n || !finishes.isEmpty()) {
        long t =
            finishes.isEmpty()
                ? jobs.get(next).submitSec()
                : next < n
                    ? Math.min(finishes.peekTime(), jobs.get(next).submitSec())
                    : finishes.peekTime();
        // 1. Completions at t, then 2. arrivals at t.
        while (!finishes.isEmpty() && finishes.peekTime() == t) {
          int i = finishes.peekPayload();
          int kind = finishes.peekKind();
          finishes.poll();
          if (kind == EventQueue.ARRIVAL) {
            submit(i, t);
            continue;
          }
          if (series != null) {
            series.finished(
                i, t, store.running(jobId(i)).orElseThrow().placement(), specs.get(i).totalGpus());
          }
          mustApply(new Command.FinishJob(t, jobId(i), 0));
          for (int d = firstDependent[i]; d >= 0; d = nextDependent[d]) {
            finishes.add(t + jobs.get(d).thinkTimeSec(), EventQueue.ARRIVAL, d);
          }
          dirty = true;
          finished++;
          if (progress != null && finished % progressStep == 0) {
            progress.update(finished, n);
          }
        }
        while (next < n && jobs.get(next).submitSec() == t) {
          submit(next, t);
          next = skipDeferred(next + 1);
        }
        // 3. One pass, if anything could start.
        if (store.pendingCount() > 0 && minPendingGpus <= store.freeGpus()) {
          if (dirty || options.everyPass()) {
            runPass(t);
          }
        }
        dirty = false;
        if (options.checkInvariants()) {
          InvariantChecker.checkStore(store);
        }
        // Fragmentation: free GPUs while a waiting job would fit them in total, until the next
        // instant.
        long nextT =
            Math.min(
                finishes.isEmpty() ? Long.MAX_VALUE : finishes.peekTime(),
                next < n ? jobs.get(next).submitSec() : Long.MAX_VALUE);
        if (series != null && nextT != Long.MAX_VALUE) {
          series.interval(t, nextT, cluster.totalGpus() - store.freeGpus());
        }
        if (nextT != Long.MAX_VALUE
            && store.pendingCount() > 0
            && minPendingGpus <= store.freeGpus()) {
          fragGpuSeconds += (double) store.freeGpus() * (nextT - t);
          fragSeconds += nextT - t;
        }
      }
      if (progress != null) {
        progress.update(n, n);
      }
      return report();
    }

    /** The first job from {@code i} on that arrives at its own submit time. */
    private int skipDeferred(int i) {
      while (i < n && preceding[i] >= 0) {
        i++;
      }
      return i;
    }

    private void submit(int i, long t) {
      arrival[i] = t;
      if (preceding[i] >= 0) {
        waitedOnDependency++;
      }
      mustApply(new Command.SubmitJob(t, new Job(jobId(i), specs.get(i), t)));
      addPending(specs.get(i).totalGpus());
      arrived(i, t);
    }

    /**
     * Marks the next pass as needed unless it provably starts nothing. With a static order (keys
     * do not depend on time) and no completion since the last pass, jobs that waited then still
     * wait: free GPUs are the same, reservations start at the same running jobs' limits, and a
     * backfill candidate only ends later as time passes. A new arrival changes that only if it
     * is ordered before some waiting job (it could take a reservation) or fits in the free GPUs.
     */
    private void arrived(int i, long t) {
      var order = policy.order();
      TraceJob job = jobs.get(i);
      long priority = -job.priority();
      long key = order.key(t, job.timeLimitSec(), job.gpus(), t);
      // Job ids grow with arrival, so a (priority, key) at or after every earlier arrival's
      // sorts after every waiting job.
      boolean last = priority > lastPriority || (priority == lastPriority && key >= lastKey);
      if (last) {
        lastPriority = priority;
        lastKey = key;
      }
      // A job that waited for another arrives out of id order: always look again.
      if (dependencies || !order.isStatic() || !last
          || specs.get(i).totalGpus() <= store.freeGpus()) {
        dirty = true;
      }
    }

    private void runPass(long t) {
      long before = nanoTime == null ? 0 : nanoTime.getAsLong();
      PassResult result =
          pass.run(new PassInput(store.snapshot(), t, options.seed() * 1_000_003L + passes));
      if (nanoTime != null) {
        if (passes == passNanos.length) {
          passNanos = Arrays.copyOf(passNanos, passes * 2);
        }
        passNanos[passes] = nanoTime.getAsLong() - before;
      }
      passes++;
      for (Decision.Start s : result.starts()) {
        int i = index(s.job());
        mustApply(new Command.StartJob(t, s.job(), s.placement()));
        if (series != null) {
          series.started(i, t, s.placement(), specs.get(i).totalGpus());
        }
        removePending(specs.get(i).totalGpus());
        start[i] = t;
        if (checkReservations && firstReservedStart[i] != Long.MAX_VALUE) {
          InvariantChecker.checkReservationKept(jobs.get(i).id(), firstReservedStart[i], t);
        }
        long run = runtime(i, s.placement());
        runSec[i] = run;
        end[i] = t + run;
        if (nodes != null) {
          nodes[i] = s.placement().nodes();
        }
        finishes.add(t + run, EventQueue.FINISH, i);
      }
      if (checkReservations && !result.reservations().isEmpty()) {
        // The head's reservation (the first of the pass) is the promise kept across passes.
        Decision.Reserve head = result.reservations().getFirst();
        int i = index(head.job());
        firstReservedStart[i] = Math.min(firstReservedStart[i], head.startSec());
      }
    }

    private long runtime(int i, Placement placement) {
      TraceJob job = jobs.get(i);
      if (options.commModel().isEmpty()) {
        return job.durationSec();
      }
      var model = options.commModel().get();
      TopologyLevel level = spanOf(placement, specs.get(i).gang());
      // Ceiling of the product, not of its rounding error (100 * 4.4000000000000004 is 440).
      double stretched = Math.ceil(job.durationSec() * model.slowdown(level) - 1e-6);
      if (stretched > job.timeLimitSec()) {
        // Stopped at its limit without finishing: all of its GPU time was lost.
        stoppedAtLimit++;
        lostGpuSeconds += (double) job.timeLimitSec() * job.gpus();
        return job.timeLimitSec();
      }
      long run = (long) stretched;
      lostGpuSeconds += (double) (run - job.durationSec()) * job.gpus();
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

    private void mustApply(Command command) {
      Applied applied = Reducer.apply(store, command);
      if (applied instanceof Applied.Refused(var reason)) {
        throw new IllegalStateException("simulator: " + command + " refused: " + reason);
      }
    }

    private void addPending(int gpus) {
      pendingBySize[gpus]++;
      minPendingGpus = Math.min(minPendingGpus, gpus);
    }

    private void removePending(int gpus) {
      pendingBySize[gpus]--;
      if (gpus == minPendingGpus && pendingBySize[gpus] == 0) {
        int g = gpus;
        while (g < pendingBySize.length && pendingBySize[g] == 0) {
          g++;
        }
        minPendingGpus = g < pendingBySize.length ? g : Integer.MAX_VALUE;
      }
    }

    private static JobId jobId(int index) {
      return new JobId(index + 1L);
    }

    private static int index(JobId id) {
      return (int) (id.value() - 1);
    }

    private SimReport report() {
      long[] waits = new long[n];
      long[] jcts = new long[n];
      double waitSum = 0;
      double jctSum = 0;
      double slowdownSum = 0;
      double busyGpuSeconds = 0;
      long firstSubmit = n == 0 ? 0 : jobs.getFirst().submitSec();
      long lastEnd = firstSubmit;
      for (int i = 0; i < n; i++) {
        TraceJob job = jobs.get(i);
        long wait = start[i] - arrival[i];
        long run = runSec[i];
        waits[i] = wait;
        jcts[i] = wait + run;
        waitSum += wait;
        jctSum += wait + run;
        slowdownSum += Math.max(1.0, (double) (wait + run) / Math.max(run, 10));
        busyGpuSeconds += (double) run * job.gpus();
        lastEnd = Math.max(lastEnd, end[i]);
      }
      Arrays.sort(waits);
      Arrays.sort(jcts);
      long makespan = lastEnd - firstSubmit;
      long[] nanos = Arrays.copyOf(passNanos, nanoTime == null ? 0 : passes);
      Arrays.sort(nanos);
      Optional<SimJobs> perJob = Optional.empty();
      if (nodes != null) {
        long[] ids = new long[n];
        long[] submits = new long[n];
        for (int i = 0; i < n; i++) {
          ids[i] = jobs.get(i).id();
          submits[i] = arrival[i];
        }
        perJob = Optional.of(new SimJobs(ids, submits, start, end, nodes));
      }
      return new SimReport(
          policy.name(),
          trace.source(),
          clusterName,
          cluster.totalGpus(),
          n,
          skipped,
          trace.estimatesFromRuntime(),
          List.copyOf(notes),
          makespan,
          n == 0 ? 0 : waitSum / n,
          percentile(waits, 50),
          percentile(waits, 95),
          percentile(waits, 99),
          n == 0 ? 0 : waits[n - 1],
          n == 0 ? 0 : jctSum / n,
          percentile(jcts, 95),
          n == 0 ? 0 : slowdownSum / n,
          makespan == 0 ? 0 : busyGpuSeconds / ((double) cluster.totalGpus() * makespan),
          fragSeconds == 0 ? 0 : fragGpuSeconds / fragSeconds,
          passes,
          options.commModel().isPresent(),
          lostGpuSeconds / 3600.0,
          stoppedAtLimit,
          perJob,
          0,
          nanos.length == 0 ? 0 : percentile(nanos, 50) / 1e6,
          nanos.length == 0 ? 0 : percentile(nanos, 99) / 1e6,
          series == null ? Optional.empty() : Optional.of(series.finish(lastEnd, waits)),
          waitedOnDependency,
          dependenciesIgnored);
    }
  }

  /** Nearest-rank percentile of a sorted array. */
  static long percentile(long[] sorted, int p) {
    if (sorted.length == 0) {
      return 0;
    }
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }
}
