package io.kairos.control.state;

import io.kairos.control.state.ControlCommand.ResizeJob;
import io.kairos.protocol.JobState;
import io.kairos.protocol.TaskPlacement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;

/**
 * Resizes of running elastic jobs, as the scheduler decides them ({@link ResizeJob}).
 *
 * <ul>
 *   <li><b>Grow</b>: the new tasks get the next ranks and start at once on their nodes (the
 *       reconciler launches them); the store holds their GPUs from the command on.
 *   <li><b>Shrink</b>: the leaving ranks are marked {@link JobRecord#leaving}. A job that declares
 *       checkpoints is asked for one first (every task gets the checkpoint signal, as for a
 *       preemption), then, once the checkpoint is recorded or its timeout has passed, the leaving
 *       tasks get the stop signal. As each one's end is reported it is {@link JobRecord#left}: its
 *       GPUs are let go in the store and its end is no failure of the job.
 * </ul>
 *
 * Each completed resize is in the job's history ({@link JobRecord#resizes}). An elastic job has one
 * task per node, so a rank is a node.
 */
public final class ElasticResizes {
  /** Resizes kept in a job's history. */
  static final int KEPT = 32;

  private final Records records;
  private final CoreBridge core;

  ElasticResizes(Records records, CoreBridge core) {
    this.records = records;
    this.core = core;
  }

  ControlResult apply(ResizeJob c) {
    JobRecord job = records.job(c.jobId());
    if (job == null || !resizable(job) || job.attempt != c.attempt() || !core.hasStore()) {
      return ControlResult.conflict("job " + c.jobId() + " cannot be resized now");
    }
    List<TaskPlacement> live = liveTasks(job);
    if (live.size() != c.fromNodes() || c.add().isEmpty() == c.remove().isEmpty()) {
      return ControlResult.conflict("a stale resize of job " + job.id);
    }
    int to = live.size() + c.add().size() - c.remove().size();
    if (to < job.request.tasks() || to > job.request.maxTasks()) {
      return ControlResult.conflict(
          "job "
              + job.id
              + " runs on "
              + job.request.tasks()
              + " to "
              + job.request.maxTasks()
              + " nodes, not "
              + to);
    }
    return c.add().isEmpty() ? shrink(job, c) : grow(job, c, live);
  }

  private ControlResult grow(JobRecord job, ResizeJob c, List<TaskPlacement> live) {
    var nodes = new HashSet<String>();
    live.forEach(t -> nodes.add(t.node()));
    for (int i = 0; i < c.add().size(); i++) {
      TaskPlacement t = c.add().get(i);
      if (t.task() != job.placement.size() + i || !nodes.add(t.node())) {
        return ControlResult.conflict("job " + job.id + ": new tasks must take the next ranks");
      }
    }
    var grown = new ArrayList<>(live);
    grown.addAll(c.add());
    if (!core.resize(job, grown, c.atMs())) {
      return ControlResult.conflict("job " + job.id + ": the new nodes are no longer free");
    }
    var placement = new ArrayList<>(job.placement);
    placement.addAll(c.add());
    job.placement = List.copyOf(placement);
    job.taskExits.addAll(Collections.nCopies(c.add().size(), (Integer) null));
    records.indexHolding(job);
    history(job, c.atMs(), live.size(), grown.size(), "grew into idle nodes");
    return ControlResult.ok(List.of(job.id));
  }

  private ControlResult shrink(JobRecord job, ResizeJob c) {
    for (int rank : c.remove()) {
      if (rank < 0
          || rank >= job.placement.size()
          || job.taskExits.get(rank) != null
          || job.left.contains(rank)
          || rank == firstLiveRank(job)) {
        return ControlResult.conflict("job " + job.id + ": rank " + rank + " cannot leave");
      }
    }
    job.leaving = List.copyOf(new java.util.TreeSet<>(c.remove()));
    job.message =
        "shrinking from "
            + c.fromNodes()
            + " to "
            + (c.fromNodes() - c.remove().size())
            + " nodes"
            + (c.beneficiary() == 0 ? "" : " for job " + c.beneficiary());
    if (job.request.checkpoint() != null) {
      job.checkpointAskedMs = Math.max(1, c.atMs());
      job.checkpointCountAtAsk = job.checkpointCount;
    }
    return ControlResult.ok(List.of(job.id));
  }

  /**
   * A task of {@code job} ended: true when it was leaving (then it has left, its GPUs are free in
   * the store, and its end is no failure of the job).
   */
  boolean taskLeft(JobRecord job, int task, long atMs) {
    if (!job.leaving.contains(task)) {
      return false;
    }
    int before = liveTasks(job).size();
    var leaving = new ArrayList<>(job.leaving);
    leaving.remove(Integer.valueOf(task));
    var left = new ArrayList<>(job.left);
    left.add(task);
    job.leaving = List.copyOf(leaving);
    job.left = List.copyOf(left);
    core.resize(job, liveTasks(job), atMs);
    if (leaving.isEmpty()) {
      job.checkpointAskedMs = 0;
      job.message = null;
    }
    history(job, atMs, before, before - 1, "shrank");
    return true;
  }

