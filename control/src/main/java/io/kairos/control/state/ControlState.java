package io.kairos.control.state;

import io.kairos.control.state.ControlCommand.AddToken;
import io.kairos.control.state.ControlCommand.AddTokens;
import io.kairos.control.state.ControlCommand.ApplyConfig;
import io.kairos.control.state.ControlCommand.CancelJob;
import io.kairos.control.state.ControlCommand.CancelStep;
import io.kairos.control.state.ControlCommand.DrainNode;
import io.kairos.control.state.ControlCommand.EndMigrationHold;
import io.kairos.control.state.ControlCommand.ForgetJobs;
import io.kairos.control.state.ControlCommand.GpusUnhealthy;
import io.kairos.control.state.ControlCommand.MigrateJob;
import io.kairos.control.state.ControlCommand.NodeDown;
import io.kairos.control.state.ControlCommand.PreemptJobs;
import io.kairos.control.state.ControlCommand.RecordCheckpoint;
import io.kairos.control.state.ControlCommand.RegisterNode;
import io.kairos.control.state.ControlCommand.RegisterNodes;
import io.kairos.control.state.ControlCommand.ResetNode;
import io.kairos.control.state.ControlCommand.ResizeJob;
import io.kairos.control.state.ControlCommand.ResumeNode;
import io.kairos.control.state.ControlCommand.ReturnGpu;
import io.kairos.control.state.ControlCommand.RevokeToken;
import io.kairos.control.state.ControlCommand.SetLimits;
import io.kairos.control.state.ControlCommand.SetUser;
import io.kairos.control.state.ControlCommand.SettleNodes;
import io.kairos.control.state.ControlCommand.StartJobs;
import io.kairos.control.state.ControlCommand.StartStep;
import io.kairos.control.state.ControlCommand.SubmitJobs;
import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.control.state.ControlCommand.TasksEnded;
import io.kairos.control.state.ControlCommand.TokensUsed;
import io.kairos.core.model.JobSpec;
import io.kairos.core.state.ClusterStore;
import io.kairos.core.state.Reducer;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * The controller's replicated state and its deterministic transitions.
 *
 * <p>Holds every job (active and finished), every node and every token ({@link Records}), plus the
 * core's {@link ClusterStore} for the queued and running jobs on the registered nodes ({@link
 * CoreBridge}) and the gates that keep other pending jobs out of it ({@link QueueGates}). The store
 * and the gates are derived: they are rebuilt from the records when the set of nodes changes, and
 * otherwise kept in step by applying core commands through the core's {@link Reducer}. So the store
 * never disagrees with the records, and a snapshot needs only the records.
 *
 * <p>Registering a node costs O(1) (plus its own jobs): an agent that registers again with the same
 * shape only updates the store in place, and a new node (or one with other hardware) marks the
 * store stale ({@link #storeIsStale}). The next command that reads the store (any but the token and
 * user-table ones) rebuilds it before it applies (O(nodes + jobs), deterministic: every replica
 * does it at the same log position), so a burst of N registrations costs one rebuild instead of N
 * (O(N) in all, not O(N^2)); the leader's scheduler proposes {@link SettleNodes} when registrations
 * are all that came. Readers may meanwhile see the store as it was before the burst (without the
 * new nodes), never a half-built one.
 *
 * <p>A command goes to the part that owns it: {@link JobLifecycle} (submit, cancel, start, preempt,
 * a task's end) or {@link NodeRegistry} (register, down, drain, resume). Then the jobs waiting on
 * those that started or ended in it are looked at again.
 *
 * <p>Single writer (the Ratis apply thread), not thread-safe: {@code StateMachine} guards it with a
 * read-write lock. No clock, no I/O, no randomness; ids and epochs are counters in the state, so
 * every replica assigns the same ones.
 */
public final class ControlState {
  /** The exit code recorded for a task lost with its node. */
  public static final int LOST_EXIT_CODE = -1;

  private final Records records;
  private final CoreBridge core = new CoreBridge();
  private final QueueGates gates;
  private final JobLifecycle lifecycle;
  private final JobSteps steps;
  private final NodeRegistry nodeRegistry;
  private long version;

  /** Nodes were registered or changed since the store was built: rebuild before the next use. */
  private boolean storeStale;

  /** Jobs forgotten since {@link #takeForgotten} was last called. */
  private List<JobRecord> forgotten = new java.util.ArrayList<>();

  public ControlState() {
    this(new Records());
  }

  private ControlState(Records records) {
    this.records = records;
    this.gates = new QueueGates(records, core);
    var suspects = new Suspects(records, core);
    this.lifecycle = new JobLifecycle(records, core, gates, suspects);
    this.steps = new JobSteps(records, lifecycle);
    this.nodeRegistry =
        new NodeRegistry(
            records, core, lifecycle, steps, suspects, () -> storeStale = true, () -> storeStale);
    rebuildStore();
  }

  /** Applies one command; a command whose preconditions fail changes nothing. */
  public ControlResult apply(ControlCommand command) {
    version++;
    if (storeStale && readsTheStore(command)) {
      rebuildStore();
    }
    ControlResult result =
        switch (command) {
          case SubmitJobs c -> lifecycle.submit(c);
          case CancelJob c -> lifecycle.cancel(c);
          case StartJobs c -> lifecycle.start(c);
          case PreemptJobs c -> lifecycle.preempt(c);
          case ResizeJob c -> lifecycle.resize(c);
          case MigrateJob c -> lifecycle.migrate(c);
          case EndMigrationHold c -> JobMigrations.endHold(records, c);
          case TaskEnded c -> taskEnded(c);
          case TasksEnded c -> endAll(c);
          case StartStep c -> steps.start(c);
          case CancelStep c -> steps.cancel(c);
          case RegisterNode c -> nodeRegistry.register(c);
          case RegisterNodes c -> registerAll(c);
          case NodeDown c -> nodeRegistry.nodeDown(c);
          case DrainNode c -> nodeRegistry.drain(c);
          case ResumeNode c -> nodeRegistry.resume(c);
          case ResetNode c -> nodeRegistry.reset(c);
          case GpusUnhealthy c -> nodeRegistry.gpusUnhealthy(c);
          case ReturnGpu c -> nodeRegistry.returnGpu(c);
          case SettleNodes c -> ControlResult.OK;
          case AddToken c -> addToken(c.token());
          case AddTokens c ->
              ControlResult.ofItems(c.tokens().stream().map(this::addToken).toList());
          case SetUser c -> {
            records.setUser(c.user());
            yield ControlResult.OK;
          }
          case SetLimits c -> setLimits(c);
          case RevokeToken c ->
              records.revokeToken(c.sha256(), c.atMs())
                  ? ControlResult.OK
                  : ControlResult.notFound("no token " + c.sha256());
          case ApplyConfig c -> records.configs.apply(c, records);
          case RecordCheckpoint c -> JobCheckpoints.record(records.job(c.jobId()), c);
          case TokensUsed c -> {
            c.lastUsedMs().forEach(records::tokenUsed);
            yield ControlResult.OK;
          }
          case ForgetJobs c -> forget(c);
        };
    lifecycle.settleDependencies(command.atMs());
    forgetEndedBeyondLimit();
    return result;
  }

  /**
   * Whether applying {@code command} reads or changes the scheduler's store or gates (so a stale
   * store is rebuilt first): every command but a registration and the token and user-table ones.
   */
  private static boolean readsTheStore(ControlCommand command) {
    return !(command instanceof RegisterNode
        || command instanceof RegisterNodes
        || command instanceof TokensUsed
        || command instanceof AddToken
        || command instanceof AddTokens
        || command instanceof RevokeToken
        || command instanceof SetUser);
  }

  private ControlResult taskEnded(TaskEnded c) {
    return c.step() == null ? lifecycle.taskEnded(c) : steps.taskEnded(c);
  }

  /** Each task end in turn, as {@link #apply} would one entry of its own. */
  private ControlResult endAll(TasksEnded c) {
    var results = new java.util.ArrayList<ControlResult>(c.ends().size());
    for (int i = 0; i < c.ends().size(); i++) {
      TaskEnded e = c.ends().get(i);
      results.add(taskEnded(e));
      if (i < c.ends().size() - 1) { // apply() settles after the last one
        lifecycle.settleDependencies(e.atMs());
        forgetEndedBeyondLimit();
      }
    }
    return ControlResult.ofItems(results);
  }

  /** Each registration in turn, as {@link #apply} would one entry of its own. */
  private ControlResult registerAll(RegisterNodes c) {
    var results = new java.util.ArrayList<ControlResult>(c.nodes().size());
    for (int i = 0; i < c.nodes().size(); i++) {
      RegisterNode r = c.nodes().get(i);
      results.add(nodeRegistry.register(r));
      if (i < c.nodes().size() - 1) { // apply() settles after the last one
        lifecycle.settleDependencies(r.atMs());
        forgetEndedBeyondLimit();
      }
    }
    return ControlResult.ofItems(results);
  }

  /**
   * Adds a token. A job's step credential only while the attempt it names runs: one minted for an
   * attempt that has already stopped would outlive the removal that came with its end.
   */
  private ControlResult addToken(TokenRecord token) {
    long jobId = TokenRecord.scopedJob(token.scope());
    if (jobId > 0) {
      JobRecord job = records.job(jobId);
      if (job == null
          || job.state != io.kairos.protocol.JobState.RUNNING
          || job.attempt != TokenRecord.scopedAttempt(token.scope())) {
        return ControlResult.conflict("job " + jobId + " does not run that attempt any more");
      }
    }
    records.addToken(token);
    return ControlResult.OK;
  }

  /** A step of a job, if the job keeps it. */
  public Optional<StepRecord> step(long jobId, int step) {
    JobRecord job = records.job(jobId);
    return Optional.ofNullable(job == null ? null : JobSteps.find(job, step));
  }

  /**
   * How {@code request} would be laid out in the job's allocation now, or why it cannot: what the
   * API checks before it proposes the step (the log's apply decides again).
   *
   * @throws IllegalArgumentException with Slurm's words
   */
  public static io.kairos.protocol.slurm.StepLayout stepLayout(JobRecord job, StepRequest request) {
    return JobSteps.layout(job, request).layout();
  }

  private ControlResult setLimits(SetLimits c) {
    if (c.onlyIfUnset() && records.limits() != null) {
      return ControlResult.conflict("limits are set already");
    }
    records.setLimits(c.limits());
    return ControlResult.OK;
  }

  /**
   * Forgets the oldest-ended jobs beyond {@link Limits#maxEndedJobs}, except those a waiting job's
   * dependency names (directly or through their array): its verdict must not change because a job
   * it looks at was forgotten. (A backstop for the heap: the accounting writer normally forgets
   * ended jobs long before, once they are in its store.)
   */
  private void forgetEndedBeyondLimit() {
    Limits limits = records.limits();
    if (limits != null && records.endedWeight() > limits.maxEndedJobs()) {
      records.evictEnded(limits.maxEndedJobs(), gates::isNamedByWaitingJob, forgotten);
    }
  }

  /** The jobs {@link ForgetJobs} names that are ended, hold no GPUs and no waiting job names. */
  private ControlResult forget(ForgetJobs c) {
    for (long id : c.jobIds()) {
      JobRecord j = records.job(id);
      if (j != null && isForgettable(j)) {
        records.forget(j);
        forgotten.add(j);
      }
    }
    return ControlResult.OK;
  }

  /**
   * The jobs the state forgot since the last call (a {@link ForgetJobs}, or the limit's eviction),
   * in the order it forgot them; the list is handed over and the state starts a new one. The state
   * machine writes them to a replica-local accounting store before the entry counts as applied.
   */
  public List<JobRecord> takeForgotten() {
    if (forgotten.isEmpty()) {
      return List.of();
    }
    var out = forgotten;
    forgotten = new java.util.ArrayList<>();
    return out;
  }

  /** The store from the records: running jobs first (with their placements), then pending. */
  private void rebuildStore() {
    storeStale = false;
    core.rebuild(records.nodes(), records.reindexHolding());
    gates.rebuild(records.activeJobs());
  }

  /** The core's spec of a request, kept away from {@code avoidNodes} too. */
  public static JobSpec spec(JobRequest r, List<String> avoidNodes) {
    return CoreBridge.spec(r, avoidNodes);
  }

  // --- reads (callers hold the read lock) ---

  public long version() {
    return version;
  }

  /**
   * Whether nodes registered since the store was built (it lacks them until the next command other
   * than a registration, such as {@link SettleNodes}).
   */
  public boolean storeIsStale() {
    return storeStale;
  }

  /**
   * The core's store of active jobs on registered nodes; null while no node is registered. While
   * {@link #storeIsStale}, the store as it was before the latest registrations.
   */
  public ClusterStore store() {
    return core.store();
  }

  public Optional<JobRecord> job(long id) {
    return Optional.ofNullable(records.job(id));
  }

  /** Every job, by id. */
  public Collection<JobRecord> jobs() {
    return records.jobs();
  }

  /** How many jobs the state keeps (active and ended). */
  public int jobCount() {
    return records.jobs().size();
  }

  /** Jobs holding GPUs: running, and ended ones whose tasks are still stopping; by id. */
  public List<JobRecord> jobsHoldingGpus() {
    return records.jobsHoldingGpus();
  }

  /** Jobs holding GPUs on {@code node} (running, or ended and still stopping), by id. */
  public List<JobRecord> jobsHoldingGpusOn(String node) {
    return records.jobsHoldingGpusOn(node);
  }

  /** Pending and running jobs, by id. */
  public Collection<JobRecord> activeJobs() {
    return records.activeJobs();
  }

  /**
   * Whether a pending or running job holds nodes for a move ({@link JobRecord#migrationTarget}):
   * O(jobs given a hold and kept), not O(live jobs).
   */
  public boolean anyMigrationHold() {
    return records.anyMigrationHold();
  }

  public boolean isUnplaceable(long jobId) {
    return gates.isUnplaceable(jobId);
  }

  /** Whether a pending job waits for its dependencies (and is not in the store). */
  public boolean isWaitingOnDependency(long jobId) {
    return gates.isWaitingOnDependency(jobId);
  }

  /** What a pending job's dependency waits for, in words; empty when it does not wait. */
  public Optional<String> dependencyDetail(long jobId) {
    return gates.dependencyDetail(jobId);
  }

  /** Whether a pending array element waits for its array's limit (and is not in the store). */
  public boolean isHeldByArrayLimit(long jobId) {
    var j = records.job(jobId);
    return j != null && gates.isHeldByArrayLimit(j);
  }

  /** An array's elements running or queued, against its limit; 0 for an array without one. */
  public int arrayAdmitted(long arrayJobId) {
    return gates.arrayAdmitted(arrayJobId);
  }

  public Collection<NodeRecord> nodes() {
    return records.nodes();
  }

  public Optional<NodeRecord> node(String name) {
    return Optional.ofNullable(records.node(name));
  }

  public Optional<TokenRecord> token(String sha256) {
    return Optional.ofNullable(records.token(sha256));
  }

  /** The node bound to {@code credential} ({@link NodeRecord#credential}), if any. */
  public Optional<String> nodeWithCredential(String credential) {
    return Optional.ofNullable(records.nodeWithCredential(credential));
  }

  public int tokenCount() {
    return records.tokenCount();
  }

  /** Every token, by hash. */
  public Collection<TokenRecord> tokens() {
    return records.tokens();
  }

  /** The user's row in the user table; empty when an admin set none (the account is the name). */
  public Optional<UserRecord> user(String name) {
    return Optional.ofNullable(records.user(name));
  }

  /** The user table, by name. */
  public Collection<UserRecord> users() {
    return records.users();
  }

  /**
   * Why no node can run a pending job that is held as unplaceable, when the reason is its Unix
   * account: the nodes whose agents run as another account (not root), which the job could
   * otherwise use. Empty when the account is not what keeps it out.
   */
  public Optional<String> accountBlock(long jobId) {
    var j = records.job(jobId);
    return j == null || !gates.isUnplaceable(jobId)
        ? Optional.empty()
        : core.accountBlock(j, records.nodes());
  }

  public long nextJobId() {
    return records.nextJobId();
  }

  /** The replicated configuration's current version; empty until one is applied. */
  public Optional<ConfigVersion> config() {
    return records.configs.current();
  }

  /** The replicated configuration's kept versions, oldest first. */
  public List<ConfigVersion> configHistory() {
    return records.configs.history();
  }

  /** The limits in force; empty until set (then nothing is limited). */
  public Optional<Limits> limits() {
    return Optional.ofNullable(records.limits());
  }

  /** What counts against {@link Limits#maxLiveJobs}: the weight of all pending and running jobs. */
  public long liveWeight() {
    return records.activeWeight();
  }

  /** What counts against {@code user}'s {@link Limits#maxJobsOf}. */
  public long liveWeightOf(String user) {
    return records.activeWeightOf(user);
  }

  /** Whether an ended job is kept beyond {@link Limits#maxEndedJobs} for a waiting dependency. */
  boolean isKeptForDependency(JobRecord job) {
    return gates.isNamedByWaitingJob(job);
  }

  /**
   * Ended jobs that hold no GPUs, oldest-ended first (then by id): what the accounting writer
   * writes and, once written, proposes to forget.
   */
  public Collection<JobRecord> retiredJobs() {
    return records.retiredJobs();
  }

  /**
   * The {@link #retiredJobs} that joined them after sequence number {@code seq}, by that number: a
   * derived order of this object's own (a state loaded from a snapshot numbers them afresh), for
   * the accounting writer to find what it has not written without a walk of every job kept.
   */
  public java.util.SortedMap<Long, JobRecord> retiredSince(long seq) {
    return records.retiredSince(seq);
  }

  /** Whether a {@link ForgetJobs} naming {@code job} would forget it now. */
  public boolean isForgettable(JobRecord job) {
    return job.state.isFinal() && !job.releasing && !gates.isNamedByWaitingJob(job);
  }

  /** What counts against {@link Limits#maxEndedJobs}: the weight of the ended jobs kept. */
  public long endedWeight() {
    return records.endedWeight();
  }

  // --- snapshots ---

  /**
   * A copy of the records, for a snapshot: taken under the read lock (a few milliseconds for
   * 100,000 jobs), serialized after it is released, so writes are not held up by the encoding.
   * Finished jobs never change again and are shared; active ones are copied.
   */
  public StateImage image() {
    return records.image();
  }

  public static ControlState of(StateImage image) {
    return new ControlState(Records.of(image));
  }
}
