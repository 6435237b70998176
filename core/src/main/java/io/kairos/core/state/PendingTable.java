package io.kairos.core.state;

import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.TaskShape;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Set;

/**
 * Pending jobs in arrival order, with the fields a pass reads for every job kept in parallel
 * primitive arrays.
 *
 * <p>Design note. A pass visits every pending job, and most visits read only the job's GPU count;
 * chasing {@code Job -> JobSpec -> GangSpec} for 100,000 jobs costs cache misses, a scan of an
 * {@code int[]} does not. Removal leaves a tombstone (null) found through an id -> slot map, and
 * the table compacts when half of it is tombstones: add and remove are O(1) amortised, a snapshot
 * copy is O(pending). Single writer, like the store.
 */
final class PendingTable {
  private Job[] jobs = new Job[64];
  private long[] ids = new long[64];
  private long[] eligibleSec = new long[64];
  private long[] limitSec = new long[64];
  private int[] gpus = new int[64];
  private int[] priority = new int[64];
  private int[] tasks = new int[64];
  private int[] shapeIds = new int[64];
  private int[] tenantIds = new int[64];
  private int end;
  private int live;
  // Whether the live jobs, in slot order, are in arrival order: higher priority first, then
  // earlier eligible time, then lower id. Kept in O(1) per change by comparing each addition with
  // the last one (a removal keeps it); an addition out of order clears it until the table empties.
  private boolean arrivalOrdered = true;
  private int lastPriority;
  private long lastEligibleSec;
  private long lastId;
  private final HashMap<JobId, Integer> slots = new HashMap<>();
  // Gang shapes seen so far (task shape, distinct nodes, GPU model, excluded nodes) -> dense id.
  // Interned once at submission, so a pass can memoise "this shape does not fit" in arrays.
  // Excluded nodes are part of the shape: jobs with the same exclusions fit the same nodes.
  private final HashMap<ShapeKey, Integer> shapes = new HashMap<>();

  // (queue, account, priority class, user) -> dense id, interned like shapes; append-only.
  private final HashMap<PendingJobs.TenantKey, Integer> tenants = new HashMap<>();
  private PendingJobs.TenantKey[] tenantKeys = new PendingJobs.TenantKey[16];

  private record ShapeKey(
      TaskShape shape, boolean distinct, String gpuModel, Set<String> excludedNodes) {}

  int size() {
    return live;
  }

  boolean contains(JobId id) {
    return slots.containsKey(id);
  }

  Job get(JobId id) {
    Integer slot = slots.get(id);
    return slot == null ? null : jobs[slot];
  }

  void add(Job job) {
    if (end == jobs.length) {
      if (live < end / 2) {
        compact();
      } else {
        grow();
      }
    }
    if (live > 0
        && arrivalOrdered
        && (job.spec().priority() > lastPriority
            || (job.spec().priority() == lastPriority
                && (job.eligibleSec() < lastEligibleSec
                    || (job.eligibleSec() == lastEligibleSec && job.id().value() < lastId))))) {
      arrivalOrdered = false;
    }
    lastPriority = job.spec().priority();
    lastEligibleSec = job.eligibleSec();
    lastId = job.id().value();
    jobs[end] = job;
    ids[end] = job.id().value();
    eligibleSec[end] = job.eligibleSec();
    limitSec[end] = job.timeLimitSec();
    gpus[end] = job.totalGpus();
    priority[end] = job.spec().priority();
    var gang = job.spec().gang();
    tasks[end] = gang.tasks();
    shapeIds[end] =
        shapes.computeIfAbsent(
            new ShapeKey(
                gang.shape(),
                gang.distinctNodes(),
                job.spec().gpuModel(),
                job.spec().excludedNodes()),
            _ -> shapes.size());
    var key = PendingJobs.TenantKey.of(job);
    Integer tenant = tenants.get(key);
    if (tenant == null) {
      tenant = tenants.size();
      tenants.put(key, tenant);
      if (tenant == tenantKeys.length) {
        tenantKeys = Arrays.copyOf(tenantKeys, tenant * 2);
      }
      tenantKeys[tenant] = key;
    }
    tenantIds[end] = tenant;
    slots.put(job.id(), end);
    end++;
    live++;
  }

