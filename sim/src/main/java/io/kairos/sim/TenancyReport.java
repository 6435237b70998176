package io.kairos.sim;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a run under a tenancy file measured per queue, and the fairness figures across queues.
 *
 * <p><b>Served fraction and Jain's index.</b> For queue i, with {@code usage_i(t)} the GPUs its
 * running jobs hold, {@code demand_i(t)} the GPUs of its arrived, unfinished jobs (pending and
 * running) and {@code nominal_i} its nominal GPU quota, the entitled demand is {@code e_i(t) =
 * min(demand_i(t), nominal_i)} and the served fraction is
 *
 * <pre>  x_i = ∫ min(usage_i(t), e_i(t)) dt / ∫ e_i(t) dt</pre>
 *
 * over the whole run: how fully the queue got its entitled share whenever it wanted it (1: it
 * always had all of what it was entitled to and asked for). Jain's index over the k queues that
 * ever had entitled demand is {@code (Σ x_i)² / (k · Σ x_i²)}: 1 when every queue was served
 * equally well, 1/k when one queue got everything. Queues that never had entitled demand (no jobs,
 * or a nominal quota of 0) are left out; with none left the index is undefined (NaN).
 *
 * <p><b>Finish-time fairness.</b> ρ_i = (mean JCT of queue i's jobs in this run) / (mean JCT of the
 * same jobs simulated by themselves, with the same policy and no tenancy, on a cluster of queue i's
 * nominal GPUs: whole nodes of the cluster's largest node size, rounded to the nearest, at least
 * one). Jobs larger than that cluster are left out of both means. ρ &gt; 1: the queue did worse
 * sharing the cluster than it would have with its entitlement alone. NaN when not computed.
 *
 * @param scheduled whether the pass scheduled by the tenancy (else the run was only measured)
 * @param checkpointEverySec the checkpoint interval of preempted jobs
 * @param preemptions victims signalled
 * @param requeued victims that were stopped at the end of their grace and requeued (the others
 *     finished during their grace)
 * @param preemptionGpuHoursLost GPU-hours of work lost at those stops (run since the last
 *     checkpoint)
 * @param jainIndex Jain's fairness index over the queues' served fractions
 * @param worstQueue the queue with the largest finish-time fairness ρ ("" when none)
 * @param worstFinishTimeFairness its ρ
 * @param bigGangGpus the size from which a gang counts as large
 * @param bigGangMaxWaitSec the longest wait of a large gang (0 when none)
 * @param neverStarted jobs still waiting at the end (their queue could never admit them)
 * @param queues per queue, in the file's order
 * @param accounts per fair-share account that jobs were charged to (the tree's leaves in use), in
 *     the file's order, then accounts not in the file as their first job arrived
 */
public record TenancyReport(
    boolean scheduled,
    long checkpointEverySec,
    int preemptions,
    int requeued,
    double preemptionGpuHoursLost,
    double jainIndex,
    String worstQueue,
    double worstFinishTimeFairness,
    int bigGangGpus,
    long bigGangMaxWaitSec,
    int neverStarted,
    List<QueueReport> queues,
    List<AccountReport> accounts) {

  public TenancyReport {
    queues = List.copyOf(queues);
    accounts = List.copyOf(accounts);
  }

  /**
   * One fair-share account: the jobs charged to it, whatever their queue. A job is charged to its
   * own account, else its queue's default account, else its user, else its queue's name (the same
   * resolution whether the run was scheduled by the tenancy or only measured).
   *
   * @param queues the queues its jobs came from, in the file's order
   * @param jobs its jobs that ran
   * @param gpuHours GPU-hours its jobs held (lost work included)
   * @param preemptions times its jobs were stopped and requeued
   * @param lostGpuHours GPU-hours of work lost at those stops
   * @param fairShareFactor its fair-share factor at the end of the run, from the usage charged
   *     (decayed) until the last event; NaN when the run was only measured
   */
  public record AccountReport(
      String name,
      List<String> queues,
      int jobs,
      double gpuHours,
      double meanWaitSec,
      long p99WaitSec,
      double meanJctSec,
      int preemptions,
      double lostGpuHours,
      double fairShareFactor) {
    public AccountReport {
      queues = List.copyOf(queues);
    }

    Map<String, Object> toMap() {
      var m = new LinkedHashMap<String, Object>();
      m.put("account", name);
      m.put("queues", queues);
      m.put("jobs", jobs);
      m.put("gpu_hours", SimReport.round(gpuHours));
      m.put("mean_wait_s", SimReport.round(meanWaitSec));
      m.put("p99_wait_s", p99WaitSec);
      m.put("mean_jct_s", SimReport.round(meanJctSec));
      m.put("preemptions", preemptions);
      m.put("lost_gpu_hours", SimReport.round(lostGpuHours));
      m.put("fair_share_factor", number(fairShareFactor));
      return m;
    }
  }

  /**
   * Whether the accounts say nothing the queues do not: each account takes the jobs of one queue of
   * the same name (Philly: one account per virtual cluster). The tables then leave them out.
   */
  public boolean accountsAreQueues() {
    for (AccountReport a : accounts) {
      if (a.queues().size() != 1 || !a.queues().getFirst().equals(a.name())) {
        return false;
      }
    }
    return true;
  }

  /**
   * One queue.
   *
   * @param nominalGpus its nominal GPU quota (all GPU models)
   * @param entitlement nominal GPUs over the cluster's GPUs
   * @param jobs jobs of the queue that ran
   * @param gpuHours GPU-hours its jobs held (lost work included)
   * @param servedFraction x_i (see the class comment); NaN without entitled demand
   * @param finishTimeFairness ρ_i; NaN when not computed
   * @param aloneJobs jobs in the alone run (and in ρ_i)
   */
  public record QueueReport(
      String name,
      long nominalGpus,
      double entitlement,
      int jobs,
      double gpuHours,
      double meanWaitSec,
      long p99WaitSec,
      double meanJctSec,
      int preemptions,
      double lostGpuHours,
      double servedFraction,
      double finishTimeFairness,
      int aloneJobs) {

    /** This queue with its finish-time fairness. */
    public QueueReport withFinishTimeFairness(double rho, int jobsAlone) {
      return new QueueReport(
          name,
          nominalGpus,
          entitlement,
          jobs,
          gpuHours,
          meanWaitSec,
          p99WaitSec,
          meanJctSec,
          preemptions,
          lostGpuHours,
          servedFraction,
          rho,
          jobsAlone);
    }

    Map<String, Object> toMap() {
      var m = new LinkedHashMap<String, Object>();
      m.put("queue", name);
      m.put("nominal_gpus", nominalGpus);
      m.put("entitlement", SimReport.round(entitlement));
      m.put("jobs", jobs);
      m.put("gpu_hours", SimReport.round(gpuHours));
      m.put("mean_wait_s", SimReport.round(meanWaitSec));
      m.put("p99_wait_s", p99WaitSec);
      m.put("mean_jct_s", SimReport.round(meanJctSec));
      m.put("preemptions", preemptions);
      m.put("lost_gpu_hours", SimReport.round(lostGpuHours));
      m.put("served_fraction", number(servedFraction));
      m.put("finish_time_fairness", number(finishTimeFairness));
      return m;
    }
  }

  /** Jain's index of the values that are not NaN; NaN when none is. */
  public static double jain(double[] values) {
    double sum = 0;
    double squares = 0;
    int k = 0;
    for (double x : values) {
      if (!Double.isNaN(x)) {
        sum += x;
        squares += x * x;
        k++;
      }
    }
    if (k == 0) {
      return Double.NaN;
    }
    // Every x_i = 0: all queues were (equally) unserved.
    return squares == 0 ? 1.0 : sum * sum / (k * squares);
  }

  /** This report with finish-time fairness per queue, and the worst queue picked. */
  public TenancyReport withQueues(List<QueueReport> updated) {
    String worst = "";
    double worstRho = Double.NaN;
    for (QueueReport q : updated) {
      if (!Double.isNaN(q.finishTimeFairness())
          && (Double.isNaN(worstRho) || q.finishTimeFairness() > worstRho)) {
        worst = q.name();
        worstRho = q.finishTimeFairness();
      }
    }
    return new TenancyReport(
        scheduled,
        checkpointEverySec,
        preemptions,
        requeued,
        preemptionGpuHoursLost,
        jainIndex,
        worst,
        worstRho,
        bigGangGpus,
        bigGangMaxWaitSec,
        neverStarted,
        updated,
        accounts);
  }

  /** The JSON fields, in a fixed order. NaN is written as null. */
  public Map<String, Object> toMap() {
    var m = new LinkedHashMap<String, Object>();
    m.put("scheduled", scheduled);
    m.put("checkpoint_every_s", checkpointEverySec);
    m.put("preemptions", preemptions);
    m.put("requeued", requeued);
    m.put("preemption_gpu_hours_lost", SimReport.round(preemptionGpuHoursLost));
    m.put("jain_index", number(jainIndex));
    m.put("worst_ftf_queue", worstQueue);
    m.put("worst_finish_time_fairness", number(worstFinishTimeFairness));
    m.put("big_gang_gpus", bigGangGpus);
    m.put("big_gang_max_wait_s", bigGangMaxWaitSec);
    m.put("never_started", neverStarted);
    var qs = new ArrayList<Map<String, Object>>();
    queues.forEach(q -> qs.add(q.toMap()));
    m.put("queues", qs);
    // Last, so that the keys before it keep their place in reports written before it existed.
    var as = new ArrayList<Map<String, Object>>();
    accounts.forEach(a -> as.add(a.toMap()));
    m.put("accounts", as);
    return m;
  }

  private static Object number(double value) {
    return Double.isNaN(value) ? null : SimReport.round(value);
  }
}
