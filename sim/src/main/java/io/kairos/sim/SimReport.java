package io.kairos.sim;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a simulation measured. All times in seconds of simulated time except the timing fields,
 * which are wall-clock measurements of this run and the only fields that differ between two runs of
 * the same input.
 *
 * @param fragmentationFreeGpus mean free GPUs, over the time during which some waiting job needed
 *     no more GPUs than were free in total (capacity lost to fragmentation and to reservations)
 * @param gpuHoursLostToSpread extra GPU-hours spread gangs ran, under the comm model (0 without)
 * @param series time series for charts, when {@link SimOptions#recordSeries()} asked for them
 * @param jobsWaitedOnDependency jobs that arrived only once their preceding job ended (waits and
 *     turnaround count from that arrival)
 * @param dependenciesIgnored jobs whose preceding job was not in the trace (or was skipped, or came
 *     later), which arrived at their own submit time
 * @param tenancy per-queue figures and fairness, for a run under a tenancy file
 * @param predictions how right the predicted start times were, when {@link
 *     SimOptions#recordPredictions()} asked
 * @param elastic resizes, migrations and GPU time lost, for a run under an {@link ElasticModel}
 *     that is {@link ElasticModel#enabled()}
 */
public record SimReport(
    String policy,
    String trace,
    String cluster,
    long clusterGpus,
    int jobs,
    int skipped,
    boolean estimatesFromRuntime,
    List<String> notes,
    long makespanSec,
    double meanWaitSec,
    long p50WaitSec,
    long p95WaitSec,
    long p99WaitSec,
    long maxWaitSec,
    double meanJctSec,
    long p95JctSec,
    double meanBoundedSlowdown,
    double utilization,
    double fragmentationFreeGpus,
    long passes,
    boolean commModel,
    double gpuHoursLostToSpread,
    int jobsStoppedAtLimit,
    Optional<SimJobs> perJob,
    double simWallSec,
    double passP50Ms,
    double passP99Ms,
    Optional<SimSeries> series,
    int jobsWaitedOnDependency,
    int dependenciesIgnored,
    Optional<TenancyReport> tenancy,
    Optional<PredictionReport> predictions,
    Optional<ElasticReport> elastic,
    java.util.OptionalInt migrations) {

  public SimReport withWall(double simWallSec) {
    return new SimReport(
        policy,
        trace,
        cluster,
        clusterGpus,
        jobs,
        skipped,
        estimatesFromRuntime,
        notes,
        makespanSec,
        meanWaitSec,
        p50WaitSec,
        p95WaitSec,
        p99WaitSec,
        maxWaitSec,
        meanJctSec,
        p95JctSec,
        meanBoundedSlowdown,
        utilization,
        fragmentationFreeGpus,
        passes,
        commModel,
        gpuHoursLostToSpread,
        jobsStoppedAtLimit,
        perJob,
        simWallSec,
        passP50Ms,
        passP99Ms,
        series,
        jobsWaitedOnDependency,
        dependenciesIgnored,
        tenancy,
        predictions,
        elastic,
        migrations);
  }

  public SimReport withTenancy(Optional<TenancyReport> value) {
    return new SimReport(
        policy,
        trace,
        cluster,
        clusterGpus,
        jobs,
        skipped,
        estimatesFromRuntime,
        notes,
        makespanSec,
        meanWaitSec,
        p50WaitSec,
        p95WaitSec,
        p99WaitSec,
        maxWaitSec,
        meanJctSec,
        p95JctSec,
        meanBoundedSlowdown,
        utilization,
        fragmentationFreeGpus,
        passes,
        commModel,
        gpuHoursLostToSpread,
        jobsStoppedAtLimit,
        perJob,
        simWallSec,
        passP50Ms,
        passP99Ms,
        series,
        jobsWaitedOnDependency,
        dependenciesIgnored,
        value,
        predictions,
        elastic,
        migrations);
  }

  public SimReport withPredictions(Optional<PredictionReport> value) {
    return new SimReport(
        policy,
        trace,
        cluster,
        clusterGpus,
        jobs,
        skipped,
        estimatesFromRuntime,
        notes,
        makespanSec,
        meanWaitSec,
        p50WaitSec,
        p95WaitSec,
        p99WaitSec,
        maxWaitSec,
        meanJctSec,
        p95JctSec,
        meanBoundedSlowdown,
        utilization,
        fragmentationFreeGpus,
        passes,
        commModel,
        gpuHoursLostToSpread,
        jobsStoppedAtLimit,
        perJob,
        simWallSec,
        passP50Ms,
        passP99Ms,
        series,
        jobsWaitedOnDependency,
        dependenciesIgnored,
        tenancy,
        value,
        elastic,
        migrations);
  }

  /**
   * The report as ordered name/value pairs (the JSON field names). With {@code timing} false the
   * wall-clock fields are left out, and the map is identical for identical input.
   */
  public Map<String, Object> toMap(boolean timing) {
    var m = new LinkedHashMap<String, Object>();
    m.put("policy", policy);
    m.put("trace", trace);
    m.put("cluster", cluster);
    m.put("cluster_gpus", clusterGpus);
    m.put("jobs", jobs);
    m.put("skipped", skipped);
    m.put("estimates_from_runtime", estimatesFromRuntime);
    m.put("makespan_s", makespanSec);
    m.put("mean_wait_s", round(meanWaitSec));
    m.put("p50_wait_s", p50WaitSec);
    m.put("p95_wait_s", p95WaitSec);
    m.put("p99_wait_s", p99WaitSec);
    m.put("max_wait_s", maxWaitSec);
    m.put("mean_jct_s", round(meanJctSec));
    m.put("p95_jct_s", p95JctSec);
    m.put("mean_bounded_slowdown", round(meanBoundedSlowdown));
    m.put("utilization", round(utilization));
    m.put("fragmentation", round(fragmentationFreeGpus));
    m.put("passes", passes);
    m.put("comm_model", commModel);
    m.put("gpu_hours_lost_to_spread", round(gpuHoursLostToSpread));
    m.put("jobs_stopped_at_limit", jobsStoppedAtLimit);
    // Only for traces with dependencies, so that other reports stay as they were.
    if (jobsWaitedOnDependency > 0 || dependenciesIgnored > 0) {
      m.put("jobs_waited_on_dependency", jobsWaitedOnDependency);
      m.put("dependencies_ignored", dependenciesIgnored);
    }
    // Only under a tenancy file, so that other reports stay as they were.
    tenancy.ifPresent(t -> m.put("tenancy", t.toMap()));
    // Only with --migration, so that other reports stay as they were.
    migrations.ifPresent(count -> m.put("migrations", count));
    // Only with --predictions, so that other reports stay as they were.
    predictions.ifPresent(p -> m.putAll(p.toMap()));
    // Only with --elastic-share or --checkpoint-cost, so that other reports stay as they were.
    elastic.ifPresent(e -> m.putAll(e.toMap()));
    if (timing) {
      m.put("sim_wall_s", round(simWallSec));
      m.put("pass_p50_ms", round(passP50Ms));
      m.put("pass_p99_ms", round(passP99Ms));
    }
    m.put("notes", notes);
    return m;
  }

  static double round(double value) {
    return Math.abs(value) < 1e12 ? Math.round(value * 1000.0) / 1000.0 : value;
  }
}
