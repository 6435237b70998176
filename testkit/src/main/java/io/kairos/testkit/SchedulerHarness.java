package io.kairos.testkit;

import io.kairos.core.command.Applied;
import io.kairos.core.command.Command;
import io.kairos.core.invariant.InvariantChecker;
import io.kairos.core.model.Cluster;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.sched.Decision;
import io.kairos.core.sched.PassInput;
import io.kairos.core.sched.PassResult;
import io.kairos.core.sched.Policy;
import io.kairos.core.sched.SchedulingPass;
import io.kairos.core.state.ClusterStore;
import io.kairos.core.state.Reducer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Drives the scheduler the way the controller and the simulator do, on a manual clock: it owns a
 * {@link ClusterStore}, the time ({@code nowSec}), a {@link Policy} and a seed, and changes the
 * store only through {@link Reducer}. After every step (submission, start, finish, cancel) it runs
 * {@link InvariantChecker#checkStore}, so every test also checks invariants 1 and 2.
 *
 * <pre>{@code
 * var h = SchedulerHarness.of(Clusters.oneRack(4, 1)).policy(Policy.EASY);
 * JobId big = h.submit(Jobs.gpus(4).limit(100));
 * PassResult pass = h.runPass();      // decides, changes nothing
 * h.commit(pass);                     // applies the starts through the reducer
 * h.advance(100);                     // the job runs to its limit and finishes
 * h.runUntilIdle();                   // event loop: finish due jobs, pass, commit, next event
 * }</pre>
 *
 * <p>Job ids are dense from 1 in submission order. A job's runtime is fixed at submission (see
 * {@link RuntimeModel}); a started job finishes exactly {@code runtime} seconds after its start.
 * Jobs may be submitted for a later arrival time ({@link #submitAt}); arrivals must be submitted in
 * time order. At one instant, finishes are applied before arrivals, and both before a pass. A job
 * may be held until a later eligible time ({@link #submitAt(long, JobSpec, long, long)}, {@link
 * Jobs.Builder#eligibleAt}); the event loop runs a pass when it becomes eligible. What the harness
 * knows about each job is its {@link JobRecord}; what is still to happen, its {@link Timeline}.
 *
 * <p>Failures are {@link AssertionError}s whose message starts with the seed, the policy and the
 * time, so a generated case can be replayed.
 */
public final class SchedulerHarness {
  /** Where a job is in its life. */
  public enum JobState {
    /** Submitted with a future arrival time; not in the store yet. */
    ARRIVING,
    PENDING,
    RUNNING,
    FINISHED,
    CANCELLED
  }

  /** Called with every pass the harness runs, before anything is committed. */
  @FunctionalInterface
  public interface PassListener {
    void onPass(PassInput input, PassResult result);
  }

  private static final long NONE = Long.MAX_VALUE;
  private static final int MAX_LOOP_STEPS = 1_000_000;

  private final ClusterStore store;
  private Policy policy = Policy.EASY;
  // One pass object for the whole run, as the controller and the simulator keep: what it carries
  // between passes is checked against a fresh pass every time.
  private SchedulingPass pass;
  private io.kairos.core.tenancy.Tenants tenants = io.kairos.core.tenancy.Tenants.none();
  private long seed;
  private long nowSec;
  private RuntimeModel runtimes = RuntimeModel.EXPLICIT;
  private long nextId = 1;
  private final Map<JobId, JobRecord> jobs = new LinkedHashMap<>();
  private final Timeline timeline = new Timeline();
  private final List<PassListener> listeners = new ArrayList<>();
  private final List<Command> log = new ArrayList<>();
  private int passes;
  private final HarnessMigration migration = new HarnessMigration();

  private SchedulerHarness(Cluster cluster) {
    this.store = new ClusterStore(cluster);
    check("initial state");
  }

  public static SchedulerHarness of(Cluster cluster) {
    return new SchedulerHarness(cluster);
  }

  // ---------------------------------------------------------------- configuration

  public SchedulerHarness policy(Policy policy) {
    this.policy = policy;
    this.pass = null;
    return this;
  }

  /**
   * Runs later passes with this tenancy (queues, quotas, fair share, preemption); {@code
   * Tenants.none()} (the default): single-tenant.
   */
  public SchedulerHarness tenants(io.kairos.core.tenancy.Tenants tenants) {
    this.tenants = java.util.Objects.requireNonNull(tenants, "tenants");
    return this;
  }

  /**
   * Runs later passes with migration on ({@link io.kairos.core.sched.MigrationStage}), with these
   * settings; only jobs marked {@link #checkpointable} move.
   */
  public SchedulerHarness migration(io.kairos.core.sched.MigrationSettings settings) {
    migration.on(settings);
    return this;
  }

  /** Marks {@code id} as declaring checkpoints that take up to {@code sec}: it may be moved. */
  public SchedulerHarness checkpointable(JobId id, long sec) {
    migration.checkpointable(id, sec);
    return this;
  }

  /** Records that {@code id} was moved at {@code sec} (its protection window runs from then). */
  public SchedulerHarness movedAt(JobId id, long sec) {
    migration.moved(id, sec);
    return this;
  }

  /**
   * Holds {@code node} for {@code holder}'s move under way until {@code endsSec} (a controller's
   * {@code JobRecord.migrationTarget}); later passes see the hold until then.
   */
  public SchedulerHarness hold(int node, JobId holder, long endsSec) {
    migration.hold(node, holder, endsSec);
    return this;
  }

  /** Ends every hold of {@code holder} (it restarted, ended, or its hold was ended). */
  public SchedulerHarness release(JobId holder) {
    migration.release(holder);
    return this;
  }

  /** When each moved job was last moved. */
  public Map<JobId, Long> movedSec() {
    return migration.movedSec();
  }

  /** What the next pass knows of migration: {@code Migrations.OFF} unless turned on. */
  public io.kairos.core.sched.Migrations migrations() {
    return migration.forPass();
  }

  public SchedulerHarness seed(long seed) {
    this.seed = seed;
    return this;
  }

  /** Applies to jobs submitted from now on. */
  public SchedulerHarness runtimes(RuntimeModel model) {
    this.runtimes = model;
    return this;
  }

  /** Sets the clock before anything happened (default 0). */
  public SchedulerHarness startAt(long sec) {
    if (!jobs.isEmpty() || sec < 0) {
      throw new IllegalStateException("startAt only before the first submission, at >= 0");
    }
    this.nowSec = sec;
    return this;
  }

  public SchedulerHarness onPass(PassListener listener) {
    listeners.add(listener);
    return this;
  }

  // ---------------------------------------------------------------- accessors

  public ClusterStore store() {
    return store;
  }

  public Cluster cluster() {
    return store.cluster();
  }

  public Policy policy() {
    return policy;
  }

  public long seed() {
    return seed;
  }

  public long nowSec() {
    return nowSec;
  }

  public int passes() {
    return passes;
  }

  /** Every command the harness applied, in order (all accepted). */
  public List<Command> log() {
    return Collections.unmodifiableList(log);
  }

  public JobRecord job(JobId id) {
    var r = jobs.get(id);
    if (r == null) {
      throw new AssertionError(context() + ": no job " + id);
    }
    return r;
  }

  public JobRecord job(long id) {
    return job(JobId.of(id));
  }

  /** All jobs in submission order. */
  public Collection<JobRecord> jobs() {
    return Collections.unmodifiableCollection(jobs.values());
  }

  public OptionalLong startOf(JobId id) {
    return job(id).startSec();
  }

  public JobState stateOf(JobId id) {
    return job(id).state();
  }

  /** Start time per job in submission order; -1 for jobs that did not start. */
  public Map<JobId, Long> startTimes() {
    var m = new LinkedHashMap<JobId, Long>();
    for (var r : jobs.values()) {
      m.put(r.id(), r.startSec().orElse(-1));
    }
    return m;
  }

  /** Jobs that have not finished (arriving, pending or running). */
  public List<JobRecord> unfinished() {
    return jobs.values().stream()
        .filter(r -> r.state() != JobState.FINISHED && r.state() != JobState.CANCELLED)
        .toList();
  }

  /** "seed=… policy=… t=…": the prefix of every failure message. */
  public String context() {
    return "seed=" + seed + " policy=" + policy.name() + " t=" + nowSec;
  }

  // ---------------------------------------------------------------- steps

  /** Submits a job now; it runs {@code runtimeFor(spec, -1)}. */
  public JobId submit(JobSpec spec) {
    return submitAt(nowSec, spec, -1);
  }

  /**
   * Submits a job now that runs {@code runtimeSec} (ignored under {@link RuntimeModel#TIME_LIMIT}).
   */
  public JobId submit(JobSpec spec, long runtimeSec) {
    return submitAt(nowSec, spec, runtimeSec);
  }

  /** Submits the built job now, with the builder's runtime and eligible time if it has them. */
  public JobId submit(Jobs.Builder job) {
    return submitAt(nowSec, job);
  }

  public JobId submitAt(long atSec, Jobs.Builder job) {
    return submitAt(atSec, job.build(), job.runtimeSec(), job.eligibleSec());
  }

  /**
   * Submits a job that arrives at {@code atSec} (now or later) and runs {@code runtimeSec}, or its
   * limit when {@code runtimeSec} is negative. The id is assigned now; arrivals must come in time
   * order so ids stay increasing in arrival order.
   */
  public JobId submitAt(long atSec, JobSpec spec, long runtimeSec) {
    return submitAt(atSec, spec, runtimeSec, -1);
  }

  /**
   * {@link #submitAt(long, JobSpec, long)} for a job held until {@code eligibleSec} (a begin time
   * or a requeue backoff); a negative or earlier time means "when it arrives".
   */
  public JobId submitAt(long atSec, JobSpec spec, long runtimeSec, long eligibleSec) {
    if (atSec < nowSec) {
      throw new IllegalArgumentException(context() + ": arrival " + atSec + " is in the past");
    }
    if (atSec < timeline.lastArrivalSec()) {
      throw new IllegalArgumentException(
          context()
              + ": arrivals must be submitted in time order, "
              + atSec
              + " after "
              + timeline.lastArrivalSec());
    }
    long runtime =
        runtimes == RuntimeModel.TIME_LIMIT || runtimeSec < 0 ? spec.timeLimitSec() : runtimeSec;
    if (runtime < 1 || runtime > spec.timeLimitSec()) {
      throw new IllegalArgumentException(
          context() + ": runtime " + runtime + " must be in 1.." + spec.timeLimitSec());
    }
    var record =
        new JobRecord(JobId.of(nextId++), spec, atSec, Math.max(atSec, eligibleSec), runtime);
    jobs.put(record.id(), record);
    if (atSec == nowSec && timeline.noArrivalsWaiting()) {
      arrive(record);
    } else {
      timeline.arriveLater(record);
    }
    return record.id();
  }

  /** Submits every generated arrival (sorted by time) and returns their ids in order. */
  public List<JobId> submitAll(List<Generators.Arrival> workload) {
    var ids = new ArrayList<JobId>(workload.size());
    for (var a : workload) {
      ids.add(submitAt(a.atSec(), a.spec(), a.runtimeSec(), a.eligibleSec()));
    }
    return ids;
  }

  /**
   * Starts a job now that holds exactly the GPUs of {@code gpuMask} on {@code node} until {@code
   * limitSec} from now, bypassing the pass: a way to set up precise free states.
   */
  public JobId occupy(int node, long gpuMask, long limitSec) {
    return occupy(node, gpuMask, Jobs.gpus(Long.bitCount(gpuMask)).limit(limitSec));
  }

  /**
   * {@link #occupy(int, long, long)} for {@code job} (its queue, priority, limit), which must ask
   * for {@code gpuMask}'s GPUs as one task.
   */
  public JobId occupy(int node, long gpuMask, Jobs.Builder job) {
    int gpus = Long.bitCount(gpuMask);
    JobId id = submit(job.build());
    var record = job(id);
    var placement = Placement.of(new int[] {node}, new int[] {gpus}, new long[] {gpuMask});
    apply(new Command.StartJob(nowSec, id, placement), "occupy " + id);
    started(record, placement);
    check("occupy " + id);
    return id;
  }

  /** {@link #occupy(int, long, long)} for an hour. */
  public JobId occupy(int node, long gpuMask) {
    return occupy(node, gpuMask, Jobs.DEFAULT_LIMIT_SEC);
  }

  /**
   * Takes GPU {@code gpu} of node index {@code node} out of service ({@code inService} false) or
   * returns it, through the reducer: no later pass may place a job on it.
   */
  public SchedulerHarness gpuService(int node, int gpu, boolean inService) {
    String name = cluster().node(node).name();
    apply(new Command.GpuService(nowSec, name, gpu, inService), "gpu " + name + "/" + gpu);
    check("gpu service " + name + "/" + gpu);
    return this;
  }

  /** One pass over the current state at the current time. Commits nothing. */
  public PassResult runPass() {
    var input = new PassInput(store.snapshot(), nowSec, seed, tenants, migrations());
    PassResult result;
    try {
      if (pass == null) {
        pass = new SchedulingPass(policy);
      }
      result = pass.run(input);
      PassResult fresh = new SchedulingPass(policy).visitingEveryRank().run(input);
      if (!fresh.sameAs(result)) {
        throw new AssertionError(
            context()
                + ": the pass decided otherwise than a fresh pass (what it kept from the last"
                + " pass changed a decision): "
                + result
                + " vs "
                + fresh);
      }
    } catch (RuntimeException e) {
      throw new AssertionError(context() + ": pass threw " + e, e);
    }
    passes++;
    for (var l : listeners) {
      l.onPass(input, result);
    }
    return result;
  }

  /**
   * Applies every start of {@code result} through the reducer at the current time (each must be
   * accepted), records the pass's reservations, and applies its resizes of elastic jobs at once (as
   * the simulator does: a shrunk node is free when the pass is committed).
   */
  public SchedulerHarness commit(PassResult result) {
    for (Decision.Start s : result.starts()) {
      var record = job(s.job());
      release(s.job()); // a job that starts has got where it was moved to, or anywhere after
      apply(new Command.StartJob(nowSec, s.job(), s.placement()), "start " + s);
      started(record, s.placement());
      check("start " + s);
    }
    for (Decision.Reserve r : result.reservations()) {
      job(r.job()).reserved(r, nowSec);
    }
    for (Decision.Resize z : result.resizes()) {
      apply(new Command.ResizeJob(nowSec, z.job(), z.placement()), "resize " + z);
      job(z.job()).resized(z.placement());
      check("resize " + z);
    }
    // A move at once, as the simulator does it: requeued and started on its target in the same
    // instant, finishing when it would have (the checkpoint keeps its work).
    for (Decision.Migrate m : result.migrations()) {
      var record = job(m.job());
      apply(new Command.RequeueJob(nowSec, m.job()), "requeue to move " + m);
      apply(new Command.StartJob(nowSec, m.job(), m.target()), "move " + m);
      timeline.stopped(record);
      record.resized(m.target());
      timeline.running(record);
      migration.moved(m.job(), nowSec);
      check("move " + m);
    }
    return this;
  }

  /** Runs one pass and commits it. */
  public PassResult step() {
    var result = runPass();
    commit(result);
    return result;
  }

  /** Cancels a pending or running job through the reducer. */
  public SchedulerHarness cancel(JobId id) {
    var record = job(id);
    if (record.state() == JobState.ARRIVING) {
      throw new IllegalStateException(context() + ": job " + id + " has not arrived yet");
    }
    release(id);
    apply(new Command.CancelJob(nowSec, id, "test"), "cancel " + id);
    if (record.state() == JobState.RUNNING) {
      timeline.stopped(record);
    }
    record.ended(JobState.CANCELLED, nowSec);
    check("cancel " + id);
    return this;
  }

  /** Moves the clock forward by {@code sec}; see {@link #advanceTo}. */
  public SchedulerHarness advance(long sec) {
    return advanceTo(nowSec + sec);
  }

  /**
   * Moves the clock to {@code sec}, finishing every running job whose runtime elapses and
   * submitting every arrival due on the way, in time order. Runs no pass.
   */
  public SchedulerHarness advanceTo(long sec) {
    if (sec < nowSec) {
      throw new IllegalArgumentException(context() + ": cannot go back to t=" + sec);
    }
    for (long next = nextEventSec(); next <= sec; next = nextEventSec()) {
      nowSec = next;
      applyDueEvents();
    }
    nowSec = sec;
    return this;
  }

  /**
   * The event loop: apply due events, run a pass, commit it, jump to the next finish or arrival;
   * until no event is left. Jobs that can never start stay pending (check {@link #unfinished}).
   */
  public SchedulerHarness runUntilIdle() {
    return runUntil(NONE);
  }

  /** The event loop until no event is left at or before {@code endSec}; the clock ends there. */
  public SchedulerHarness runUntil(long endSec) {
    applyDueEvents();
    for (int steps = 0; ; steps++) {
      if (steps > MAX_LOOP_STEPS) {
        throw new AssertionError(context() + ": event loop did not settle");
      }
      step();
      long next = nextEventSec();
      if (next == NONE || next > endSec) {
        break;
      }
      nowSec = next;
      applyDueEvents();
    }
    if (endSec != NONE && endSec > nowSec) {
      advanceTo(endSec);
    }
    return this;
  }

  /** The event loop until {@code id} has started (or nothing is left to happen). */
  public SchedulerHarness runUntilStarted(JobId id) {
    applyDueEvents();
    var record = job(id);
    for (int steps = 0; record.startSec().isEmpty(); steps++) {
      if (steps > MAX_LOOP_STEPS) {
        throw new AssertionError(context() + ": event loop did not settle");
      }
      step();
      long next = nextEventSec();
      if (record.startSec().isPresent() || next == NONE) {
        break;
      }
      nowSec = next;
      applyDueEvents();
    }
    return this;
  }

  /**
   * When the next finish, arrival or end of a hold (a pending job becoming eligible) happens, or
   * {@link Long#MAX_VALUE}.
   */
  public long nextEventSec() {
    return timeline.nextEventSec(nowSec);
  }

  // ---------------------------------------------------------------- internals

  private void applyDueEvents() {
    for (var record = timeline.pollFinish(nowSec);
        record != null;
        record = timeline.pollFinish(nowSec)) {
      apply(new Command.FinishJob(nowSec, record.id(), 0), "finish " + record.id());
      record.ended(JobState.FINISHED, nowSec);
      check("finish " + record.id());
    }
    for (var record = timeline.pollArrival(nowSec);
        record != null;
        record = timeline.pollArrival(nowSec)) {
      arrive(record);
    }
  }

  private void started(JobRecord record, Placement placement) {
    record.started(nowSec, placement);
    timeline.running(record);
  }

  private void arrive(JobRecord record) {
    var job = new Job(record.id(), record.spec(), record.submitSec(), record.eligibleSec());
    apply(new Command.SubmitJob(nowSec, job), "submit " + record.id());
    record.arrived();
    if (record.eligibleSec() > nowSec) {
      timeline.hold(record);
    }
    check("submit " + record.id());
  }

  /** Applies through the reducer; the caller updates its records, then calls {@link #check}. */
  private void apply(Command command, String what) {
    Applied applied = Reducer.apply(store, command);
    if (!applied.isAccepted()) {
      throw new AssertionError(context() + ": " + what + " refused: " + applied);
    }
    log.add(command);
  }

  private void check(String after) {
    try {
      InvariantChecker.checkStore(store);
    } catch (IllegalStateException e) {
      throw new AssertionError(context() + " after " + after + ": " + e.getMessage(), e);
    }
    if (store.runningCount() + store.pendingCount()
        != jobs.values().stream()
            .filter(r -> r.state() == JobState.RUNNING || r.state() == JobState.PENDING)
            .count()) {
      throw new AssertionError(context() + " after " + after + ": store and harness disagree");
    }
  }
}
