package io.kairos.control.state;

import io.kairos.protocol.JobState;
import io.kairos.protocol.TaskPlacement;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The replicated records, which a snapshot holds: every job and node and token, the user table, the
 * counters that hand out job ids, node epochs and queue positions, and the indexes over the jobs
 * (active, releasing, holding GPUs by node). It decides nothing: the parts of {@link ControlState}
 * change the records and keep the indexes in step through these methods. Everything else in the
 * state (the core's store, the queue gates) is derived from these records and rebuilt from them.
 *
 * <p>It also keeps the {@link Limits} and what counts against them: the weight ({@link
 * JobSize#weight}) of the active jobs, in all and per user, and of the ended jobs kept, with the
 * ended jobs that no longer hold GPUs in the order they ended (oldest first), for eviction.
 */
final class Records {
  /** Oldest-ended first, then by id: the order in which ended jobs are forgotten. */
  private static final Comparator<JobRecord> BY_END =
      Comparator.comparingLong((JobRecord j) -> j.endMs).thenComparingLong(j -> j.id);

  private long nextJobId = 1;
  private long nextEpoch = 1;

  /** Derived: one past the highest {@link JobRecord#queuedSeq}. */
  private long nextQueueSeq = 1;

  private final TreeMap<Long, JobRecord> jobs = new TreeMap<>();
  private final TreeMap<Long, JobRecord> active = new TreeMap<>();

  /** Jobs holding GPUs (running or releasing), by node: what a heartbeat and a node view read. */
  private final TreeMap<String, TreeSet<Long>> holdingByNode = new TreeMap<>();

  /** Ended jobs whose tasks are still stopping: they keep their GPUs (see JobRecord.releasing). */
  private final TreeMap<Long, JobRecord> releasing = new TreeMap<>();

  private final TreeMap<String, NodeRecord> nodes = new TreeMap<>();

  /** Derived: the node bound to each credential ({@link NodeRecord#credential}). */
  private final TreeMap<String, String> nodeByCredential = new TreeMap<>();

  private final TreeMap<String, TokenRecord> tokens = new TreeMap<>();

  /** Derived: the step credentials of each job, by job id (hashes). */
  private final TreeMap<Long, TreeSet<String>> jobTokens = new TreeMap<>();

  private final TreeMap<String, UserRecord> users = new TreeMap<>();

  /** Null until set: nothing is limited. */
  private Limits limits;

  /** The replicated configuration's versions. */
  final SiteConfigs configs = new SiteConfigs();

  /** Derived: the weight of the active jobs, in all and per user (users with none left out). */
  private long activeWeight;

  private final TreeMap<String, Long> activeWeightByUser = new TreeMap<>();

  /** Derived: the weight of the ended jobs kept. */
  private long endedWeight;

  /** Derived: ended jobs that hold no GPUs (so may be forgotten), oldest-ended first. */
  private final TreeSet<JobRecord> retired = new TreeSet<>(BY_END);

  /**
   * Derived: the same jobs by the order they joined {@link #retired} (a sequence number of this
   * object's own, not replicated), so the accounting writer finds the ones retired since its last
   * write without a walk of them all ({@link #retiredSince}).
   */
  private final TreeMap<Long, JobRecord> retiredBySeq = new TreeMap<>();

  private final HashMap<Long, Long> retiredSeqOf = new HashMap<>();
  private long lastRetiredSeq;

  /**
   * Derived: every job given a migration hold ({@link JobRecord#migrationTarget}) and not forgotten
   * since: a superset of the live jobs that hold nodes (a hold cleared leaves its id here), so the
   * scheduler's pass asks whether any hold is under way without a walk of every live job.
   */
  private final TreeSet<Long> migrationHolders = new TreeSet<>();

  // --- jobs ---

  /** A new job with the next id, PENDING and active. */
  JobRecord addJob(JobRequest request, ArrayElement array, long atMs) {
    var job = new JobRecord(nextJobId++, request, atMs);
    job.array = array;
    jobs.put(job.id, job);
    active.put(job.id, job);
    countActive(job, 1);
    return job;
  }

  /** The id the next job will get. */
  long nextJobId() {
    return nextJobId;
  }

  /** The next position in the queue: jobs join it in this order, live and after a rebuild. */
  long takeQueueSeq() {
    return nextQueueSeq++;
  }

  /** A job left PENDING and RUNNING for good (its end time set). */
  void ended(JobRecord job) {
    if (active.remove(job.id) == null) {
      return;
    }
    countActive(job, -1);
    endedWeight += JobSize.weight(job.request);
    if (!job.releasing) {
      retire(job);
    }
  }

  private void retire(JobRecord job) {
    if (retired.add(job)) {
      long seq = ++lastRetiredSeq;
      retiredBySeq.put(seq, job);
      retiredSeqOf.put(job.id, seq);
    }
  }

  private boolean unretire(JobRecord job) {
    if (!retired.remove(job)) {
      return false;
    }
    dropRetiredSeq(job.id);
    return true;
  }

  /** Takes a job that left {@link #retired} out of {@link #retiredBySeq}. */
  private void dropRetiredSeq(long jobId) {
    Long seq = retiredSeqOf.remove(jobId);
    if (seq != null) {
      retiredBySeq.remove(seq);
    }
  }

  /** An ended job keeps its GPUs while its tasks stop ({@code true}), or lets go of them. */
  void setReleasing(JobRecord job, boolean stillStopping) {
    job.releasing = stillStopping;
    if (stillStopping) {
      releasing.put(job.id, job);
      unretire(job);
    } else {
      releasing.remove(job.id);
      if (job.state.isFinal()) {
        retire(job);
      }
    }
  }

  private void countActive(JobRecord job, int sign) {
    long w = sign * JobSize.weight(job.request);
    activeWeight += w;
    long left = activeWeightByUser.getOrDefault(job.request.user(), 0L) + w;
    if (left == 0) {
      activeWeightByUser.remove(job.request.user());
    } else {
      activeWeightByUser.put(job.request.user(), left);
    }
  }

  // --- limits ---

  /** The limits; null while none are set. */
  Limits limits() {
    return limits;
  }

  void setLimits(Limits limits) {
    this.limits = limits;
  }

  /** The weight of all pending and running jobs. */
  long activeWeight() {
    return activeWeight;
  }

  /** The weight of {@code user}'s pending and running jobs. */
  long activeWeightOf(String user) {
    return activeWeightByUser.getOrDefault(user, 0L);
  }

  /** The weight of the ended jobs kept. */
  long endedWeight() {
    return endedWeight;
  }

  /**
   * Forgets ended jobs, oldest-ended first, until the ended jobs kept weigh at most {@code max};
   * jobs that still hold GPUs, and those {@code pinned} says must stay, are kept and passed over.
   * Deterministic: the order is the records' own (end time, then id). Cost: the jobs forgotten plus
   * the pinned ones passed over.
   *
   * @return how many jobs it forgot
   */
  int evictEnded(
      long max, java.util.function.Predicate<JobRecord> pinned, List<JobRecord> evictedJobs) {
    int evicted = 0;
    for (Iterator<JobRecord> it = retired.iterator(); endedWeight > max && it.hasNext(); ) {
      JobRecord j = it.next();
      if (pinned.test(j)) {
        continue;
      }
      it.remove();
      dropRetiredSeq(j.id);
      jobs.remove(j.id);
      migrationHolders.remove(j.id);
      endedWeight -= JobSize.weight(j.request);
      evictedJobs.add(j);
      evicted++;
    }
    return evicted;
  }

  /** Ended jobs that hold no GPUs, oldest-ended first. */
  Collection<JobRecord> retiredJobs() {
    return Collections.unmodifiableCollection(retired);
  }

  /**
   * The ended jobs that hold no GPUs which joined them after sequence number {@code seq}, by that
   * number (1 is the first this object retired; a job that leaves and joins again gets a new one).
   */
  java.util.SortedMap<Long, JobRecord> retiredSince(long seq) {
    return Collections.unmodifiableSortedMap(retiredBySeq.tailMap(seq, false));
  }

  /** Forgets one ended job that holds no GPUs (the caller checked). */
  void forget(JobRecord job) {
    if (unretire(job) && jobs.remove(job.id) != null) {
      migrationHolders.remove(job.id);
      endedWeight -= JobSize.weight(job.request);
    }
  }

  /** The job's current placement now holds GPUs on its nodes. */
  void indexHolding(JobRecord job) {
    for (TaskPlacement t : job.placement) {
      holdingByNode.computeIfAbsent(t.node(), n -> new TreeSet<>()).add(job.id);
    }
  }

  /** The job's current placement no longer holds GPUs. */
  void unindexHolding(JobRecord job) {
    for (TaskPlacement t : job.placement) {
      var ids = holdingByNode.get(t.node());
      if (ids != null) {
        ids.remove(job.id);
        if (ids.isEmpty()) {
          holdingByNode.remove(t.node());
        }
      }
    }
  }

  /** Rebuilds the holding index from the jobs; returns the jobs holding GPUs, by id. */
  List<JobRecord> reindexHolding() {
    holdingByNode.clear();
    List<JobRecord> holding = jobsHoldingGpus();
    holding.forEach(this::indexHolding);
    return holding;
  }

  JobRecord job(long id) {
    return jobs.get(id);
  }

  Collection<JobRecord> jobs() {
    return Collections.unmodifiableCollection(jobs.values());
  }

  /** Pending and running jobs, by id. */
  Collection<JobRecord> activeJobs() {
    return Collections.unmodifiableCollection(active.values());
  }

  /** The job was just given a migration hold ({@link JobRecord#migrationTarget}). */
  void heldForMigration(JobRecord job) {
    migrationHolders.add(job.id);
  }

  /** Whether a pending or running job holds nodes for a move (its migration target is set). */
  boolean anyMigrationHold() {
    for (long id : migrationHolders) {
      JobRecord j = active.get(id);
      if (j != null && !j.migrationTarget.isEmpty()) {
        return true;
      }
    }
    return false;
  }

  /** Jobs holding GPUs: running, and ended ones whose tasks are still stopping; by id. */
  List<JobRecord> jobsHoldingGpus() {
    var out = new ArrayList<JobRecord>();
    for (JobRecord j : active.values()) {
      if (j.state == JobState.RUNNING) {
        out.add(j);
      }
    }
    out.addAll(releasing.values());
    out.sort(Comparator.comparingLong(j -> j.id));
    return out;
  }

  /** Jobs holding GPUs on {@code node} (running, or ended and still stopping), by id. */
  List<JobRecord> jobsHoldingGpusOn(String node) {
    var ids = holdingByNode.get(node);
    if (ids == null) {
      return List.of();
    }
    var out = new ArrayList<JobRecord>(ids.size());
    for (long id : ids) {
      out.add(jobs.get(id));
    }
    return out;
  }

  // --- nodes and tokens ---

  NodeRecord node(String name) {
    return nodes.get(name);
  }

  /** The node's record, created (UP, no registration yet) the first time it is named. */
  NodeRecord nodeOrNew(String name) {
    return nodes.computeIfAbsent(name, NodeRecord::new);
  }

  /** Every node, by name. */
  Collection<NodeRecord> nodes() {
    return Collections.unmodifiableCollection(nodes.values());
  }

  /** The node bound to {@code credential}, if any. */
  String nodeWithCredential(String credential) {
    return nodeByCredential.get(credential);
  }

  /** Binds {@code node} to {@code credential} (null: to none), replacing what it had. */
  void bindCredential(NodeRecord node, String credential) {
    if (node.credential != null) {
      nodeByCredential.remove(node.credential);
    }
    node.credential = credential;
    if (credential != null) {
      nodeByCredential.put(credential, node.name);
    }
  }

  /** A new lease epoch: higher than every one handed out before. */
  long takeEpoch() {
    return nextEpoch++;
  }

  /** Adds a token; one already there is kept as it is. */
  void addToken(TokenRecord token) {
    if (tokens.putIfAbsent(token.sha256(), token) == null) {
      indexJobToken(token);
    }
  }

  private void indexJobToken(TokenRecord token) {
    long job = TokenRecord.scopedJob(token.scope());
    if (job > 0) {
      jobTokens.computeIfAbsent(job, j -> new TreeSet<>()).add(token.sha256());
    }
  }

  /** Drops the job's step credentials: the attempt they were for has stopped running. */
  void removeJobTokens(long jobId) {
    var hashes = jobTokens.remove(jobId);
    if (hashes != null) {
      hashes.forEach(tokens::remove);
    }
  }

  TokenRecord token(String sha256) {
    return tokens.get(sha256);
  }

  /** Marks a token revoked; false when there is none of that hash. */
  boolean revokeToken(String sha256, long atMs) {
    TokenRecord t = tokens.get(sha256);
    if (t == null) {
      return false;
    }
    if (!t.isRevoked()) {
      tokens.put(sha256, t.revoked(atMs));
    }
    return true;
  }

  /**
   * Records a token's use at {@code atMs} when later than the one known; unknown hashes are left.
   */
  void tokenUsed(String sha256, long atMs) {
    TokenRecord t = tokens.get(sha256);
    if (t != null) {
      tokens.put(sha256, t.usedAt(atMs));
    }
  }

  int tokenCount() {
    return tokens.size();
  }

  /** Every token, by hash. */
  Collection<TokenRecord> tokens() {
    return Collections.unmodifiableCollection(tokens.values());
  }

  // --- the user table ---

  /** Sets the user's row, replacing an earlier one. */
  void setUser(UserRecord user) {
    users.put(user.name(), user);
  }

  UserRecord user(String name) {
    return users.get(name);
  }

  /** Every row, by name. */
  Collection<UserRecord> users() {
    return Collections.unmodifiableCollection(users.values());
  }

  // --- snapshots ---

  /**
   * A copy of the records, for a snapshot: taken under the read lock (a few milliseconds for
   * 100,000 jobs), serialized after it is released, so writes are not held up by the encoding.
   * Finished jobs never change again and are shared; active ones are copied.
   */
  StateImage image() {
    var jobCopies = new ArrayList<JobRecord>(jobs.size());
    for (JobRecord j : jobs.values()) {
      jobCopies.add(j.isActive() || j.releasing ? j.copy() : j);
    }
    var nodeCopies = new ArrayList<NodeRecord>(nodes.size());
    for (NodeRecord n : nodes.values()) {
      nodeCopies.add(n.copy());
    }
    return new StateImage(
        StateImage.VERSION,
        nextJobId,
        nextEpoch,
        jobCopies,
        nodeCopies,
        List.copyOf(tokens.values()),
        List.copyOf(users.values()),
        limits,
        configs.history());
  }

  /** The records of a snapshot; the holding index is left to the rebuild that follows. */
  static Records of(StateImage image) {
    if (image.version() != StateImage.VERSION) {
      throw new IllegalArgumentException("snapshot version " + image.version() + " is unknown");
    }
    var r = new Records();
    r.nextJobId = image.nextJobId();
    r.nextEpoch = image.nextEpoch();
    r.limits = image.limits();
    r.configs.restore(image.configs());
    for (JobRecord job : image.jobs()) {
      r.nextQueueSeq = Math.max(r.nextQueueSeq, job.queuedSeq + 1);
      r.jobs.put(job.id, job);
      if (!job.migrationTarget.isEmpty()) {
        r.migrationHolders.add(job.id);
      }
      if (job.isActive()) {
        r.active.put(job.id, job);
        r.countActive(job, 1);
      } else {
        r.endedWeight += JobSize.weight(job.request);
        if (!job.releasing) {
          r.retire(job);
        }
      }
      if (job.releasing) {
        r.releasing.put(job.id, job);
      }
    }
    for (NodeRecord node : image.nodes()) {
      r.nodes.put(node.name, node);
      if (node.credential != null) {
        r.nodeByCredential.put(node.credential, node.name);
      }
    }
    for (TokenRecord token : image.tokens()) {
      r.tokens.put(token.sha256(), token);
      r.indexJobToken(token);
    }
    for (UserRecord user : image.users()) {
      r.users.put(user.name(), user);
    }
    return r;
  }
}