  /**
   * Whether {@code job} may be resized now: a running elastic job, not stopping, with no shrink
   * under way (its leaving ranks have all ended). The scheduler proposes no resize otherwise, so a
   * pass that still sees the leaving nodes held does not propose the same shrink again.
   */
  public static boolean resizable(JobRecord job) {
    return job.state == JobState.RUNNING
        && !job.releasing
        && !job.requeueing
        && job.request.isElastic()
        && job.leaving.isEmpty();
  }

  /** Forgets an attempt's resizes in progress (it ended or is requeued). */
  static void attemptEnded(JobRecord job) {
    job.leaving = List.of();
    job.left = List.of();
  }

  /**
   * Whether a shrink waits for the job's checkpoint: asked, none newer recorded, timeout not past.
   */
  public static boolean awaitsCheckpoint(JobRecord job, long nowMs) {
    var policy = job.request.checkpoint();
    return policy != null
        && !job.leaving.isEmpty()
        && job.checkpointAskedMs > 0
        && job.checkpointCount == job.checkpointCountAtAsk
        && nowMs < job.checkpointAskedMs + policy.timeoutSec() * 1000;
  }

  /** The tasks of the current attempt that hold GPUs: all but those that left, in rank order. */
  public static List<TaskPlacement> liveTasks(JobRecord job) {
    if (job.left.isEmpty()) {
      return job.placement;
    }
    var live = new ArrayList<TaskPlacement>(job.placement.size());
    for (TaskPlacement t : job.placement) {
      if (!job.left.contains(t.task())) {
        live.add(t);
      }
    }
    return live;
  }

  /**
   * Whether {@code rank} of {@code job}'s current attempt was added by a grow, not one of the ranks
   * the attempt started with: it joins a gang that has started, so it waits at no start barrier.
   * Read from the replicated history ({@link JobRecord#resizes}), so every leader answers alike; if
   * the history no longer holds all of the attempt's grows, fewer ranks count as added, never more.
   */
  public static boolean addedByGrow(JobRecord job, int rank) {
    if (!job.request.isElastic()) {
      return false;
    }
    int added = 0;
    for (ResizeEntry e : job.resizes) {
      if (e.attempt() == job.attempt && e.toNodes() > e.fromNodes()) {
        added += e.toNodes() - e.fromNodes();
      }
    }
    return added > 0 && rank >= job.placement.size() - added;
  }

  /** The lowest live rank: it hosts the rendezvous, and never leaves. */
  static int firstLiveRank(JobRecord job) {
    List<TaskPlacement> live = liveTasks(job);
    return live.isEmpty() ? -1 : live.getFirst().task();
  }

  /** The first port of the rendezvous endpoints Kairos gives elastic jobs (one per job id). */
  public static final int RDZV_PORT_BASE = 28_400;

  /**
   * {@code env} with what an elastic job's task is told of its size (unchanged for a job of a fixed
   * size): {@code KAIROS_NNODES} (its live nodes when the task is launched), {@code
   * KAIROS_NNODES_MIN} and {@code KAIROS_NNODES_MAX}, {@code KAIROS_NPROC_PER_NODE}, and {@code
   * KAIROS_RDZV_ENDPOINT}, host:port on the job's first node (which never leaves) for torchrun's
   * {@code --rdzv-backend=c10d --rdzv-endpoint}. The job's own variables win.
   *
   * @param host the address of the job's first node; null when unknown (then no endpoint)
   */
  public static java.util.Map<String, String> env(
      JobRecord job, java.util.Map<String, String> env, String host) {
    var r = job.request;
    if (!r.isElastic()) {
      return env;
    }
    var out = new java.util.TreeMap<String, String>();
    out.put("KAIROS_NNODES", Integer.toString(liveTasks(job).size() - job.leaving.size()));
    out.put("KAIROS_NNODES_MIN", Integer.toString(r.tasks()));
    out.put("KAIROS_NNODES_MAX", Integer.toString(r.maxTasks()));
    out.put("KAIROS_NPROC_PER_NODE", Integer.toString(r.taskLayout().perNode(1).getFirst()));
    if (host != null) {
      String h = host.contains(":") ? "[" + host + "]" : host;
      out.put("KAIROS_RDZV_ENDPOINT", h + ":" + (RDZV_PORT_BASE + (int) (job.id % 1000)));
    }
    if (env != null) {
      out.putAll(env);
    }
    return out;
  }

  private static void history(JobRecord job, long atMs, int from, int to, String why) {
    var all = new ArrayList<>(job.resizes);
    all.add(new ResizeEntry(atMs, job.attempt, from, to, why));
    while (all.size() > KEPT) {
      all.removeFirst();
    }
    job.resizes = List.copyOf(all);
  }
}
