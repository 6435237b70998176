package io.kairos.control.state;

import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * What users may put into the controller, so that no user can starve it: replicated (set by {@link
 * ControlCommand.SetLimits}, held in the snapshot), so every replica enforces the same.
 *
 * <p>Counts are in jobs as {@link JobSize#weight} counts them: a job counts once, plus once per 4
 * KiB of command, env and paths, and each element of an array counts. The state machine refuses a
 * submit that would pass {@link #maxJobsPerUser} or {@link #maxLiveJobs} (the whole submit, never a
 * part of it), and forgets the oldest-ended jobs beyond {@link #maxEndedJobs}. The API refuses a
 * job larger than {@link #maxJobBytes} and paces each user's submits with a token bucket of {@link
 * #submitsPerSec} and {@link #submitBurst} (per replica: not replicated state, only its settings).
 *
 * @param maxJobsPerUser a user's pending and running jobs, at most
 * @param maxLiveJobs all users' pending and running jobs, at most
 * @param maxEndedJobs ended jobs the controller keeps (for show and history), at most; beyond it
 *     the oldest-ended are forgotten
 * @param maxJobBytes one job's request ({@link JobSize#bytes}), at most
 * @param submitsPerSec jobs a user may submit per second, sustained
 * @param submitBurst jobs a user may submit at once (the bucket's size)
 * @param perUser overrides for some users, by user name
 */
public record Limits(
    long maxJobsPerUser,
    long maxLiveJobs,
    long maxEndedJobs,
    long maxJobBytes,
    double submitsPerSec,
    long submitBurst,
    SortedMap<String, UserLimits> perUser) {

  /**
   * One user's overrides; a null field takes the cluster's value.
   *
   * @param maxJobs this user's pending and running jobs, at most
   * @param submitsPerSec this user's sustained submit rate, in jobs per second
   * @param submitBurst this user's bucket size, in jobs
   */
  public record UserLimits(Long maxJobs, Double submitsPerSec, Long submitBurst) {
    public UserLimits {
      if (maxJobs != null) {
        check(maxJobs >= 1 && maxJobs <= MAX_COUNT, "maxJobs", "must be 1 to " + MAX_COUNT);
      }
      if (submitsPerSec != null) {
        checkRate(submitsPerSec, "submitsPerSec");
      }
      if (submitBurst != null) {
        check(
            submitBurst >= 1 && submitBurst <= MAX_COUNT,
            "submitBurst",
            "must be 1 to " + MAX_COUNT);
      }
    }

    public boolean hasNone() {
      return maxJobs == null && submitsPerSec == null && submitBurst == null;
    }
  }

  /** A value out of its bounds; {@link #field} names it. */
  public static final class InvalidLimitException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final String field;

    InvalidLimitException(String field, String message) {
      super(field + " " + message);
      this.field = field;
    }

    public String field() {
      return field;
    }
  }

  /** The largest count any limit takes. */
  public static final long MAX_COUNT = 1_000_000_000L;

  /**
   * The least {@link #maxEndedJobs} an admin may set (the API's rule; the state takes any): a
   * client waiting on its job still sees how it ended.
   */
  public static final long MIN_ENDED_JOBS = 1_000;

  public static final long MIN_JOB_BYTES = 1024;
  public static final long MAX_JOB_BYTES = 16L << 20;
  public static final double MAX_RATE = 1_000_000;
  public static final int MAX_USERS = 10_000;

  /** The default {@link #maxJobBytes}: 64 KiB of command, env and paths. */
  public static final long DEFAULT_JOB_BYTES = 64 << 10;

  public static final double DEFAULT_SUBMITS_PER_SEC = 1_000;

  /** The default {@link #submitBurst}: the largest batch the API takes. */
  public static final long DEFAULT_SUBMIT_BURST = 10_000;

  /**
   * What one unit of job weight may cost the heap, live or ended: the records, the scheduler's
   * store and its per-pass views, the snapshot's copy (about 2 KiB measured for a small job, see
   * docs/operations.md), plus the {@link JobSize#WEIGHT_UNIT_BYTES} of request a unit stands for.
   */
  public static final long HEAP_BYTES_PER_WEIGHT = 2048 + JobSize.WEIGHT_UNIT_BYTES;

  private static final Pattern USER = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._@-]{0,63}");

  public Limits {
    check(
        maxJobsPerUser >= 1 && maxJobsPerUser <= MAX_COUNT,
        "maxJobsPerUser",
        "must be 1 to " + MAX_COUNT);
    check(maxLiveJobs >= 1 && maxLiveJobs <= MAX_COUNT, "maxLiveJobs", "must be 1 to " + MAX_COUNT);
    check(
        maxEndedJobs >= 0 && maxEndedJobs <= MAX_COUNT,
        "maxEndedJobs",
        "must be 0 to " + MAX_COUNT);
    check(
        maxJobBytes >= MIN_JOB_BYTES && maxJobBytes <= MAX_JOB_BYTES,
        "maxJobBytes",
        "must be " + MIN_JOB_BYTES + " to " + MAX_JOB_BYTES);
    checkRate(submitsPerSec, "submitsPerSec");
    check(submitBurst >= 1 && submitBurst <= MAX_COUNT, "submitBurst", "must be 1 to " + MAX_COUNT);
    var sorted = new TreeMap<String, UserLimits>();
    if (perUser != null) {
      check(perUser.size() <= MAX_USERS, "perUser", "holds at most " + MAX_USERS + " users");
      for (var e : perUser.entrySet()) {
        check(
            e.getKey() != null && USER.matcher(e.getKey()).matches(),
            "perUser",
            "names an invalid user '" + e.getKey() + "'");
        check(e.getValue() != null, "perUser." + e.getKey(), "must be an object");
        if (!e.getValue().hasNone()) {
          sorted.put(e.getKey(), e.getValue());
        }
      }
    }
    perUser = Collections.unmodifiableSortedMap(sorted);
  }

  /**
   * The defaults for a controller whose heap holds at most {@code maxHeapBytes}: live jobs may take
   * a third of it and ended jobs a sixth, at {@link #HEAP_BYTES_PER_WEIGHT} per unit of weight; a
   * user may hold a quarter of the live jobs. The rest of the heap is for requests in flight, the
   * Raft log's caches and the collector's headroom.
   */
  public static Limits forHeap(long maxHeapBytes) {
    long live = Math.max(1_000, maxHeapBytes / 3 / HEAP_BYTES_PER_WEIGHT);
    long ended = Math.max(MIN_ENDED_JOBS, maxHeapBytes / 6 / HEAP_BYTES_PER_WEIGHT);
    return new Limits(
        Math.max(100, live / 4),
        live,
        ended,
        DEFAULT_JOB_BYTES,
        DEFAULT_SUBMITS_PER_SEC,
        DEFAULT_SUBMIT_BURST,
        null);
  }

  /** {@code user}'s most pending and running jobs: its override, else {@link #maxJobsPerUser}. */
  public long maxJobsOf(String user) {
    UserLimits u = perUser.get(user);
    return u == null || u.maxJobs() == null ? maxJobsPerUser : u.maxJobs();
  }

  public double submitsPerSecOf(String user) {
    UserLimits u = perUser.get(user);
    return u == null || u.submitsPerSec() == null ? submitsPerSec : u.submitsPerSec();
  }

  public long submitBurstOf(String user) {
    UserLimits u = perUser.get(user);
    return u == null || u.submitBurst() == null ? submitBurst : u.submitBurst();
  }

  private static void checkRate(double rate, String field) {
    check(
        Double.isFinite(rate) && rate > 0 && rate <= MAX_RATE,
        field,
        "must be more than 0 and at most " + (long) MAX_RATE + " jobs per second");
  }

  private static void check(boolean ok, String field, String message) {
    if (!ok) {
      throw new InvalidLimitException(field, message);
    }
  }
}
