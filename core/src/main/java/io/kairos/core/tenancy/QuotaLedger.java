package io.kairos.core.tenancy;

import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * Admitted usage per queue and resource, and the quota arithmetic of Kueue's ClusterQueue and
 * cohort over it: does a request fit in the queue's nominal quota, or by borrowing from its cohort,
 * or not at all.
 *
 * <h2>Design note</h2>
 *
 * <p>Queues and resources get dense int ids at construction (queues in configuration order,
 * resources in {@link Resource} order); every per-queue number is a {@code long[]} indexed by
 * {@code queue * resources + resource}, every per-cohort number one indexed by {@code cohort *
 * resources + resource}. A queue's quota of a resource splits in two (Kueue's "guaranteed" quota):
 *
 * <pre>
 *   guaranteed = nominal - lendingLimit   (0 without a lending limit)   kept for the queue alone
 *   lendable   = nominal - guaranteed                                   pooled in the cohort
 * </pre>
 *
 * The cohort holds the pool: {@code cohortLendable = Σ lendable} over members, and {@code
 * cohortUsed = Σ max(0, usage - guaranteed)}, the part of each member's usage that is not covered
 * by its own guaranteed quota. For a member that is not borrowing, {@code lendable - max(0, usage -
 * guaranteed) = min(unused nominal, lendingLimit)}: what it lends. A borrowing member subtracts
 * what it borrows. So {@code cohortLendable - cohortUsed} is what the cohort can still hand out.
 * What a queue can use now is
 *
 * <pre>
 *   available = max(0, guaranteed - usage)                     its own, never lent
 *             + min(cohortLendable - cohortUsed,                what the pool has left
 *                   lendable - max(0, usage - guaranteed) + borrowingLimit)   its borrowing cap
 * </pre>
 *
 * (the cap only with a borrowing limit; a queue without a cohort has {@code nominal - usage}).
 * Worked example: cohort {research: nominal 8, prod: nominal 4, lendingLimit 1}. prod keeps 3; the
 * pool is 8 + 1 = 9. With research using 6 and prod using 3: cohortUsed = 6 + 0, so the pool has 3
 * left: research's own 2 plus the 1 prod lends. A request of 4 does not fit: "gpu:H100: queue
 * research uses 6 of nominal 8, cohort lends 1, job needs 4".
 *
 * <p>Costs: {@link #add}/{@link #remove} O(request size); {@link #check} O(request size), and
 * allocates only for a borrowing or refused answer; {@link #borrowed} O(queues). Memory O((queues +
 * cohorts) x resources).
 *
 * <p>Mutable, single-threaded: owned by one writer (the pass, or the store that feeds it); {@link
 * #copy()} gives an independent ledger for what-ifs. Usage may exceed quota after a configuration
 * change (it records what runs); {@link #check} then admits nothing more of that resource.
 */
public final class QuotaLedger {
  private static final long UNLIMITED = Long.MAX_VALUE;

  private final TenancyConfig config;
  private final String[] queueNames;
  private final Map<String, Integer> queueIds;
  private final Resource[] resources;
  private final Map<Resource, Integer> resourceIds;
  private final int resourceCount;

  /** Per queue: cohort id, or -1. */
  private final int[] cohortOf;

  // Per queue x resource.
  private final boolean[] covered;
  private final long[] nominal;
  private final long[] guaranteed;
  private final long[] lendable;
  private final long[] borrowingLimit;
  private final long[] usage;

  // Per cohort x resource.
  private final long[] cohortLendable;
  private final long[] cohortUsed;

  public QuotaLedger(TenancyConfig config) {
    this.config = config;
    int queueCount = config.queues().size();
    queueNames = new String[queueCount];
    queueIds = new HashMap<>();
    var allResources = new TreeSet<Resource>();
    for (int q = 0; q < queueCount; q++) {
      QueueSpec spec = config.queues().get(q);
      queueNames[q] = spec.name();
      queueIds.put(spec.name(), q);
      allResources.addAll(spec.quotas().keySet());
    }
    resources = allResources.toArray(Resource[]::new);
    resourceCount = resources.length;
    resourceIds = new HashMap<>();
    for (int r = 0; r < resourceCount; r++) {
      resourceIds.put(resources[r], r);
    }
    var cohortIds = new HashMap<String, Integer>();
    for (int c = 0; c < config.cohorts().size(); c++) {
      cohortIds.put(config.cohorts().get(c).name(), c);
    }

    int cells = queueCount * resourceCount;
    cohortOf = new int[queueCount];
    covered = new boolean[cells];
    nominal = new long[cells];
    guaranteed = new long[cells];
    lendable = new long[cells];
    borrowingLimit = new long[cells];
    usage = new long[cells];
    cohortLendable = new long[config.cohorts().size() * resourceCount];
    cohortUsed = new long[cohortLendable.length];

    for (int q = 0; q < queueCount; q++) {
      QueueSpec spec = config.queues().get(q);
      int c = spec.cohort() == null ? -1 : cohortIds.get(spec.cohort());
      cohortOf[q] = c;
      for (var e : spec.quotas().entrySet()) {
        int i = q * resourceCount + resourceIds.get(e.getKey());
        ResourceQuota quota = e.getValue();
        covered[i] = true;
        nominal[i] = quota.nominal();
        if (c < 0) {
          guaranteed[i] = quota.nominal();
          borrowingLimit[i] = 0;
        } else {
          guaranteed[i] = quota.guaranteed();
          lendable[i] = quota.nominal() - guaranteed[i];
          borrowingLimit[i] = quota.borrowingLimit() == null ? UNLIMITED : quota.borrowingLimit();
          cohortLendable[c * resourceCount + resourceIds.get(e.getKey())] += lendable[i];
        }
      }
    }
  }

  private QuotaLedger(QuotaLedger other) {
    config = other.config;
    queueNames = other.queueNames;
    queueIds = other.queueIds;
    resources = other.resources;
    resourceIds = other.resourceIds;
    resourceCount = other.resourceCount;
    cohortOf = other.cohortOf;
    covered = other.covered;
    nominal = other.nominal;
    guaranteed = other.guaranteed;
    lendable = other.lendable;
    borrowingLimit = other.borrowingLimit;
    cohortLendable = other.cohortLendable;
    usage = other.usage.clone();
    cohortUsed = other.cohortUsed.clone();
  }

  /** An independent ledger with the same usage; shares the immutable quota tables. */
  public QuotaLedger copy() {
    return new QuotaLedger(this);
  }

  public TenancyConfig config() {
    return config;
  }

  /** The queue's dense id, or -1 if there is no such queue. */
  public int queueId(String queue) {
    Integer id = queueIds.get(queue);
    return id == null ? -1 : id;
  }

  /** The resource's dense id, or -1 if no queue has a quota of it. */
  public int resourceId(Resource resource) {
    Integer id = resourceIds.get(resource);
    return id == null ? -1 : id;
  }

  public int queueCount() {
    return queueNames.length;
  }

  public String queueName(int queue) {
    return queueNames[queue];
  }

  /** The queue's cohort id, or -1 when it has none; queues of one cohort share the id. */
  public int cohortOf(int queue) {
    return cohortOf[queue];
  }

  public int resourceCount() {
    return resourceCount;
  }

  public Resource resource(int resource) {
    return resources[resource];
  }

  /**
   * Whether the queue has a quota of the resource (ids from {@link #queueId}, {@link #resourceId}).
   */
  public boolean covers(int queue, int resource) {
    return covered[queue * resourceCount + resource];
  }

  public long nominal(int queue, int resource) {
    return nominal[queue * resourceCount + resource];
  }

  public long usage(int queue, int resource) {
    return usage[queue * resourceCount + resource];
  }

  /**
   * {@link #add(String, Map)} for one resource by ids, allocation-free, for the pass's hot path.
   * Does not check quota; the caller checked {@link #available}.
   */
  public void add(int queue, int resource, long amount) {
    if (amount < 0) {
      throw new IllegalArgumentException("amount must be >= 0, got " + amount);
    }
    change(queue, resource, amount);
  }

  /** {@link #remove(String, Map)} for one resource by ids. */
  public void remove(int queue, int resource, long amount) {
    if (amount < 0 || usage[queue * resourceCount + resource] < amount) {
      throw new IllegalStateException(
          "remove from queue "
              + queueNames[queue]
              + ": "
              + resources[resource]
              + " usage is "
              + usage[queue * resourceCount + resource]
              + ", cannot remove "
              + amount);
    }
    change(queue, resource, -amount);
  }

  // ---- usage ------------------------------------------------------------------------------

  /**
   * Records usage admitted to a queue (a job started, or found running at startup). Does not check
   * quota: call {@link #check} first. Zero amounts are ignored, as in {@link #check}. All or
   * nothing: on a bad argument nothing changes.
   *
   * @throws IllegalArgumentException for an unknown queue, a resource no queue has quota of, a
   *     negative amount, or usage past {@code Long.MAX_VALUE}
   */
  public void add(String queue, Map<Resource, Long> amounts) {
    int q = requireQueue(queue);
    for (var e : amounts.entrySet()) {
      if (e.getValue() == 0) {
        continue;
      }
      int i = cell(q, e.getKey(), e.getValue(), "add");
      if (usage[i] > Long.MAX_VALUE - e.getValue()) {
        throw new IllegalArgumentException(
            "add to queue " + queue + ": " + e.getKey() + " usage would overflow");
      }
    }
    for (var e : amounts.entrySet()) {
      if (e.getValue() != 0) {
        change(q, resourceIds.get(e.getKey()), e.getValue());
      }
    }
  }

  /**
   * Removes usage from a queue (a job finished or was preempted). All or nothing.
   *
   * @throws IllegalArgumentException for an unknown queue or resource, or a negative amount
   * @throws IllegalStateException if the queue does not use that much: a bookkeeping bug
   */
  public void remove(String queue, Map<Resource, Long> amounts) {
    int q = requireQueue(queue);
    for (var e : amounts.entrySet()) {
      if (e.getValue() == 0) {
        continue;
      }
      int i = cell(q, e.getKey(), e.getValue(), "remove");
      if (usage[i] < e.getValue()) {
        throw new IllegalStateException(
            "remove from queue "
                + queue
                + ": "
                + e.getKey()
                + " usage is "
                + usage[i]
                + ", cannot remove "
                + e.getValue());
      }
    }
    for (var e : amounts.entrySet()) {
      if (e.getValue() != 0) {
        change(q, resourceIds.get(e.getKey()), -e.getValue());
      }
    }
  }

  private void change(int q, int r, long delta) {
    int i = q * resourceCount + r;
    long before = usage[i];
    usage[i] = before + delta;
    int c = cohortOf[q];
    if (c >= 0) {
      cohortUsed[c * resourceCount + r] +=
          Math.max(0, usage[i] - guaranteed[i]) - Math.max(0, before - guaranteed[i]);
    }
  }

  public long usage(String queue, Resource resource) {
    int r = resourceId(resource);
    return r < 0 ? 0 : usage[requireQueue(queue) * resourceCount + r];
  }

  // ---- admission --------------------------------------------------------------------------

  /**
   * Whether a request fits the queue's quota now: within nominal quota, by borrowing from the
   * cohort, or not (the first resource in resource order that lacks quota, with the numbers). A
   * resource the queue has no quota of does not fit, whatever the cohort has. Zero amounts are
   * ignored. Changes nothing: call {@link #add} to admit.
   *
   * @throws IllegalArgumentException for an unknown queue or a negative amount
   */
  public Admission check(String queue, Map<Resource, Long> request) {
    int q = requireQueue(queue);
    Resource failing = null;
    boolean borrows = false;
    for (var e : request.entrySet()) {
      Resource resource = e.getKey();
      long amount = e.getValue();
      if (amount < 0) {
        throw new IllegalArgumentException(
            "check for queue " + queue + ": " + resource + " amount must be >= 0, got " + amount);
      }
      if (amount == 0) {
        continue;
      }
      int r = resourceId(resource);
      boolean fits = r >= 0 && covered[q * resourceCount + r] && amount <= available(q, r);
      if (!fits) {
        if (failing == null || resource.compareTo(failing) < 0) {
          failing = resource;
        }
      } else if (usage[q * resourceCount + r] + amount > nominal[q * resourceCount + r]) {
        borrows = true;
      }
    }
    if (failing != null) {
      return doesNotFit(q, failing, request.get(failing));
    }
    if (!borrows) {
      return Admission.Fits.INSTANCE;
    }
    var borrowed = new HashMap<Resource, Long>();
    for (var e : request.entrySet()) {
      if (e.getValue() == 0) {
        continue;
      }
      int i = q * resourceCount + resourceIds.get(e.getKey());
      long more =
          Math.max(0, usage[i] + e.getValue() - nominal[i]) - Math.max(0, usage[i] - nominal[i]);
      if (more > 0) {
        borrowed.put(e.getKey(), more);
      }
    }
    return new Admission.Borrows(borrowed);
  }

  /**
   * How much of a resource the queue could be admitted now, borrowing included; 0 for a resource it
   * has no quota of. Allocation-free; ids from {@link #queueId} and {@link #resourceId}.
   */
  public long available(int queue, int resource) {
    int i = queue * resourceCount + resource;
    if (!covered[i]) {
      return 0;
    }
    int c = cohortOf[queue];
    if (c < 0) {
      return Math.max(0, nominal[i] - usage[i]);
    }
    long own = Math.max(0, guaranteed[i] - usage[i]);
    return own + Math.max(0, fromCohort(queue, resource, true));
  }

  /**
   * What the cohort pool can give the queue: the pool's unused part, capped (if {@code capped}) by
   * the queue's borrowing limit. May be negative after a configuration change.
   */
  private long fromCohort(int queue, int resource, boolean capped) {
    int i = queue * resourceCount + resource;
    int ci = cohortOf[queue] * resourceCount + resource;
    long pool = cohortLendable[ci] - cohortUsed[ci];
    if (capped && borrowingLimit[i] != UNLIMITED) {
      long inPool = lendable[i] - Math.max(0, usage[i] - guaranteed[i]);
      pool = Math.min(pool, inPool + borrowingLimit[i]);
    }
    return pool;
  }

  private Admission doesNotFit(int q, Resource resource, long needed) {
    String queue = queueNames[q];
    int r = resourceId(resource);
    if (r < 0 || !covered[q * resourceCount + r]) {
      var named = new TreeSet<>(config.queues().get(q).quotas().keySet());
      return new Admission.DoesNotFit(
          resource,
          needed,
          0,
          0,
          resource
              + ": queue "
              + queue
              + " has no quota for it (it has quota for "
              + named
              + "), job needs "
              + needed);
    }
    int i = q * resourceCount + r;
    long available = available(q, r);
    var text =
        new StringBuilder()
            .append(resource)
            .append(": queue ")
            .append(queue)
            .append(" uses ")
            .append(usage[i])
            .append(" of nominal ")
            .append(nominal[i]);
    long reclaimable = 0;
    if (cohortOf[q] < 0) {
      text.append(" and has no cohort to borrow from");
    } else {
      long ownUnused = Math.max(0, nominal[i] - usage[i]);
      reclaimable = ownUnused - Math.min(ownUnused, available);
      long lends = available - (ownUnused - reclaimable);
      text.append(", cohort lends ").append(lends);
      long uncapped = Math.max(0, fromCohort(q, r, false));
      long capped = Math.max(0, fromCohort(q, r, true));
      if (capped < uncapped) {
        text.append(" (borrowingLimit ")
            .append(borrowingLimit[i])
            .append(", borrowing ")
            .append(Math.max(0, usage[i] - nominal[i]))
            .append(')');
      }
    }
    text.append(", job needs ").append(needed);
    if (reclaimable > 0) {
      text.append("; other queues borrow ")
          .append(reclaimable)
          .append(" of its nominal quota (reclaimable)");
    }
    return new Admission.DoesNotFit(resource, needed, available, reclaimable, text.toString());
  }

  // ---- borrowing and reclaim --------------------------------------------------------------

  /**
   * Per queue that uses more than its nominal quota of the resource, how much more: what it borrows
   * from its cohort. Queues in configuration order; queues not borrowing are absent.
   */
  public Map<String, Long> borrowed(Resource resource) {
    var out = new LinkedHashMap<String, Long>();
    int r = resourceId(resource);
    if (r < 0) {
      return out;
    }
    for (int q = 0; q < queueNames.length; q++) {
      int i = q * resourceCount + r;
      long over = usage[i] - nominal[i];
      if (over > 0) {
        out.put(queueNames[q], over);
      }
    }
    return out;
  }

  /**
   * How much of the queue's unused nominal quota of the resource it cannot use now because other
   * queues of its cohort are borrowing it: what reclaim preemption could give back. 0 without a
   * cohort, or when the cohort still has enough unused quota. The cohort pools what it lends, so
   * this does not say whose jobs borrow it; {@link #borrowed} lists the borrowers.
   */
  public long reclaimable(String queue, Resource resource) {
    int q = requireQueue(queue);
    int r = resourceId(resource);
    if (r < 0 || cohortOf[q] < 0) {
      return 0;
    }
    int i = q * resourceCount + r;
    long ownUnused = Math.max(0, nominal[i] - usage[i]);
    return ownUnused - Math.min(ownUnused, available(q, r));
  }

  // ---- invariants -------------------------------------------------------------------------

  /**
   * Recomputes the cohort totals from the per-queue usage and compares; for tests and for a
   * run-time invariant check.
   *
   * @throws IllegalStateException on a mismatch or a negative usage
   */
  public void checkInvariants() {
    long[] expected = new long[cohortUsed.length];
    for (int q = 0; q < queueNames.length; q++) {
      for (int r = 0; r < resourceCount; r++) {
        int i = q * resourceCount + r;
        if (usage[i] < 0) {
          throw new IllegalStateException(
              "queue " + queueNames[q] + ": " + resources[r] + " usage is " + usage[i]);
        }
        if (cohortOf[q] >= 0) {
          expected[cohortOf[q] * resourceCount + r] += Math.max(0, usage[i] - guaranteed[i]);
        }
      }
    }
    if (!Arrays.equals(expected, cohortUsed)) {
      throw new IllegalStateException(
          "cohort usage "
              + Arrays.toString(cohortUsed)
              + " differs from the sum of its queues' "
              + Arrays.toString(expected));
    }
  }

  @Override
  public String toString() {
    var text = new StringBuilder("QuotaLedger{");
    for (int q = 0; q < queueNames.length; q++) {
      text.append(q == 0 ? "" : ", ").append(queueNames[q]).append('=');
      text.append(
          Arrays.toString(Arrays.copyOfRange(usage, q * resourceCount, (q + 1) * resourceCount)));
    }
    return text.append('}').toString();
  }

  private int requireQueue(String queue) {
    Integer q = queueIds.get(queue);
    if (q == null) {
      throw new IllegalArgumentException(
          "unknown queue '"
              + queue
              + "' (fix: use one of "
              + queueIds.keySet().stream().sorted().toList()
              + ")");
    }
    return q;
  }

  private int cell(int q, Resource resource, long amount, String what) {
    if (amount < 0) {
      throw new IllegalArgumentException(
          what
              + " for queue "
              + queueNames[q]
              + ": "
              + resource
              + " amount must be >= 0, got "
              + amount);
    }
    Integer r = resourceIds.get(resource);
    if (r == null) {
      throw new IllegalArgumentException(
          what + " for queue " + queueNames[q] + ": no queue has quota of " + resource);
    }
    return q * resourceCount + r;
  }
}
