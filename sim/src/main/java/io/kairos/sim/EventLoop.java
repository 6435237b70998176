package io.kairos.sim;

import io.kairos.core.command.Applied;
import io.kairos.core.command.Command;
import io.kairos.core.invariant.InvariantChecker;
import io.kairos.core.model.Cluster;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.sched.Decision;
import io.kairos.core.sched.PassInput;
import io.kairos.core.sched.PassResult;
import io.kairos.core.sched.Policy;
import io.kairos.core.sched.SchedulingPass;
import io.kairos.core.sched.order.JobOrder;
import io.kairos.core.state.ClusterStore;
import io.kairos.core.state.Reducer;
import io.kairos.core.tenancy.PreemptionBook;
import io.kairos.core.tenancy.Tenants;
import io.kairos.sim.trace.TraceJob;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * The event loop of one run (see {@link Simulator} for the order of events and passes).
 *
 * <p>State it owns: the {@link ClusterStore} (it is its single writer, through the {@link
 * Reducer}), the scheduling pass and the count of passes run (part of each pass's seed), the event
 * queue, the next job to arrive at its own submit time, the sizes of the waiting jobs and the
 * smallest of them, whether the next pass could start something a skipped pass would not ({@code
 * dirty}, with the last arrival's order key), when the next pass tick is due, and the reservations
 * promised to jobs (when it checks they are kept). It tells the {@link JobRuns}, {@link
 * Dependencies}, the run's {@link RunTenancy} (its neutral form when there is none) and {@link
 * ReportBuilder} of every event.
 */
final class EventLoop {
  private final Policy policy;
  private final SimOptions options;

  /** A nanosecond source to time passes, or null; it never influences a decision. */
  private final LongSupplier nanoTime;

  private final Simulator.Progress progress;
  private final List<TraceJob> jobs;
  private final List<JobSpec> specs;
  private final int n;
  private final ClusterStore store;

  /** Tenancy bookkeeping; {@link RunTenancy#NONE} for a single-tenant run. */
  private final RunTenancy tenancy;

  /** Whether the pass schedules by the tenancy (quotas, fair share, preemption). */
  private final boolean tenantPass;

  private final JobRuns runs;
  private final SimMigrations migrations;
  private final Dependencies dependencies;
  private final ReportBuilder report;
  private final SchedulingPass pass;
  private final EventQueue events = new EventQueue();

  /** The jobs as the core's preemption rules ask about them: from the store and the runs. */
  private final PreemptionBook.Jobs jobStates =
      new PreemptionBook.Jobs() {
        @Override
        public boolean running(JobId job) {
          return store.running(job).isPresent() && !runs.stopping(index(job));
        }

        @Override
        public boolean stopping(JobId job) {
          return runs.stopping(index(job));
        }

        @Override
        public boolean waiting(JobId job) {
          return store.pending(job).isPresent();
        }
      };

  /** Waiting jobs by GPU count, and the smallest count waiting (MAX_VALUE when none). */
  private final int[] pendingBySize;

  private int minPendingGpus = Integer.MAX_VALUE;

  // Whether the next pass could start something a skipped pass would not (see arrived).
  private boolean dirty = true;
  private long lastPriority = Long.MIN_VALUE;
  private long lastKey = Long.MIN_VALUE;
  private long tickAt = -1;
  private int passes;

  /** Whether to check that reserved heads start no later than their first reservation. */
  private final boolean checkReservations;

  private final long[] firstReservedStart;

  /** Start predictions against real starts ({@link SimOptions#recordPredictions()}), or null. */
  private final StartPredictions predictions;

  /** The tenancy of the last pass, for forecasts between passes. */
  private Tenants lastTenants = Tenants.none();

  /** Whether any job is elastic (then passes also run to grow and shrink them). */
  private final boolean elastic;

  /** Whether this instant's pass shrank a job for a waiting one (it may start next second). */
  private boolean shrank;

  private int resizesRefused;
  private String firstRefused = "";

  EventLoop(
      Cluster cluster,
      Policy policy,
      SimOptions options,
      LongSupplier nanoTime,
      Simulator.Progress progress,
      List<TraceJob> jobs,
      List<JobSpec> specs,
      RunTenancy tenancy,
      JobRuns runs,
      Dependencies dependencies,
      ReportBuilder report) {
    this.policy = policy;
    this.options = options;
    this.nanoTime = nanoTime;
    this.progress = progress;
    this.jobs = jobs;
    this.specs = specs;
    this.n = jobs.size();
    this.store = new ClusterStore(cluster);
    this.tenancy = tenancy;
    this.tenantPass = tenancy.schedules();
    this.runs = runs;
    this.migrations = new SimMigrations(options.migration());
    this.dependencies = dependencies;
    this.report = report;
    this.pass = new SchedulingPass(policy, options.placement());
    firstReservedStart = new long[n];
    predictions = options.recordPredictions() ? new StartPredictions(n) : null;
    Arrays.fill(firstReservedStart, Long.MAX_VALUE);
    pendingBySize = new int[(int) Math.min(Integer.MAX_VALUE - 8, cluster.totalGpus() + 1)];
    boolean samePriority = jobs.stream().mapToInt(TraceJob::priority).distinct().count() <= 1;
    boolean exact = jobs.stream().allMatch(j -> j.durationSec() == j.timeLimitSec());
    elastic = runs.anyElastic();
    checkReservations =
        options.checkInvariants()
            && !elastic
            && options.elastic().checkpointCostSec() == 0
            && options.commModel().isEmpty()
            && exact
            && samePriority
            && policy.order() == JobOrder.ARRIVAL
            && policy.backfill()
            && !tenantPass
            && options.migration().isEmpty();
  }

  SimReport run() {
    int next = dependencies.nextOwnArrival(0);
    long finished = 0;
    long progressStep = Math.max(1, n / 200);
    while (next < n || !events.isEmpty()) {
      long t =
          events.isEmpty()
              ? jobs.get(next).submitSec()
              : next < n
                  ? Math.min(events.peekTime(), jobs.get(next).submitSec())
                  : events.peekTime();
      tenancy.chargeTo(t);
      // 1. Completions at t, then stops of preempted jobs, then 2. arrivals at t.
      while (!events.isEmpty() && events.peekTime() == t) {
        int i = events.peekPayload();
        int kind = events.peekKind();
        events.poll();
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
        if (runs.staleFinish(i, t)) {
          continue; // the end of a run that was stopped early: it never happens
        }
        finish(i, t);
        finished++;
        if (progress != null && finished % progressStep == 0) {
          progress.update(finished, n);
        }
      }
      while (next < n && jobs.get(next).submitSec() == t) {
        submit(next, t);
        next = dependencies.nextOwnArrival(next + 1);
      }
      // 3. One pass, if anything could start. Under a tenancy the pass may also preempt, and
      // what it decides depends on time (fair share, protection, starvation): always run it,
      // and while jobs wait and run, at least every PASS_INTERVAL_SEC.
      if (tenantPass) {
        if (store.pendingCount() > 0 || (elastic && dirty && mayGrow())) {
          runPass(t);
        }
        if (store.pendingCount() > 0 && store.runningCount() > 0 && tickAt <= t) {
          tickAt = t + Simulator.PASS_INTERVAL_SEC;
          events.add(tickAt, EventQueue.TICK, 0);
        }
      } else if (store.pendingCount() > 0 && minPendingGpus <= store.freeGpus()) {
        if (dirty || options.everyPass()) {
          runPass(t);
        }
      } else if (elastic
          && (dirty || options.everyPass())
          && (mayGrow() || (store.pendingCount() > 0 && mayShrink()))) {
        runPass(t);
      }
      dirty = false;
      if (shrank) {
        // The nodes a shrink let go are free now: the job it was for may start next second.
        shrank = false;
        dirty = true;
        events.add(t + 1, EventQueue.TICK, 0);
      }
      if (options.checkInvariants()) {
        InvariantChecker.checkStore(store);
      }
      // Until the next instant: the series, the tenancy's shares, and fragmentation (free GPUs
      // while a waiting job would fit them in total).
      long nextT =
          Math.min(
              events.isEmpty() ? Long.MAX_VALUE : events.peekTime(),
              next < n ? jobs.get(next).submitSec() : Long.MAX_VALUE);
      if (predictions != null) {
        predict(t, nextT);
      }
      if (nextT != Long.MAX_VALUE) {
        boolean waitingJobFits = store.pendingCount() > 0 && minPendingGpus <= store.freeGpus();
        report.interval(t, nextT, store.freeGpus(), waitingJobFits);
        tenancy.interval(t, nextT);
      }
    }
    if (progress != null) {
      progress.update(n, n);
    }
    var built = report.build(passes, resizesRefused, firstRefused);
    return predictions == null ? built : built.withPredictions(Optional.of(predictions.report()));
  }

  /**
   * Start predictions due at {@code t} (arrivals still waiting after the pass) or at hour marks
   * before {@code nextT}: one forecast on the state after this instant's pass, by the core's {@link
   * SchedulingPass#forecast}, as the controller shows it. Changes no decision.
   */
  private void predict(long t, long nextT) {
    long until = nextT == Long.MAX_VALUE ? t + 1 : nextT;
    if (!predictions.due(until, this::waiting)) {
      return;
    }
    var snapshot = store.snapshot();
    long[] bySlot = pass.forecast(new PassInput(snapshot, t, 0, lastTenants));
    long[] ids = snapshot.pendingJobs().ids();
    int size = snapshot.pendingJobs().size();
    // Slots are in arrival order, and so mostly in index order: binary search, else scan.
    predictions.record(
        t,
        until,
        this::waiting,
        i -> {
          int slot = slotOf(ids, size, jobId(i).value());
          return slot < 0 ? -1 : bySlot[slot];
        });
    store.releaseSnapshot(); // nothing reads the forecast's snapshot any more
  }

  private boolean waiting(int i) {
    return store.pending(jobId(i)).isPresent();
  }

  /** The slot of {@code id} in the first {@code size} of {@code ids} (arrival order), or -1. */
  private static int slotOf(long[] ids, int size, long id) {
    int slot = Arrays.binarySearch(ids, 0, size, id);
    if (slot >= 0 && ids[slot] == id) {
      return slot;
    }
    for (int k = 0; k < size; k++) {
      if (ids[k] == id) {
        return k;
      }
    }
    return -1;
  }

  /** Job {@code i} finishes at {@code t}: the jobs waiting for it are released. */
  private void finish(int i, long t) {
    int gpus = specs.get(i).totalGpus();
    tenancy.finished(i, gpus);
    if (report.recordsSeries()) {
      var placement = store.running(jobId(i)).orElseThrow().placement();
      report.ended(i, t, placement, runs.gpusOf(i, placement));
    }
    runs.finished(i, t);
    mustApply(new Command.FinishJob(t, jobId(i), 0));
    dependencies.ended(i, t, events);
    dirty = true;
  }

  private void submit(int i, long t) {
    dependencies.arrived(i, t);
    mustApply(new Command.SubmitJob(t, new Job(jobId(i), specs.get(i), t)));
    if (predictions != null) {
      predictions.arrived(i, t);
    }
    addPending(specs.get(i).totalGpus());
    tenancy.arrived(i, specs.get(i).totalGpus());
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
    if (dependencies.any()
        || elastic
        || !order.isStatic()
        || !last
        || specs.get(i).totalGpus() <= store.freeGpus()) {
      dirty = true;
    }
  }

  private void runPass(long t) {
    long before = nanoTime == null ? 0 : nanoTime.getAsLong();
    var tenants = tenancy.beforePass(t, jobStates);
    lastTenants = tenants;
    var input =
        new PassInput(
            store.snapshot(),
            t,
            options.seed() * 1_000_003L + passes,
            tenants,
            migrations.inputs(store, t));
    PassResult result = pass.run(input);
    if (nanoTime != null) {
      report.passTimed(nanoTime.getAsLong() - before);
    }
    if (options.checkInvariants()) {
      // What the pass keeps between passes (sched.ScheduleCache) and the ranks it settles in one go
      // must change no decision: the reference is a fresh pass that visits every rank.
      PassResult fresh =
          new SchedulingPass(policy, options.placement()).visitingEveryRank().run(input);
      if (!fresh.sameAs(result)) {
        throw new IllegalStateException(
            "pass at t=" + t + " decided otherwise than a fresh pass: " + result + " vs " + fresh);
      }
    }
    // Nothing reads the pass's snapshot any more: the store may change its pending jobs in place.
    store.releaseSnapshot();
    passes++;
    for (Decision.Start s : result.starts()) {
      int i = index(s.job());
      int gpus = specs.get(i).totalGpus();
      mustApply(new Command.StartJob(t, s.job(), s.placement()));
      removePending(gpus);
      tenancy.started(i, gpus);
      if (checkReservations && firstReservedStart[i] != Long.MAX_VALUE) {
        InvariantChecker.checkReservationKept(jobs.get(i).id(), firstReservedStart[i], t);
      }
      if (predictions != null) {
        predictions.started(i, t);
      }
      long endSec = runs.start(i, t, s.placement());
      report.started(i, t, s.placement(), runs.gpusOf(i, s.placement()));
      events.add(endSec, EventQueue.FINISH, i);
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
    for (Decision.Resize z : result.resizes()) {
      resize(z, t);
    }
    for (Decision.Migrate m : result.migrations()) {
      migrate(m, t);
    }
  }

  /**
   * The pass resized elastic job {@code z.job()} at {@code t}: the store holds its new placement
   * (added nodes are taken, removed ones let go at once) and the job restarts at its new size after
   * a checkpoint ({@link JobRuns#resize}). As the controller does, a job being stopped for a
   * preemption is not resized (counted in a note).
   */
  private void resize(Decision.Resize z, long t) {
    int i = index(z.job());
    var running = store.running(z.job());
    if (running.isEmpty()
        || runs.stopping(i)
        || running.get().placement().totalTasks() != z.fromTasks()) {
      if (resizesRefused++ == 0) {
        firstRefused =
            "job " + z.job().value() + " at t=" + t + (runs.stopping(i) ? ", stopping" : "");
      }
      return;
    }
    var from = running.get().placement();
    mustApply(new Command.ResizeJob(t, z.job(), z.placement()));
    report.ended(i, t, from, runs.gpusOf(i, from));
    report.started(i, t, z.placement(), runs.gpusOf(i, z.placement()));
    events.add(runs.resize(i, t, z.placement()), EventQueue.FINISH, i);
    shrank |= !z.grows();
    dirty = true;
  }

  /** Whether a pass could grow an elastic job: free GPUs, and one running below its maximum. */
  private boolean mayGrow() {
    if (store.freeGpus() == 0) {
      return false;
    }
    for (var r : store.runningJobs()) {
      var gang = r.job().spec().gang();
      if (gang.isElastic() && r.placement().totalTasks() < gang.maxTasks()) {
        return true;
      }
    }
    return false;
  }

  /** Whether a pass could shrink an elastic job for a waiting one: one runs above its minimum. */
  private boolean mayShrink() {
    for (var r : store.runningJobs()) {
      var gang = r.job().spec().gang();
      if (gang.isElastic() && r.placement().totalTasks() > gang.tasks()) {
        return true;
      }
    }
    return false;
  }

  /**
   * A move decided at {@code t} happens at once: the job checkpoints, stops and restarts on its
   * target, paying the restart cost in run time ({@link JobRuns#migrate}).
   */
  private void migrate(Decision.Migrate m, long t) {
    int i = index(m.job());
    if (runs.stopping(i)) {
      return;
    }
    var running = store.running(m.job()).orElseThrow();
    int gpus = specs.get(i).totalGpus();
    report.ended(i, t, running.placement(), gpus);
    mustApply(new Command.RequeueJob(t, m.job()));
    mustApply(new Command.StartJob(t, m.job(), m.target()));
    long endSec = runs.migrate(i, t, m.target(), migrations.costSec());
    migrations.moved(m.job(), t);
    report.started(i, t, m.target(), gpus);
    events.add(endSec, EventQueue.FINISH, i);
    dirty = true;
  }

  /**
   * A victim is signalled at {@code t}: it runs on for the grace period, then stops ({@link
   * #stop}). The rules are the core's {@link PreemptionBook}: the decision applies only if the
   * victim runs and is not stopping yet and its preemptor waits; the pass then sees the preemption
   * until the preemptor starts, or at most {@code 2 x grace + 60 s}; the victim's history records
   * {@code t}.
   */
  private void preempt(Decision.Preempt p, long t) {
    int v = index(p.job());
    if (!tenancy.applies(p.job(), p.preemptor(), jobStates)) {
      // Not running, or already being stopped: nothing to do (counted in a note).
      runs.ignored(v, p, t);
      return;
    }
    events.add(runs.signal(v, t, tenancy.graceSec()), EventQueue.STOP, v);
    tenancy.preempted(p.job(), p.preemptor(), t);
  }

  /**
   * The grace of victim {@code v} ends at {@code s}: it stops and is requeued, keeping the progress
   * saved at its last checkpoint ({@link JobRuns#requeue}).
   */
  private void stop(int v, long s) {
    if (!runs.graceEnds(v, s)) {
      return; // it finished within its grace
    }
    JobId id = jobId(v);
    var running = store.running(id).orElseThrow();
    double lost = runs.requeue(v, s, tenancy.checkpointEverySec());
    int gpus = specs.get(v).totalGpus();
    report.ended(v, s, running.placement(), runs.gpusOf(v, running.placement()));
    mustApply(new Command.RequeueJob(s, id));
    addPending(gpus);
    tenancy.requeued(v, gpus, lost);
    dirty = true;
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

  /** The job id of the job at {@code index} in submit order. */
  static JobId jobId(int index) {
    return new JobId(index + 1L);
  }

  private static int index(JobId id) {
    return (int) (id.value() - 1);
  }
}
