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
import io.kairos.core.sched.preempt.PreemptionHistory;
import io.kairos.core.state.ClusterStore;
import io.kairos.core.state.Reducer;
import io.kairos.core.tenancy.Tenants;
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
 * <p>Loop: take the next instant (the earliest of the next completion, from a 4-ary heap, and the
 * next arrival, from the sorted trace); apply all completions at that instant, then all arrivals;
 * then run one scheduling pass and apply its starts through the same {@link Reducer} the controller
 * uses, scheduling each started job's completion. A pass is skipped when no waiting job could fit
 * in the free GPUs (it could not start anything).
 *
 * <p>With {@link SimOptions#recordSeries()}, a {@link SeriesRecorder} is told of every start,
 * finish and interval between instants, for the report's charts; it changes no decision.
 *
 * <p>A job with a preceding job (SWF's fields 17 and 18, the CSV's {@code depends_on}) does not
 * arrive at its own submit time: it arrives its think time after the preceding job ends, as an
 * event in the same heap (completions at an instant come before arrivals). A preceding job that is
 * not in the trace, was skipped, or comes later in submit order is ignored and counted.
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

  /**
   * Under a tenancy, a pass runs at least this often while jobs wait and others run, so that
   * time-driven decisions (a victim's protection running out, a large gang's wait reaching the
   * starvation limit, fair share decaying) happen without waiting for the next event.
   */
  public static final long PASS_INTERVAL_SEC = 60;

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
    var unknownQueue = new java.util.TreeMap<String, Integer>();
    var tenancy = options.tenancy();
    for (TraceJob t : trace.jobs()) {
      if (t.submitSec() < 0
          || t.durationSec() <= 0
          || t.timeLimitSec() < t.durationSec()
          || t.submitSec() > MAX_TIME_SEC - t.timeLimitSec()
          || t.thinkTimeSec() < 0
          || t.thinkTimeSec() > MAX_TIME_SEC) {
        throw new IllegalArgumentException(
            trace.source()
                + ": job "
                + t.id()
                + ": submit "
                + t.submitSec()
                + " s, duration "
                + t.durationSec()
                + " s, limit "
                + t.timeLimitSec()
                + " s: times must be >= 0"
                + " (duration >= 1, limit >= duration) and submit + limit below 2^40 s, think time "
                + t.thinkTimeSec()
                + " s between 0 and 2^40 s");
      }
      if (t.gpus() > cluster.totalGpus()
          || t.gpus() > GangSpec.MAX_TASKS
          || t.gpusPerNode() > cluster.maxGpusPerNode()) {
        skippedIds.add(t.id());
        continue;
      }
      GangSpec gang =
          t.gpusPerNode() > 0
              ? GangSpec.perNode(t.gpus(), t.gpusPerNode())
              : GangSpec.flexible(t.gpus());
      if (!cluster.canEverHold(gang, "")) {
        skippedIds.add(t.id());
        continue;
      }
      var spec = new JobSpec(t.user(), t.queue(), t.priority(), gang, t.timeLimitSec(), "");
      if (tenancy.isPresent()) {
        var config = tenancy.get().tenancy().config();
        if (config.queue(t.queue()).isEmpty()) {
          unknownQueue.merge(t.queue(), 1, Integer::sum);
          continue;
        }
        if (tenancy.get().schedule()) {
          spec = resolve(spec, config);
        }
      }
      kept.add(t);
      specs.add(spec);
    }
    if (!skippedIds.isEmpty()) {
      notes.add(
          skippedIds.size()
              + " jobs larger than the cluster were skipped (first ids: "
              + skippedIds.subList(0, Math.min(5, skippedIds.size()))
              + ")");
    }
    if (!unknownQueue.isEmpty()) {
      int count = unknownQueue.values().stream().mapToInt(Integer::intValue).sum();
      notes.add(
          count
              + " jobs of queues the tenancy file does not declare were skipped (queues "
              + unknownQueue.keySet().stream().limit(5).toList()
              + (unknownQueue.size() > 5 ? ", ..." : "")
              + ")");
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
      notes.add(
          ignored
              + " jobs name a preceding job that is not in the trace, was skipped or"
              + " comes later: they arrive at their own submit time");
    }
    var loop = new Loop(kept, specs, notes, trace, skippedIds.size(), preceding, ignored);
    SimReport report = loop.run();
    if (tenancy.isPresent() && tenancy.get().aloneRuns() && report.tenancy().isPresent()) {
      report = report.withTenancy(Optional.of(aloneRuns(loop, report.tenancy().get())));
    }
    return report;
  }

  /**
   * The spec under the tenancy: account and priority class from the queue's defaults, the class's
   * priority; a job whose account would be empty (no account, no queue default, no user) is charged
   * to an account named after its queue.
   */
  private static JobSpec resolve(JobSpec spec, io.kairos.core.tenancy.TenancyConfig config) {
    JobSpec resolved = Tenants.resolve(spec, config);
    if (resolved.account().isEmpty()) {
      resolved = resolved.withTenancy(spec.queue(), resolved.priorityClass(), resolved.priority());
    }
    return resolved;
  }

  /**
   * Finish-time fairness: each queue's jobs (those that ran) simulated by themselves, same policy,
   * no tenancy, on whole nodes of the cluster's largest node size adding up to the queue's nominal
   * GPUs (rounded to the nearest node, at least one); jobs too large for that are left out of both
   * means. See {@link TenancyReport}.
   */
  private TenancyReport aloneRuns(Loop loop, TenancyReport shared) {
    TenancyBook book = loop.book;
    int gpusPerNode = cluster.maxGpusPerNode();
    var aloneOptions =
        new SimOptions(
            false, options.commModel(), false, options.seed(), false, options.placement());
    var updated = new ArrayList<TenancyReport.QueueReport>();
    for (int q = 0; q < book.queueNames.size(); q++) {
      var queue = shared.queues().get(q);
      long nominal = book.nominalGpus[q];
      if (nominal <= 0) {
        updated.add(queue);
        continue;
      }
      int nodes = (int) Math.max(1, Math.min(1 << 20, Math.round((double) nominal / gpusPerNode)));
      Cluster alone = Cluster.uniform(nodes, gpusPerNode, 16, 8);
      var jobs = new ArrayList<TraceJob>();
      double sharedJct = 0;
      for (int i = 0; i < loop.n; i++) {
        if (book.queueOf[i] != q || !loop.everStarted[i]) {
          continue;
        }
        TraceJob t = loop.jobs.get(i);
        if (!alone.canEverHold(loop.specs.get(i).gang(), "")) {
          continue;
        }
        jobs.add(t);
        sharedJct += loop.end[i] - loop.arrival[i];
      }
      if (jobs.isEmpty()) {
        updated.add(queue);
        continue;
      }
      var subset =
          new Trace(
              loop.trace.source() + " [" + book.queueNames.get(q) + "]",
              loop.trace.format(),
              jobs,
              jobs.size(),
              0,
              loop.trace.estimatesFromRuntime(),
              List.of());
      SimReport aloneReport =
          new Simulator(alone, nodes + "x" + gpusPerNode, policy, aloneOptions).run(subset);
      double rho =
          aloneReport.meanJctSec() > 0
              ? sharedJct / jobs.size() / aloneReport.meanJctSec()
              : Double.NaN;
      updated.add(queue.withFinishTimeFairness(rho, jobs.size()));
    }
    return shared.withQueues(updated);
  }

  /** The state of one run. */
  private final class Loop {
    final List<TraceJob> jobs;
    final List<JobSpec> specs;
    private final List<String> notes;
    final Trace trace;
    private final int skipped;
    final int n;
    private final ClusterStore store = new ClusterStore(cluster);

    /** Tenancy bookkeeping, or null for a single-tenant run. */
    final TenancyBook book;

    /** Whether the pass schedules by the tenancy (quotas, fair share, preemption). */
    private final boolean tenantPass;

    /** Work left per job, in seconds of its trace duration (less after a checkpointed stop). */
    private final long[] workLeft;

    /** The run length the current run of the job was started with, and when it started. */
    private final long[] plannedRun;

    private final long[] lastStart;

    /** When a preempted job stops (end of its grace), or -1 while it is not being stopped. */
    private final long[] stopAt;

    /** Finish events of runs that were stopped and requeued, still in the heap. */
    private final int[] staleFinishes;

    final boolean[] everStarted;
    private long tickAt = -1;
    private int preemptionsSignalled;
    private int requeued;
    private int preemptionsIgnored;
    private String firstIgnored = "";
    private double preemptionLostGpuSeconds;
    private final SchedulingPass pass = new SchedulingPass(policy, options.placement());
    private final EventQueue finishes = new EventQueue();
    private final long[] start;
    final long[] end;
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
    final long[] arrival;

    private final boolean dependencies;
    private final int dependenciesIgnored;
    private int waitedOnDependency;

    Loop(
        List<TraceJob> jobs,
        List<JobSpec> specs,
        List<String> notes,
        Trace trace,
        int skipped,
        int[] preceding,
        int dependenciesIgnored) {
      this.jobs = jobs;
      this.specs = specs;
      this.notes = notes;
      this.trace = trace;
      this.skipped = skipped;
      this.n = jobs.size();
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
      }
      book =
          options.tenancy().isEmpty()
              ? null
              : TenancyBook.of(
                  options.tenancy().get(),
                  cluster,
                  specs,
                  n == 0 ? 0 : jobs.getFirst().submitSec());
      tenantPass = book != null && book.schedules();
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
      series =
          !options.recordSeries()
              ? null
              : book == null
                  ? new SeriesRecorder(cluster, jobs)
                  : new SeriesRecorder(cluster, jobs, book.quotaGroups(jobs));
      pendingBySize = new int[(int) Math.min(Integer.MAX_VALUE - 8, cluster.totalGpus() + 1)];
      boolean samePriority = jobs.stream().mapToInt(TraceJob::priority).distinct().count() <= 1;
      boolean exact = jobs.stream().allMatch(j -> j.durationSec() == j.timeLimitSec());
      checkReservations =
          options.checkInvariants()
              && options.commModel().isEmpty()
              && exact
              && samePriority
              && policy.order() == JobOrder.ARRIVAL
              && policy.backfill()
              && !tenantPass;
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
        if (tenantPass) {
          book.chargeTo(t);
        }
        // 1. Completions at t, then stops of preempted jobs, then 2. arrivals at t.
        while (!finishes.isEmpty() && finishes.peekTime() == t) {
          int i = finishes.peekPayload();
          int kind = finishes.peekKind();
          finishes.poll();
          if (kind == EventQueue.ARRIVAL) {
            submit(i, t);
            continue;
          }
          if (kind == EventQueue.TICK) {
            continue;
          }
          if (kind == EventQueue.STOP) {
            stop(i, t);
            continue;
          }
          if (staleFinishes[i] > 0) {
            // The end of a run that was stopped early: it never happens. A stale event is never
            // later than the job's current end (a restart ends no earlier), so it comes first.
            staleFinishes[i]--;
            continue;
          }
          if (book != null) {
            book.stopped(i, specs.get(i).totalGpus(), true);
            // Finished within its grace: nothing to stop (its preemption stays under way until
            // the preemptor starts).
            stopAt[i] = -1;
            book.victimDone(jobId(i));
            book.histories.remove(jobId(i));
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
        // 3. One pass, if anything could start. Under a tenancy the pass may also preempt, and
        // what it decides depends on time (fair share, protection, starvation): always run it,
        // and while jobs wait and run, at least every PASS_INTERVAL_SEC.
        if (tenantPass) {
          if (store.pendingCount() > 0) {
            runPass(t);
          }
          if (store.pendingCount() > 0 && store.runningCount() > 0 && tickAt <= t) {
            tickAt = t + PASS_INTERVAL_SEC;
            finishes.add(tickAt, EventQueue.TICK, 0);
          }
        } else if (store.pendingCount() > 0 && minPendingGpus <= store.freeGpus()) {
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
        if (book != null && nextT != Long.MAX_VALUE) {
          book.interval(t, nextT);
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
      if (book != null) {
        book.arrived(i, specs.get(i).totalGpus());
      }
      arrived(i, t);
    }

    /**
     * Marks the next pass as needed unless it provably starts nothing. With a static order (keys do
     * not depend on time) and no completion since the last pass, jobs that waited then still wait:
     * free GPUs are the same, reservations start at the same running jobs' limits, and a backfill
     * candidate only ends later as time passes. A new arrival changes that only if it is ordered
     * before some waiting job (it could take a reservation) or fits in the free GPUs.
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
      if (dependencies
          || !order.isStatic()
          || !last
          || specs.get(i).totalGpus() <= store.freeGpus()) {
        dirty = true;
      }
    }

    private void runPass(long t) {
      long before = nanoTime == null ? 0 : nanoTime.getAsLong();
      if (tenantPass) {
        book.expirePreemptions(t);
      }
      PassResult result =
          pass.run(
              new PassInput(
                  store.snapshot(),
                  t,
                  options.seed() * 1_000_003L + passes,
                  tenantPass ? book.tenants() : Tenants.none()));
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
        if (book != null) {
          book.started(i, specs.get(i).totalGpus());
          book.preemptorStarted(s.job(), v -> stopAt[index(v)] >= 0);
        }
        if (!everStarted[i]) {
          everStarted[i] = true;
          start[i] = t;
        }
        lastStart[i] = t;
        if (checkReservations && firstReservedStart[i] != Long.MAX_VALUE) {
          InvariantChecker.checkReservationKept(jobs.get(i).id(), firstReservedStart[i], t);
        }
        long run = runtime(i, s.placement());
        plannedRun[i] = run;
        runSec[i] += run;
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
      for (Decision.Preempt p : result.preemptions()) {
        preempt(p, t);
      }
    }

    /**
     * A victim is signalled at {@code t}: it runs on for the grace period, then stops ({@link
     * #stop}). The pass sees the preemption in {@code preempting} until the preemptor starts, or at
     * most {@code 2 x grace + 60 s} (see {@link TenancyBook#expirePreemptions}). The victim's
     * preemption history records {@code t}.
     */
    private void preempt(Decision.Preempt p, long t) {
      int v = index(p.job());
      if (!tenantPass || stopAt[v] >= 0 || store.running(p.job()).isEmpty()) {
        // Not running, or already being stopped: nothing to do (counted in a note).
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
        return;
      }
      preemptionsSignalled++;
      stopAt[v] = t + book.settings.graceSec();
      finishes.add(stopAt[v], EventQueue.STOP, v);
      book.preemptionStarted(p.job(), p.preemptor(), t);
      var protection = book.settings.protection();
      book.histories.merge(
          p.job(),
          protection.record(PreemptionHistory.NONE, t),
          (old, _) -> protection.record(old, t));
    }

    /**
     * The grace of victim {@code v} ends at {@code s}: it stops and is requeued. It keeps the
     * progress saved at its last checkpoint (every {@code checkpointEverySec} of run time since it
     * started); the run since then is lost.
     */
    private void stop(int v, long s) {
      if (stopAt[v] != s) {
        return; // it finished within its grace
      }
      stopAt[v] = -1;
      JobId id = jobId(v);
      var running = store.running(id).orElseThrow();
      long ran = s - lastStart[v];
      long every = book.sim.checkpointEverySec();
      long saved = every > 0 ? ran / every * every : 0;
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
      if (series != null) {
        series.finished(v, s, running.placement(), gpus);
      }
      mustApply(new Command.RequeueJob(s, id));
      addPending(gpus);
      book.stopped(v, gpus, false);
      book.preempted(v, lost);
      book.victimDone(id);
      requeued++;
      preemptionLostGpuSeconds += lost;
      dirty = true;
    }

    private long runtime(int i, Placement placement) {
      TraceJob job = jobs.get(i);
      long work = workLeft[i];
      if (options.commModel().isEmpty()) {
        return work;
      }
      var model = options.commModel().get();
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

    /**
     * A job's wait: the time between its arrival and its end that it did not run (so a requeued
     * job's second wait counts too); without preemption, its start minus its arrival.
     */
    private long waitOf(int i) {
      return end[i] - arrival[i] - runSec[i];
    }

    private SimReport report() {
      // Jobs that never started (under a tenancy whose quotas can never admit them) are left out.
      int ran = 0;
      for (int i = 0; i < n; i++) {
        ran += everStarted[i] ? 1 : 0;
      }
      long[] waits = new long[ran];
      long[] jcts = new long[ran];
      double waitSum = 0;
      double jctSum = 0;
      double slowdownSum = 0;
      double busyGpuSeconds = 0;
      long firstSubmit = n == 0 ? 0 : jobs.getFirst().submitSec();
      long lastEnd = firstSubmit;
      for (int i = 0, k = 0; i < n; i++) {
        if (!everStarted[i]) {
          continue;
        }
        TraceJob job = jobs.get(i);
        long wait = waitOf(i);
        long run = runSec[i];
        waits[k] = wait;
        jcts[k] = wait + run;
        k++;
        waitSum += wait;
        jctSum += wait + run;
        slowdownSum += Math.max(1.0, (double) (wait + run) / Math.max(run, 10));
        busyGpuSeconds += (double) run * job.gpus();
        lastEnd = Math.max(lastEnd, end[i]);
      }
      if (ran < n) {
        notes.add(
            (n - ran)
                + " jobs never started: their queue's quota can never admit them (left out"
                + " of the figures)");
      }
      if (preemptionsIgnored > 0) {
        notes.add(
            preemptionsIgnored
                + " preemptions named a job that was not running or already"
                + " stopping, and were ignored (first: "
                + firstIgnored
                + ")");
      }
      if (book != null && book.expired > 0) {
        notes.add(
            book.expired
                + " preemptions ended without their preemptor starting within 2 x grace"
                + " + 60 s (first: "
                + book.firstExpired
                + ", job numbers in trace order)");
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
          ran == 0 ? 0 : waitSum / ran,
          percentile(waits, 50),
          percentile(waits, 95),
          percentile(waits, 99),
          ran == 0 ? 0 : waits[ran - 1],
          ran == 0 ? 0 : jctSum / ran,
          percentile(jcts, 95),
          ran == 0 ? 0 : slowdownSum / ran,
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
          dependenciesIgnored,
          book == null ? Optional.empty() : Optional.of(tenancyReport(n - ran)));
    }

    /** Per-queue figures and fairness (finish-time fairness is added by the alone runs). */
    private TenancyReport tenancyReport(int neverStarted) {
      int queues = book.queueNames.size();
      int[] count = new int[queues];
      for (int i = 0; i < n; i++) {
        count[book.queueOf[i]] += everStarted[i] ? 1 : 0;
      }
      long[][] waits = new long[queues][];
      for (int q = 0; q < queues; q++) {
        waits[q] = new long[count[q]];
      }
      int[] filled = new int[queues];
      double[] waitSum = new double[queues];
      double[] jctSum = new double[queues];
      double[] gpuSec = new double[queues];
      int bigGpus = book.settings.starvationMinGpus() > 0 ? book.settings.starvationMinGpus() : 64;
      long bigMaxWait = 0;
      for (int i = 0; i < n; i++) {
        if (!everStarted[i]) {
          continue;
        }
        int q = book.queueOf[i];
        long wait = waitOf(i);
        waits[q][filled[q]++] = wait;
        waitSum[q] += wait;
        jctSum[q] += end[i] - arrival[i];
        gpuSec[q] += (double) runSec[i] * specs.get(i).totalGpus();
        if (specs.get(i).totalGpus() >= bigGpus) {
          bigMaxWait = Math.max(bigMaxWait, wait);
        }
      }
      var reports = new ArrayList<TenancyReport.QueueReport>(queues);
      double[] served = new double[queues];
      for (int q = 0; q < queues; q++) {
        Arrays.sort(waits[q]);
        served[q] =
            book.entitledGpuSec[q] > 0 ? book.servedGpuSec[q] / book.entitledGpuSec[q] : Double.NaN;
        int c = count[q];
        reports.add(
            new TenancyReport.QueueReport(
                book.queueNames.get(q),
                book.nominalGpus[q],
                (double) book.nominalGpus[q] / cluster.totalGpus(),
                c,
                gpuSec[q] / 3600.0,
                c == 0 ? 0 : waitSum[q] / c,
                percentile(waits[q], 99),
                c == 0 ? 0 : jctSum[q] / c,
                book.preemptions[q],
                book.lostGpuSec[q] / 3600.0,
                served[q],
                Double.NaN,
                0));
      }
      return new TenancyReport(
          tenantPass,
          book.sim.checkpointEverySec(),
          preemptionsSignalled,
          requeued,
          preemptionLostGpuSeconds / 3600.0,
          TenancyReport.jain(served),
          "",
          Double.NaN,
          bigGpus,
          bigMaxWait,
          neverStarted,
          reports,
          accountReports());
    }

    /** Per account: the same figures as per queue, over the jobs charged to it. */
    private List<TenancyReport.AccountReport> accountReports() {
      int accounts = book.accountNames.size();
      int[] count = new int[accounts];
      boolean[][] inQueue = new boolean[accounts][book.queueNames.size()];
      for (int i = 0; i < n; i++) {
        int a = book.reportAccountOf[i];
        count[a] += everStarted[i] ? 1 : 0;
        inQueue[a][book.queueOf[i]] = true;
      }
      long[][] waits = new long[accounts][];
      for (int a = 0; a < accounts; a++) {
        waits[a] = new long[count[a]];
      }
      int[] filled = new int[accounts];
      double[] waitSum = new double[accounts];
      double[] jctSum = new double[accounts];
      double[] gpuSec = new double[accounts];
      for (int i = 0; i < n; i++) {
        if (!everStarted[i]) {
          continue;
        }
        int a = book.reportAccountOf[i];
        long wait = waitOf(i);
        waits[a][filled[a]++] = wait;
        waitSum[a] += wait;
        jctSum[a] += end[i] - arrival[i];
        gpuSec[a] += (double) runSec[i] * specs.get(i).totalGpus();
      }
      double[] factors = book.finalFairShareFactors();
      var reports = new ArrayList<TenancyReport.AccountReport>(accounts);
      for (int a = 0; a < accounts; a++) {
        Arrays.sort(waits[a]);
        var queues = new ArrayList<String>();
        for (int q = 0; q < book.queueNames.size(); q++) {
          if (inQueue[a][q]) {
            queues.add(book.queueNames.get(q));
          }
        }
        int c = count[a];
        reports.add(
            new TenancyReport.AccountReport(
                book.accountNames.get(a),
                queues,
                c,
                gpuSec[a] / 3600.0,
                c == 0 ? 0 : waitSum[a] / c,
                percentile(waits[a], 99),
                c == 0 ? 0 : jctSum[a] / c,
                book.accountPreemptions[a],
                book.accountLostGpuSec[a] / 3600.0,
                factors[a]));
      }
      return reports;
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