  Job remove(JobId id) {
    Integer slot = slots.remove(id);
    if (slot == null) {
      return null;
    }
    Job job = jobs[slot];
    jobs[slot] = null;
    live--;
    if (live == 0) {
      end = 0;
      arrivalOrdered = true;
    } else if (end > 64 && live < end / 2) {
      compact();
    }
    return job;
  }

  private void grow() {
    int capacity = jobs.length * 2;
    jobs = Arrays.copyOf(jobs, capacity);
    ids = Arrays.copyOf(ids, capacity);
    eligibleSec = Arrays.copyOf(eligibleSec, capacity);
    limitSec = Arrays.copyOf(limitSec, capacity);
    gpus = Arrays.copyOf(gpus, capacity);
    priority = Arrays.copyOf(priority, capacity);
    tasks = Arrays.copyOf(tasks, capacity);
    shapeIds = Arrays.copyOf(shapeIds, capacity);
    tenantIds = Arrays.copyOf(tenantIds, capacity);
  }

  private void compact() {
    int to = 0;
    for (int from = 0; from < end; from++) {
      if (jobs[from] != null) {
        if (to != from) {
          jobs[to] = jobs[from];
          ids[to] = ids[from];
          eligibleSec[to] = eligibleSec[from];
          limitSec[to] = limitSec[from];
          gpus[to] = gpus[from];
          priority[to] = priority[from];
          tasks[to] = tasks[from];
          shapeIds[to] = shapeIds[from];
          tenantIds[to] = tenantIds[from];
          slots.put(jobs[to].id(), to);
        }
        to++;
      }
    }
    Arrays.fill(jobs, to, end, null);
    end = to;
  }

  /**
   * Whether the live jobs, in slot order, are already in arrival order (higher priority, earlier
   * eligible time, lower id first). False may be wrong (a pass then sorts); true never is.
   */
  boolean arrivalOrdered() {
    return arrivalOrdered;
  }

  /** Live jobs in arrival order. */
  Collection<Job> jobs() {
    List<Job> out = new ArrayList<>(live);
    for (int i = 0; i < end; i++) {
      if (jobs[i] != null) {
        out.add(jobs[i]);
      }
    }
    return out;
  }

  /** A compact copy for a snapshot: O(slots), one array copy per run of live slots. */
  PendingJobs copy() {
    if (live == end) {
      return new PendingJobs(
          Arrays.copyOf(jobs, live),
          Arrays.copyOf(ids, live),
          Arrays.copyOf(eligibleSec, live),
          Arrays.copyOf(limitSec, live),
          Arrays.copyOf(gpus, live),
          Arrays.copyOf(priority, live),
          Arrays.copyOf(tasks, live),
          Arrays.copyOf(shapeIds, live),
          shapes.size(),
          Arrays.copyOf(tenantIds, live),
          tenantKeys);
    }
    var out =
        new PendingJobs(
            new Job[live],
            new long[live],
            new long[live],
            new long[live],
            new int[live],
            new int[live],
            new int[live],
            new int[live],
            shapes.size(),
            new int[live],
            tenantKeys);
    // Copy runs of live slots with System.arraycopy: tombstones are few between compactions.
    int to = 0;
    int from = 0;
    while (from < end) {
      while (from < end && jobs[from] == null) {
        from++;
      }
      int run = from;
      while (from < end && jobs[from] != null) {
        from++;
      }
      int length = from - run;
      if (length > 0) {
        System.arraycopy(jobs, run, out.jobs(), to, length);
        System.arraycopy(ids, run, out.ids(), to, length);
        System.arraycopy(eligibleSec, run, out.eligibleSec(), to, length);
        System.arraycopy(limitSec, run, out.limitSec(), to, length);
        System.arraycopy(gpus, run, out.gpus(), to, length);
        System.arraycopy(priority, run, out.priority(), to, length);
        System.arraycopy(tasks, run, out.tasks(), to, length);
        System.arraycopy(shapeIds, run, out.shapeIds(), to, length);
        System.arraycopy(tenantIds, run, out.tenantIds(), to, length);
        to += length;
      }
    }
    return out;
  }
}
