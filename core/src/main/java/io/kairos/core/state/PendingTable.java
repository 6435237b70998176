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
 * {@code int[]} does not. Removal leaves a tombstone (null); a job's slot is found from its
 * sequence number (one per addition, increasing with the slot, so a binary search finds it), which
 * compaction leaves alone: add and remove are O(log n) amortised, and compaction moves array
 * entries only. Single writer, like the store.
 *
 * <p>Snapshots share the arrays instead of copying them: {@link #copy} compacts in place (the
 * arrays are hot in cache; a copy into fresh arrays costs a pass over cold memory, the largest part
 * of a pass on a queue of thousands) and hands out the arrays themselves, with the count. The table
 * then copies them before its first change that a snapshot could see (copy on write), unless the
 * snapshot's reader said it is done with it ({@link #release}), as a simulator does after each
 * pass. Additions past the shared count are never seen by the snapshot and copy nothing.
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
  private long[] seqs = new long[64];
  private long nextSeq;
  // How many leading slots snapshots share (0 when none): writes below it copy first. Sharers:
  // snapshots handed the current arrays and not released.
  private int sharedSize;
  private int sharers;
  private int end;
  private int live;
  // Live elastic jobs: a pass skips its elastic stage when there are none (and none run).
  private int elastic;
  // The slots removed since the last compaction, in the order removed: compaction moves the runs
  // between them with one array copy each, instead of visiting every slot.
  private int[] holes = new int[16];
  private int holeCount;
  // Whether the live jobs, in slot order, are in arrival order: higher priority first, then
  // earlier eligible time, then lower id. Kept in O(1) per change by comparing each addition with
  // the last one (a removal keeps it); an addition out of order clears it until the table empties.
  private boolean arrivalOrdered = true;
  private int lastPriority;
  private long lastEligibleSec;
  private long lastId;
  private final HashMap<JobId, Long> seqOf = new HashMap<>();
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

  /** How many live jobs are elastic. */
  int elasticCount() {
    return elastic;
  }

  /** How many tenant keys were interned so far (ids below this are in use). */
  int tenantCount() {
    return tenants.size();
  }

  PendingJobs.TenantKey tenantKey(int id) {
    return tenantKeys[id];
  }

  boolean contains(JobId id) {
    return seqOf.containsKey(id);
  }

  Job get(JobId id) {
    Long seq = seqOf.get(id);
    return seq == null ? null : jobs[slotOf(seq)];
  }

  private int slotOf(long seq) {
    int slot = Arrays.binarySearch(seqs, 0, end, seq);
    if (slot < 0) {
      throw new IllegalStateException("pending table lost the slot of sequence number " + seq);
    }
    return slot;
  }

  /**
   * The reader of the last snapshot will not read its pending jobs again: once no other snapshot
   * shares the arrays (one taken earlier and never released keeps them shared), the table may
   * change them in place.
   */
  void release() {
    sharers = Math.max(0, sharers - 1);
    if (sharers == 0) {
      sharedSize = 0;
    }
  }

  /** Before a write below the shared count: copies the arrays, leaving the snapshot its own. */
  private void unshare() {
    int capacity = jobs.length;
    jobs = Arrays.copyOf(jobs, capacity);
    ids = Arrays.copyOf(ids, capacity);
    eligibleSec = Arrays.copyOf(eligibleSec, capacity);
    limitSec = Arrays.copyOf(limitSec, capacity);
    gpus = Arrays.copyOf(gpus, capacity);
    priority = Arrays.copyOf(priority, capacity);
    tasks = Arrays.copyOf(tasks, capacity);
    shapeIds = Arrays.copyOf(shapeIds, capacity);
    tenantIds = Arrays.copyOf(tenantIds, capacity);
    seqs = Arrays.copyOf(seqs, capacity);
    sharedSize = 0;
    sharers = 0;
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
    if (end < sharedSize) {
      unshare();
    }
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
    seqs[end] = nextSeq;
    seqOf.put(job.id(), nextSeq++);
    end++;
    live++;
    elastic += gang.isElastic() ? 1 : 0;
  }

  Job remove(JobId id) {
    Long seq = seqOf.remove(id);
    if (seq == null) {
      return null;
    }
    if (sharedSize > 0) {
      unshare();
    }
    int slot = slotOf(seq);
    Job job = jobs[slot];
    jobs[slot] = null;
    if (holeCount == holes.length) {
      holes = Arrays.copyOf(holes, holeCount * 2);
    }
    holes[holeCount++] = slot;
    live--;
    elastic -= job.spec().gang().isElastic() ? 1 : 0;
    if (live == 0) {
      end = 0;
      holeCount = 0;
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
    seqs = Arrays.copyOf(seqs, capacity);
    sharedSize = 0; // new arrays: the snapshots keep the old ones
    sharers = 0;
  }

  private void compact() {
    if (sharedSize > 0) {
      unshare();
    }
    // The holes are exactly the null slots below end: sorted, each run between two moves down by
    // the number of holes before it.
    Arrays.sort(holes, 0, holeCount);
    int to = holeCount == 0 ? end : holes[0];
    for (int h = 0; h < holeCount; h++) {
      int from = holes[h] + 1;
      int until = h + 1 < holeCount ? holes[h + 1] : end;
      moveRun(from, to, until - from);
      to += until - from;
    }
    Arrays.fill(jobs, to, end, null);
    end = to;
    holeCount = 0;
  }

  /** Moves {@code length} slots from {@code from} down to {@code to}, in every array. */
  private void moveRun(int from, int to, int length) {
    if (length <= 0) {
      return;
    }
    System.arraycopy(jobs, from, jobs, to, length);
    System.arraycopy(ids, from, ids, to, length);
    System.arraycopy(eligibleSec, from, eligibleSec, to, length);
    System.arraycopy(limitSec, from, limitSec, to, length);
    System.arraycopy(gpus, from, gpus, to, length);
    System.arraycopy(priority, from, priority, to, length);
    System.arraycopy(tasks, from, tasks, to, length);
    System.arraycopy(shapeIds, from, shapeIds, to, length);
    System.arraycopy(tenantIds, from, tenantIds, to, length);
    System.arraycopy(seqs, from, seqs, to, length);
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

  /**
   * The pending jobs for a snapshot: the table's own arrays after compacting them in place, shared
   * until the table's next change below the shared count ({@link #unshare}) or {@link #release}.
   * O(slots from the first tombstone); O(1) when there is none.
   */
  PendingJobs copy() {
    if (live != end) {
      compact();
    }
    sharedSize = end;
    sharers++;
    return new PendingJobs(
        jobs,
        ids,
        eligibleSec,
        limitSec,
        gpus,
        priority,
        tasks,
        shapeIds,
        shapes.size(),
        tenantIds,
        tenantKeys,
        live);
  }
}
