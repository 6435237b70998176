package io.kairos.control.sched;

import io.kairos.config.Tenancy;
import io.kairos.control.Fatal;
import io.kairos.control.accounting.AccountingQueries;
import io.kairos.control.raft.RaftReplica;
import io.kairos.control.state.ControlCommand.PreemptJobs;
import io.kairos.control.state.ControlCommand.Preemption;
import io.kairos.control.state.ControlCommand.Start;
import io.kairos.control.state.ControlCommand.StartJobs;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.CoreTime;
import io.kairos.control.state.JobRecord;
import io.kairos.control.state.RecordedJobs;
import io.kairos.core.fairshare.FairShareFactor;
import io.kairos.core.fairshare.Resources;
import io.kairos.core.model.Cluster;
import io.kairos.core.model.JobId;
import io.kairos.core.model.Placement;
import io.kairos.core.sched.Decision;
import io.kairos.core.sched.Diagnosis;
import io.kairos.core.sched.Migrations;
import io.kairos.core.sched.PassInput;
import io.kairos.core.sched.PassResult;
import io.kairos.core.sched.Policy;
import io.kairos.core.sched.Reason;
import io.kairos.core.sched.SchedulingPass;
import io.kairos.core.sched.StartForecast;
import io.kairos.core.sched.preempt.PreemptionHistory;
import io.kairos.core.state.ClusterSnapshot;
import io.kairos.core.tenancy.PreemptionBook;
import io.kairos.core.tenancy.Tenants;
import io.kairos.protocol.TaskPlacement;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.io.Closeable;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the core's pass on the leader and commits its starts through the log.
 *
 * <p>One thread. It waits for the state to change (a submit, a task's end, a registration) or for a
 * second to pass, no sooner than {@link #MIN_PASS_INTERVAL_MS} after the last pass began (so a
 * burst of events makes one pass), then: snapshot under the read lock, run the pass outside it,
 * propose the starts as one {@link StartJobs} and wait for it to apply, so that the next pass sees
 * them. A decision that went stale meanwhile is refused by the state, and the next pass replans:
 * the loop may be optimistic because the state is not. The time is read here, once per pass, and
 * travels in the command; the pass itself reads no clock.
 *
 * <p>With a tenancy configuration, each pass also gets a {@link Tenants}: the queues and classes,
 * the accounts' fair-share factors from the leader's {@link FairShareUsage}, each running job's
 * preemption history (its record's times, folded by the core's {@link PreemptionBook}), and the
 * preemptions under way (victims told to stop and still running, with their preemptors, and those
 * this leader's {@link PreemptionBook} still keeps). The pass's preemptions are proposed as one
 * {@link PreemptJobs}, carrying the tenancy's grace.
 */
public final class SchedulerLoop implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(SchedulerLoop.class);

  /**
   * Why a job waits, as the last pass on this replica saw it, and the reservation it holds.
   *
   * @param diagnosis the pass's diagnosis, for the detail; null for none
   * @param rank the job's rank in it
   * @param forecast the pass's start forecast, for {@link #predictedStartSec}; null for none
   */
  public record Pending(
      Reason reason, long reservedStartSec, Diagnosis diagnosis, int rank, Forecast forecast) {
    public Pending(Reason reason, long reservedStartSec) {
      this(reason, reservedStartSec, null, -1, null);
    }

    /**
     * When the job is expected to start ({@link StartForecast}: expected run times, not limits), or
     * its reservation's start when there is no forecast for it; -1 for neither.
     */
    public long predictedStartSec() {
      long forecastSec = forecast == null ? -1 : forecast.startOf(diagnosis.slot(rank));
      return forecastSec >= 0 ? forecastSec : reservedStartSec;
    }

    /**
     * The pass's detail for the reason (quota numbers, the jobs being preempted), or null. Built
     * when asked (most are never read), from the pass's final state, which no one writes any more.
     */
    public String detail() {
      return diagnosis == null ? null : diagnosis.detail(rank).orElse(null);
    }
  }

  /**
   * The start forecast of one pass's waiting jobs, computed on first read (most passes are never
   * asked): O(running jobs x {@value StartForecast#PLACED}) once per pass at most.
   */
  public static final class Forecast {
    private final PassInput in;
    private final PassResult result;
    private final boolean backfill;
    private long[] bySlot;

    Forecast(PassInput in, PassResult result, boolean backfill) {
      this.in = in;
      this.result = result;
      this.backfill = backfill;
    }

    synchronized long startOf(int slot) {
      if (bySlot == null) {
        bySlot = StartForecast.after(in, result, backfill);
      }
      return bySlot[slot];
    }
  }

  /**
   * The shortest time from one pass's start to the next: events that arrive within it (a burst of
   * task ends or submits) are taken by one pass. A freed GPU waits at most this long plus a pass
   * and a commit for its next job.
   */
  static final long MIN_PASS_INTERVAL_MS = 5;

  /** With no event, a pass this often all the same (time-based reasons: begin times, limits). */
  static final long IDLE_PASS_MS = 1000;

  /**
   * How long an idle loop waits at {@code nowMs}: until just after the next whole second. The core
   * keeps time in whole seconds, so whatever waits for a time (a requeued job's eligibility, a
   * begin time, a reservation) becomes due exactly as a second begins: a pass then starts it at
   * once, where a pass a second after the last one would come up to a second late.
   */
  static long idleWaitMs(long nowMs) {
    return IDLE_PASS_MS - Math.floorMod(nowMs, IDLE_PASS_MS) + IDLE_PASS_PAST_SECOND_MS;
  }

  /** How far past a whole second an idle pass runs: the clock read in the pass must be past it. */
  static final long IDLE_PASS_PAST_SECOND_MS = 2;

  /**
   * Told of the jobs a pass is about to start, before their {@link StartJobs} is proposed; what it
   * returns runs right after the proposal, so that what it proposes (the agents' service: the jobs'
   * step credentials) follows the starts in the log and shares their flush.
   */
  public interface StartHook {
    StartHook NONE = starting -> () -> {};

    /** One job to start: its id, the attempt its start will make, its owner. */
    record Starting(long jobId, int attempt, String user) {}

    Runnable starting(List<Starting> jobs);
  }

  private volatile StartHook startHook = StartHook.NONE;

  private final RaftReplica replica;
  private final SchedulingPass pass;
  private final InstantSource clock;

  /** Settles the node store after a burst of registrations (loop thread only). */
  private final NodeSettler settler;

  private final Timer passTimer;
  private final Counter starts;
  private final Counter preemptions;
  private final Counter migrations;
  private final SiteTenancy site;

  /** The tenancy of the last pass, its usage and its preemption book: scheduler thread only. */
  private Optional<Tenancy> tenancy;

  private FairShareUsage usage;
  private volatile FairShareFactor factors;
  private volatile io.kairos.core.fairshare.UsageTracker usageView;

  /**
   * Preemptions this replica proposed that were applied, kept by the core's rules until the
   * preemptor starts or leaves the queue, at most {@code 2 x grace + 60 s} (in whole seconds, as
   * the pass counts), so the pass keeps the preemptor first after its victims have stopped ({@link
   * Tenants#preempting}). Scheduler thread only; an ordering hint, lost with the leadership.
   */
  private PreemptionBook preemptionBook;

  private final Thread thread;
  private volatile Map<Long, Pending> pending = Map.of();
  private volatile boolean closed;

  public SchedulerLoop(
      RaftReplica replica, Policy policy, InstantSource clock, MeterRegistry meters) {
    this(replica, policy, Optional.empty(), clock, meters);
  }

  public SchedulerLoop(
      RaftReplica replica,
      Policy policy,
      Optional<Tenancy> tenancy,
      InstantSource clock,
      MeterRegistry meters) {
    this.replica = replica;
    this.site = new SiteTenancy(tenancy);
    use(tenancy);
    this.pass = new SchedulingPass(policy);
    this.clock = clock;
    this.settler = new NodeSettler(replica, clock);
    this.passTimer =
        Timer.builder("kairos.scheduler.pass")
            .description("time of one scheduling pass (snapshot, pass, not the commit)")
            .publishPercentiles(0.5, 0.99)
            .register(meters);
    this.starts =
        Counter.builder("kairos.scheduler.decisions")
            .tag("decision", "start")
            .description("jobs the scheduler decided to start")
            .register(meters);
    this.preemptions =
        Counter.builder("kairos.scheduler.decisions")
            .tag("decision", "preempt")
            .description("running jobs the scheduler decided to preempt")
            .register(meters);
    this.migrations =
        Counter.builder("kairos.scheduler.decisions")
            .tag("decision", "migrate")
            .description("running jobs the scheduler moved (checkpoint, stop, restart elsewhere)")
            .register(meters);
    this.thread =
        Thread.ofPlatform()
            .name("kairos-scheduler")
            .daemon()
            .uncaughtExceptionHandler(Fatal.EXIT)
            .unstarted(this::loop);
  }

  public SchedulerLoop start() {
    thread.start();
    return this;
  }

  public Policy policy() {
    return pass.policy();
  }

  /** Sets what is told of the jobs each pass starts ({@link StartHook}). */
  public void onStart(StartHook hook) {
    this.startHook = java.util.Objects.requireNonNull(hook, "hook");
  }

  /** The state version ({@code StateWatch}) the last finished pass began at; -1 before any. */
  private long passedVersion = -1;

  private final Object passes = new Object();

  private void passed(long version) {
    synchronized (passes) {
      passedVersion = version;
      passes.notifyAll();
    }
  }

  /**
   * Waits, at most {@code timeoutMs}, until a pass that began at state version {@code version} or
   * later has finished, its starts committed: the agents' service holds its reply to a heartbeat
   * that reported task ends until the pass they trigger has placed jobs on the freed GPUs, so that
   * the reply carries them.
   *
   * @return whether such a pass finished in time
   */
  public boolean awaitPass(long version, long timeoutMs) throws InterruptedException {
    long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
    synchronized (passes) {
      while (passedVersion < version) {
        long leftMs = (deadline - System.nanoTime()) / 1_000_000L;
        if (leftMs <= 0) {
          return false;
        }
        passes.wait(leftMs);
      }
      return true;
    }
  }

  /**
   * The tenancy configuration this replica schedules and admits with, if any: the replicated one
   * once applied ({@code kairos config apply}), else the one it was started with.
   */
  public Optional<Tenancy> tenancy() {
    return site.of(replica.stateMachine().read(s -> s.config()));
  }

  /** The tenancy in {@code s} ({@link #tenancy()} under a lock the caller holds). */
  public Optional<Tenancy> tenancy(ControlState s) {
    return site.of(s.config());
  }

  /**
   * Schedules with {@code next} from now on: fair-share usage is rebuilt from the records under it
   * (the next pass), and the preemption book starts afresh with its settings (an ordering hint).
   */
  private void use(Optional<Tenancy> next) {
    tenancy = next;
    usage = next.map(FairShareUsage::new).orElse(null);
    preemptionBook =
        new PreemptionBook(next.map(Tenancy::settings).orElse(Tenants.Settings.DEFAULT));
    factors = null;
    usageView = null;
  }

  /**
   * Fair share rebuilds ended jobs' use from the accounting store (a new leader, a capacity
   * change): {@code history} writes the state's ended jobs, then reads the store's buckets.
   */
  public void useAccounting(
      AccountingQueries queries, io.kairos.control.accounting.AccountingWriter writer) {
    if (usage != null) {
      usage.useHistory(
          (afterMs, bucketMs) -> {
            writer.flush();
            return queries.usageBuckets(afterMs, bucketMs);
          });
    }
  }

  /** The accounts' fair-share factors as of the last pass on this replica (the leader); or null. */
  public FairShareFactor fairShare() {
    return factors;
  }

  /** A copy of the leader's decayed usage as of the last pass; null elsewhere. */
  public io.kairos.core.fairshare.UsageTracker usage() {
    return usageView;
  }

  /** The last pass's view of a pending job, if it considered it. */
  public Pending pending(long jobId) {
    return pending.get(jobId);
  }

  private void loop() {
    var watch = replica.stateMachine().watch();
    while (!closed) {
      try {
        long seen = watch.version();
        if (!replica.isLeaderReady()) {
          pending = Map.of();
          preemptionBook.clear();
          if (usage != null) {
            usage.reset(); // a later leadership rebuilds it from the records
            factors = null;
            usageView = null;
          }
          watch.awaitChange(seen, 250);
          continue;
        }
        settler.tick();
        long passStart = System.nanoTime();
        runOnce();
        passed(seen);
        watch.awaitChange(
            seen, settler.stale() ? NodeSettler.SETTLE_AFTER_MS : idleWaitMs(clock.millis()));
        // The floor: a burst of events (task ends, submits) arriving together makes one pass.
        long sinceMs = (System.nanoTime() - passStart) / 1_000_000;
        if (sinceMs < MIN_PASS_INTERVAL_MS) {
          Thread.sleep(MIN_PASS_INTERVAL_MS - sinceMs);
        }
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        if (!closed) {
          LOG.warn("scheduler pass failed; retrying in a second", e);
          sleepQuietly(1000);
        }
      }
    }
  }

  /** What one pass reads under the state's lock. */
  private record Inputs(ClusterSnapshot snapshot, Tenants tenants, Migrations migrations) {}

  /** One pass and its commit. Returns how many jobs it started. */
  int runOnce() throws InterruptedException {
    long nowMs = clock.millis();
    Inputs in = replica.stateMachine().read(s -> inputs(s, nowMs));
    if (in == null) {
      pending = Map.of();
      return 0;
    }
    ClusterSnapshot snapshot = in.snapshot();
    long t0 = System.nanoTime();
    var passInput =
        new PassInput(
            snapshot, CoreTime.sec(nowMs), replica.appliedIndex(), in.tenants(), in.migrations());
    PassResult result = pass.run(passInput);
    MigrationProposals.endExpiredHolds(replica, in.migrations(), nowMs);
    passTimer.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
    publish(result, new Forecast(passInput, result, pass.policy().backfill()));
    int started = 0;
    if (!result.starts().isEmpty()) {
      var decisions = new ArrayList<Start>(result.starts().size());
      Cluster cluster = snapshot.cluster();
      for (Decision.Start s : result.starts()) {
        decisions.add(new Start(s.job().value(), tasks(cluster, s.placement())));
      }
      var starting =
          replica
              .stateMachine()
              .read(
                  st -> {
                    var list = new ArrayList<StartHook.Starting>(decisions.size());
                    for (Start d : decisions) {
                      st.job(d.jobId())
                          .ifPresent(
                              j ->
                                  list.add(
                                      new StartHook.Starting(
                                          j.id, j.attempt + 1, j.request.user())));
                    }
                    return list;
                  });
      Runnable afterPropose = startHook.starting(starting);
      try {
        var proposed = replica.propose(new StartJobs(nowMs, decisions));
        afterPropose.run();
        var applied = proposed.get(10, TimeUnit.SECONDS);
        starts.increment(applied.ids().size());
        started = applied.ids().size();
        if (usage != null) {
          replica
              .stateMachine()
              .read(
                  st -> {
                    for (long id : applied.ids()) {
                      st.job(id).ifPresent(j -> usage.started(j.id, j.attempt, j.startMs));
                    }
                    return null;
                  });
        }
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
        LOG.warn("could not commit {} starts: {}", decisions.size(), e.toString());
      }
    }
    if (!result.preemptions().isEmpty()) {
      proposePreemptions(result.preemptions(), in.tenants().settings().graceSec(), nowMs);
    }
    if (!result.resizes().isEmpty()) {
      ElasticProposals.propose(replica, snapshot.cluster(), result.resizes(), nowMs);
    }
    if (!result.migrations().isEmpty()) {
      migrations.increment(
          MigrationProposals.propose(
              replica, snapshot.cluster(), result.migrations(), in.migrations().settings(), nowMs));
    }
    return started;
  }

  private void proposePreemptions(List<Decision.Preempt> decided, long graceSec, long nowMs)
      throws InterruptedException {
    var list = new ArrayList<Preemption>(decided.size());
    for (Decision.Preempt p : decided) {
      list.add(new Preemption(p.job().value(), p.preemptor().value(), p.kind().name(), p.detail()));
    }
    try {
      var applied =
          replica.propose(new PreemptJobs(nowMs, graceSec, list)).get(10, TimeUnit.SECONDS);
      preemptions.increment(applied.ids().size());
      for (Preemption p : list) {
        if (applied.ids().contains(p.victimId())) {
          preemptionBook.preempted(
              JobId.of(p.victimId()), JobId.of(p.preemptorId()), CoreTime.sec(nowMs));
        }
      }
      if (!applied.ids().isEmpty()) {
        LOG.info("preempting jobs {} (asked: {})", applied.ids(), list);
      }
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      LOG.warn("could not commit {} preemptions: {}", list.size(), e.toString());
    }
  }

  /**
   * The snapshot and the pass's {@link Tenants} ({@link Tenants#none()} without a tenancy); null
   * when nothing waits and no elastic job could grow. Runs under the read lock: O(running jobs)
   * besides the snapshot.
   */
  private Inputs inputs(ControlState s, long nowMs) {
    Optional<Tenancy> current = site.of(s.config());
    var migration = current.flatMap(Tenancy::migration);
    if (s.store() == null
        || (s.store().pendingCount() == 0
            && !ElasticProposals.mayGrow(s.store())
            && !MigrationProposals.anyMovable(s, migration))) {
      return null;
    }
    ClusterSnapshot snapshot = s.store().snapshot();
    if (current != tenancy) {
      use(current);
    }
    var moves = MigrationProposals.inputs(s, snapshot.cluster(), migration);
    if (tenancy.isEmpty()) {
      return new Inputs(snapshot, Tenants.none(), moves);
    }
    Tenancy setup = tenancy.get();
    FairShareFactor fair = usage.update(s, capacity(snapshot.cluster()), CoreTime.sec(nowMs));
    factors = fair;
    usageView = usage.tracker() == null ? null : usage.tracker().copy();
    var histories = new HashMap<JobId, PreemptionHistory>();
    var preempting = new HashMap<JobId, JobId>();
    for (JobRecord j : s.jobsHoldingGpus()) {
      if (!j.preemptedAtSec.isEmpty()) {
        histories.put(JobId.of(j.id), preemptionBook.history(j.preemptedAtSec));
      }
      // Every victim still stopping, even one this leader did not propose (elected since).
      if (j.isBeingPreempted()) {
        preempting.put(JobId.of(j.id), JobId.of(j.preemptedBy));
      }
    }
    // Victims that have stopped keep their entry until their preemptor starts (bounded in time).
    preemptionBook.update(CoreTime.sec(nowMs), new RecordedJobs(id -> s.job(id).orElse(null)));
    preemptionBook.preempting().forEach(preempting::putIfAbsent);
    return new Inputs(
        snapshot,
        new Tenants(setup.config(), fair, histories, preempting, setup.settings()),
        moves);
  }

  private static Resources capacity(Cluster cluster) {
    long cpus = 0;
    long memory = 0;
    for (int i = 0; i < cluster.nodeCount(); i++) {
      cpus += cluster.cpuCount(i);
      memory += cluster.memoryBytes(i);
    }
    return new Resources(cluster.totalGpus(), cpus, memory);
  }

  private void publish(PassResult result, Forecast forecast) {
    var diagnosis = result.diagnosis();
    var map = new HashMap<Long, Pending>(diagnosis.size() * 2);
    var reserved = new HashMap<Long, Long>();
    for (Decision.Reserve r : result.reservations()) {
      reserved.put(r.job().value(), r.startSec());
    }
    for (int rank = 0; rank < diagnosis.size(); rank++) {
      var reason = diagnosis.reason(rank);
      if (reason.isPresent()) {
        long id = diagnosis.job(rank).id().value();
        map.put(
            id,
            new Pending(reason.get(), reserved.getOrDefault(id, -1L), diagnosis, rank, forecast));
      }
    }
    pending = map;
  }

  /** The core's placement as named tasks: one per node, ranks in node order (topology order). */
  static List<TaskPlacement> tasks(Cluster cluster, Placement placement) {
    var tasks = new ArrayList<TaskPlacement>();
    int rank = 0;
    for (int i = 0; i < placement.nodeCount(); i++) {
      String node = cluster.node(placement.node(i)).name();
      long mask = placement.gpuMask(i);
      int perTask = placement.tasksOn(i) == 0 ? 0 : Long.bitCount(mask) / placement.tasksOn(i);
      for (int t = 0; t < placement.tasksOn(i); t++) {
        var gpus = new ArrayList<Integer>(perTask);
        for (int k = 0; k < perTask; k++) {
          int g = Long.numberOfTrailingZeros(mask);
          gpus.add(g);
          mask &= mask - 1;
        }
        tasks.add(new TaskPlacement(rank++, node, gpus));
      }
    }
    return tasks;
  }

  private static void sleepQuietly(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
  }
}
