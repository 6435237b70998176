package io.kairos.control.state;

import io.kairos.protocol.JobState;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The gates between a pending job and the scheduler's queue (the core's store): its dependencies
 * must hold ({@link DependencyWaits}), its array must be under its limit (%N), and some registered
 * node must be able to hold it at all. A job held at a gate is not in the store; it waits here
 * until the gate opens. Owns the waiting jobs, the arrays' throttles and the unplaceable jobs.
 *
 * <p>Derived from the records like the store: {@link #rebuild} sets every pending job at its gate
 * again, and otherwise the job lifecycle tells the gates when a job was admitted or left.
 */
final class QueueGates {
  private final Records records;
  private final CoreBridge core;

  /** Pending jobs that no registered node could ever hold (not in the store). */
  private final TreeMap<Long, JobRecord> unplaceable = new TreeMap<>();

  /** Pending jobs whose dependencies do not hold yet (not in the store). */
  private final DependencyWaits waits;

  /** Arrays with a limit (%N) and active elements, by array job id. */
  private final TreeMap<Long, Throttle> throttles = new TreeMap<>();

  /**
   * An array's limit at work. {@code admitted}: its elements running, or pending in the store (or
   * unplaceable), at most the limit; {@code held}: pending elements beyond it, which join the queue
   * in task order as admitted ones end. Every held element has a higher id than every admitted one,
   * so a rebuild that admits the lowest ids finds the same sets.
   */
  private static final class Throttle {
    final TreeSet<Long> admitted = new TreeSet<>();
    final TreeMap<Long, JobRecord> held = new TreeMap<>();
  }

  QueueGates(Records records, CoreBridge core) {
    this.records = records;
    this.core = core;
    this.waits = new DependencyWaits(records::job);
  }

  // --- dependencies ---

  /** A new job's dependency, looked at for the first time; a job that waits is kept here. */
  DependencyWaits.Outcome openDependency(JobRecord job) {
    return waits.open(job, false);
  }

  /**
   * The waiting jobs that may have to be looked at again after {@code changed} started or ended.
   */
  List<Long> dependentsOf(JobRecord changed) {
    return waits.affectedBy(changed);
  }

  /** Looks at a waiting job again after job {@code changedId} changed; drops it unless it waits. */
  DependencyWaits.Outcome recheckDependency(long jobId, long changedId) {
    return waits.recheck(jobId, changedId);
  }

  // --- the queue ---

  /**
   * A pending job whose dependencies hold joins the queue (the store), unless its array already has
   * as many elements queued or running as its limit allows: then it is held until one ends.
   */
  void admit(JobRecord job) {
    ArrayElement a = job.array;
    if (a != null && a.limit() > 0) {
      var t = throttles.computeIfAbsent(a.arrayJobId(), k -> new Throttle());
      if (t.admitted.size() >= a.limit()) {
        t.held.put(job.id, job);
        return;
      }
      t.admitted.add(job.id);
    }
    queue(job);
  }

  /** Puts a job at the back of the queue, past every gate but the last: a node must fit it. */
  void queue(JobRecord job) {
    job.queuedSeq = records.takeQueueSeq();
    enqueue(job);
  }

  /** Puts a pending job into the store, or aside when no registered node could hold it. */
  private void enqueue(JobRecord job) {
    if (!core.queue(job)) {
      unplaceable.put(job.id, job);
    }
  }

  /** An element of a limited array ended or left the queue: the next held one may join. */
  void releaseArraySlot(JobRecord job) {
    if (job.array == null || job.array.limit() == 0) {
      return;
    }
    var t = throttles.get(job.array.arrayJobId());
    if (t == null) {
      return;
    }
    if (t.admitted.remove(job.id) || t.held.remove(job.id) != null) {
      while (t.admitted.size() < job.array.limit() && !t.held.isEmpty()) {
        JobRecord next = t.held.pollFirstEntry().getValue();
        t.admitted.add(next.id);
        queue(next);
      }
    }
    if (t.admitted.isEmpty() && t.held.isEmpty()) {
      throttles.remove(job.array.arrayJobId());
    }
  }

  /**
   * A pending job is cancelled: true when it was held at a gate, so not in the store (a job held by
   * its array's limit leaves the throttle when it ends).
   */
  boolean leaveIfHeld(JobRecord job) {
    return waits.remove(job.id) || isHeld(job.id, job.array) || unplaceable.remove(job.id) != null;
  }

  /** Whether a pending job is held at a gate, so the scheduler must not start it. */
  boolean holds(JobRecord job) {
    return unplaceable.containsKey(job.id) || waits.contains(job.id) || isHeld(job.id, job.array);
  }

  private boolean isHeld(long jobId, ArrayElement a) {
    if (a == null || a.limit() == 0) {
      return false;
    }
    var t = throttles.get(a.arrayJobId());
    return t != null && t.held.containsKey(jobId);
  }

  // --- rebuild ---

  /**
   * Sets every pending job at its gate again, after the store was rebuilt: those whose dependencies
   * do not hold wait, array elements beyond their array's limit are held (the lowest task ids are
   * admitted first, as they were live), and the rest are queued in their queue order.
   */
  void rebuild(Collection<JobRecord> active) {
    unplaceable.clear();
    waits.clear();
    throttles.clear();
    for (JobRecord job : active) {
      if (job.array != null && job.array.limit() > 0 && job.state == JobState.RUNNING) {
        throttles.computeIfAbsent(job.array.arrayJobId(), k -> new Throttle()).admitted.add(job.id);
      }
    }
    var queued = new ArrayList<JobRecord>();
    for (JobRecord job : active) {
      if (job.state != JobState.PENDING) {
        continue;
      }
      // A consistent state holds no job whose dependency can never hold (it was cancelled), so
      // anything but HOLDS waits.
      if (job.request.dependency() != null
          && waits.open(job, true).verdict() != DependencyWaits.Verdict.HOLDS) {
        continue;
      }
      ArrayElement a = job.array;
      if (a != null && a.limit() > 0) {
        var t = throttles.computeIfAbsent(a.arrayJobId(), k -> new Throttle());
        if (t.admitted.size() >= a.limit()) {
          t.held.put(job.id, job);
          continue;
        }
        t.admitted.add(job.id);
      }
      queued.add(job);
    }
    if (!core.hasStore()) {
      queued.forEach(j -> unplaceable.put(j.id, j));
      return;
    }
    queued.sort(
        Comparator.comparingLong((JobRecord j) -> j.queuedSeq).thenComparingLong(j -> j.id));
    queued.forEach(this::enqueue);
  }

  // --- reads ---

  /**
   * Whether a waiting job's dependency names {@code job}, or the array it belongs to: such a job is
   * kept when ended jobs are forgotten.
   */
  boolean isNamedByWaitingJob(JobRecord job) {
    return waits.names(job.id) || (job.array != null && waits.names(job.array.arrayJobId()));
  }

  boolean isUnplaceable(long jobId) {
    return unplaceable.containsKey(jobId);
  }

  boolean isWaitingOnDependency(long jobId) {
    return waits.contains(jobId);
  }

  Optional<String> dependencyDetail(long jobId) {
    return waits.detail(jobId);
  }

  boolean isHeldByArrayLimit(JobRecord job) {
    return isHeld(job.id, job.array);
  }

  int arrayAdmitted(long arrayJobId) {
    var t = throttles.get(arrayJobId);
    return t == null ? 0 : t.admitted.size();
  }
}
