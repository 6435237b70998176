package io.kairos.control.api;

import io.kairos.control.auth.Principal;
import io.kairos.control.state.ControlResult;
import io.kairos.control.state.ControlState;
import io.kairos.control.state.JobRequest;
import io.kairos.control.state.JobSize;
import io.kairos.control.state.Limits;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;

/**
 * The {@link Limits} as a submit meets them: each job's size, the user's submit rate, and, before
 * the log, the counts the state machine will check again when it applies the submit (so that a
 * submit sure to be refused does not fill the log). Each refusal names the limit and its value.
 */
final class SubmitChecks {
  /** What a client is told to wait when a count limit refused it: jobs end at their own pace. */
  static final long COUNT_RETRY_SEC = 30;

  private SubmitChecks() {}

  /**
   * Before the body is read: refuses at once a user who already holds all the jobs their limit
   * allows, or whose bucket is empty (any submit adds at least one job), so that a user flooding at
   * the limit costs a lock and a lookup per request, not the parse of a 10,000-job batch.
   */
  static void early(Safeguards guards, Principal who, ControlState state) {
    var limits = state.limits().orElse(null);
    if (limits != null) {
      long used = state.liveWeightOf(who.user());
      if (used >= limits.maxJobsOf(who.user())) {
        throw refused(
            new ControlResult.Refusal(
                0, "maxJobsPerUser", limits.maxJobsOf(who.user()), who.user(), used, 1));
      }
    }
    if (!who.isAdmin()) {
      Limits l = guards.limits(state);
      double waitSec =
          guards
              .rate()
              .waitFor(who.user(), 1, l.submitsPerSecOf(who.user()), l.submitBurstOf(who.user()));
      if (waitSec > 0) {
        throw overRate(who.user(), l, 1, waitSec);
      }
    }
  }

  /**
   * 413 for a job larger than {@code maxJobBytes}, naming its largest part; a batch script is not
   * counted here (its own limit is {@link io.kairos.protocol.JobSubmission#MAX_SCRIPT_BYTES}).
   */
  static void size(List<JobRequest> requests, Limits limits, boolean batch) {
    for (int i = 0; i < requests.size(); i++) {
      JobRequest r = requests.get(i);
      long bytes = JobSize.bytes(r) - JobSize.scriptBytes(r);
      if (bytes <= limits.maxJobBytes()) {
        continue;
      }
      long command = JobSize.commandBytes(r);
      long env = JobSize.envBytes(r);
      String part = env >= command ? "env" : "command";
      throw ApiError.tooLarge(
          "Job too large",
          (batch ? "[" + i + "]." : "") + part,
          "maxJobBytes",
          limits.maxJobBytes(),
          "the job's command, env and paths take "
              + count(bytes)
              + " bytes (its "
              + part
              + " "
              + count(Math.max(env, command))
              + "), more than a job may carry ("
              + count(limits.maxJobBytes())
              + ", maxJobBytes)",
          "put large inputs in a file the job reads, or ask an admin to raise maxJobBytes");
    }
  }

  /**
   * 413 or 429 when {@code who} may not submit {@code weight} more jobs now. Admins are not paced
   * (they set the limits, and run the load benchmarks); the count limits hold for their jobs too.
   */
  static void rate(Safeguards guards, Principal who, long weight, Limits limits) {
    if (who.isAdmin()) {
      return;
    }
    String user = who.user();
    long burst = limits.submitBurstOf(user);
    double perSec = limits.submitsPerSecOf(user);
    if (weight > burst) {
      throw ApiError.tooLarge(
          "Submit too large",
          null,
          "submitBurst",
          burst,
          "this submit counts as "
              + count(weight)
              + " jobs, more than "
              + user
              + " may submit at once ("
              + count(burst)
              + ", submitBurst)",
          "split it into submits of at most " + count(burst) + " jobs");
    }
    double waitSec = guards.rate().take(user, weight, perSec, burst);
    if (waitSec > 0) {
      throw overRate(user, limits, weight, waitSec);
    }
  }

  private static ApiError overRate(String user, Limits limits, long weight, double waitSec) {
    double perSec = limits.submitsPerSecOf(user);
    return ApiError.overLimit(
        "submitsPerSec",
        perSec,
        user
            + " may submit "
            + rate(perSec)
            + " jobs per second (bursts of "
            + count(limits.submitBurstOf(user))
            + "); this submit of "
            + count(weight)
            + (weight == 1 ? " or more" : "")
            + " must wait "
            + String.format(Locale.ROOT, "%.1f", waitSec)
            + " s",
        "retry after the Retry-After seconds, or submit fewer jobs at a time",
        (long) Math.ceil(waitSec));
  }

  /** 429 when the submit would take a user or the cluster past its count limit (read now). */
  static void counts(ControlState state, Limits limits, List<JobRequest> requests) {
    var byUser = new TreeMap<String, Long>();
    long total = 0;
    for (JobRequest r : requests) {
      long w = JobSize.totalWeight(r);
      byUser.merge(r.user(), w, Long::sum);
      total += w;
    }
    for (var e : byUser.entrySet()) {
      long used = state.liveWeightOf(e.getKey());
      long max = limits.maxJobsOf(e.getKey());
      if (used + e.getValue() > max) {
        throw refused(
            new ControlResult.Refusal(0, "maxJobsPerUser", max, e.getKey(), used, e.getValue()));
      }
    }
    if (state.liveWeight() + total > limits.maxLiveJobs()) {
      throw refused(
          new ControlResult.Refusal(
              0, "maxLiveJobs", limits.maxLiveJobs(), null, state.liveWeight(), total));
    }
  }

  /** The 429 for a refusal of the state machine (or of {@link #counts}). */
  static ApiError refused(ControlResult.Refusal r) {
    String detail;
    String fix;
    if (r.user() != null) {
      detail =
          r.user()
              + " has "
              + count(r.used())
              + " jobs pending or running and this submit adds "
              + count(r.asked())
              + ": over the limit of "
              + count(r.value())
              + " per user ("
              + r.limit()
              + ")";
      fix =
          "wait for some of these jobs to end, or ask an admin to raise it (kairos limits set"
              + " --user "
              + r.user()
              + " --max-jobs N)";
    } else {
      detail =
          "the cluster holds "
              + count(r.used())
              + " jobs pending or running and this submit adds "
              + count(r.asked())
              + ": over the limit of "
              + count(r.value())
              + " ("
              + r.limit()
              + ")";
      fix = "retry once jobs have ended, or ask an admin to raise it (kairos limits set)";
    }
    return ApiError.overLimit(
        r.limit(),
        r.value(),
        detail + " (a job counts once, plus once per 4 KiB of its command, env and paths)",
        fix,
        COUNT_RETRY_SEC);
  }

  private static String count(long n) {
    return String.format(Locale.ROOT, "%,d", n);
  }

  private static String rate(double perSec) {
    return perSec == Math.rint(perSec)
        ? count((long) perSec)
        : String.format(Locale.ROOT, "%.2f", perSec);
  }
}
