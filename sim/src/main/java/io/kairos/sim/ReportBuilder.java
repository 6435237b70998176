package io.kairos.sim;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.sched.Policy;
import io.kairos.sim.trace.Trace;
import io.kairos.sim.trace.TraceJob;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Builds a run's {@link SimReport}: the figures over the jobs that ran, the notes, the time series,
 * the per-job output and, under a tenancy, the per-queue and per-account figures.
 *
 * <p>State it owns: what is recorded only for the report while the run goes on, and changes no
 * decision. That is the notes (from the trace and the run's setup, then its own), the {@link
 * SeriesRecorder} (with {@link SimOptions#recordSeries()}), each job's nodes (with {@link
 * SimOptions#recordJobs()}), the fragmentation sums and the pass times. At the end it reads the
 * {@link JobRuns}, the arrivals in {@link Dependencies} and the {@link TenancyBook}, which the
 * event loop keeps.
 */
final class ReportBuilder {
  private final Cluster cluster;
  private final String clusterName;
  private final Policy policy;
  private final SimOptions options;
  private final Trace trace;
  private final List<TraceJob> jobs;
  private final List<JobSpec> specs;
  private final int n;
  private final List<String> notes;
  private final int skipped;

  /** Tenancy bookkeeping, or null for a single-tenant run. */
  private final TenancyBook book;

  private final JobRuns runs;
  private final Dependencies dependencies;

  /** The charts' time series, or null when not recorded. */
  private final SeriesRecorder series;

  /** Each job's nodes (its last run's), or null when the per-job output is not recorded. */
  private final int[][] nodes;

  private double fragGpuSeconds;
  private long fragSeconds;
  private long[] passNanos = new long[1024];
  private int timedPasses;

  ReportBuilder(
      Cluster cluster,
      String clusterName,
      Policy policy,
      SimOptions options,
      Trace trace,
      List<TraceJob> jobs,
      List<JobSpec> specs,
      List<String> notes,
      int skipped,
      TenancyBook book,
      JobRuns runs,
      Dependencies dependencies) {
    this.cluster = cluster;
    this.clusterName = clusterName;
    this.policy = policy;
    this.options = options;
    this.trace = trace;
    this.jobs = jobs;
    this.specs = specs;
    this.n = jobs.size();
    this.notes = notes;
    this.skipped = skipped;
    this.book = book;
    this.runs = runs;
    this.dependencies = dependencies;
    nodes = options.recordJobs() ? new int[n][] : null;
    series =
        !options.recordSeries()
            ? null
            : book == null
                ? new SeriesRecorder(cluster, jobs)
                : new SeriesRecorder(cluster, jobs, book.quotaGroups(jobs));
  }

  /** Job {@code i} started a run at {@code t} on {@code placement}. */
  void started(int i, long t, Placement placement, int gpus) {
    if (series != null) {
      series.started(i, t, placement, gpus);
    }
    if (nodes != null) {
      nodes[i] = placement.nodes();
    }
  }

  /** Whether the series are recorded, so that {@link #ended} needs the run's placement. */
  boolean recordsSeries() {
    return series != null;
  }

  /** A run of job {@code i} on {@code placement} ended at {@code t} (finished or stopped). */
  void ended(int i, long t, Placement placement, int gpus) {
    if (series != null) {
      series.finished(i, t, placement, gpus);
    }
  }

  /**
   * Nothing happens from {@code t} to {@code nextT}, with {@code freeGpus} free. Fragmentation: the
   * free GPUs while {@code waitingJobFits} (a waiting job would fit them in total).
   */
  void interval(long t, long nextT, long freeGpus, boolean waitingJobFits) {
    if (series != null) {
      series.interval(t, nextT, cluster.totalGpus() - freeGpus);
    }
    if (waitingJobFits) {
      fragGpuSeconds += (double) freeGpus * (nextT - t);
      fragSeconds += nextT - t;
    }
  }

  /** A pass took {@code nanos} (only when passes are timed). */
  void passTimed(long nanos) {
    if (timedPasses == passNanos.length) {
      passNanos = Arrays.copyOf(passNanos, timedPasses * 2);
    }
    passNanos[timedPasses++] = nanos;
  }

  /**
   * A job's wait: the time between its arrival and its end that it did not run (so a requeued job's
   * second wait counts too); without preemption, its start minus its arrival.
   */
  private long waitOf(int i) {
    return runs.end(i) - dependencies.arrival(i) - runs.runSec(i);
  }

  /**
   * The report, after {@code passes} passes; {@code resizesRefused} resizes were not applied (the
   * first described by {@code firstRefused}).
   */
  SimReport build(int passes, int resizesRefused, String firstRefused) {
    // Jobs that never started (under a tenancy whose quotas can never admit them) are left out.
    int ran = 0;
    for (int i = 0; i < n; i++) {
      ran += runs.everStarted(i) ? 1 : 0;
    }
    long[] waits = new long[ran];
    long[] jcts = new long[ran];
    double waitSum = 0;
    double jctSum = 0;
    double slowdownSum = 0;
    double busyGpuSeconds = 0;
    long firstSubmit = n == 0 ? 0 : jobs.getFirst().submitSec();
    long lastEnd = firstSubmit;
    for (int i = 0, k = 0; i < n; i++) {
      if (!runs.everStarted(i)) {
        continue;
      }
      TraceJob job = jobs.get(i);
      long wait = waitOf(i);
      long run = runs.runSec(i);
      waits[k] = wait;
      jcts[k] = wait + run;
      k++;
      waitSum += wait;
      jctSum += wait + run;
      // An elastic job's run time depends on its sizes: its slowdown is against the trace's.
      long reference = runs.elastic(i) ? job.durationSec() : run;
      slowdownSum += Math.max(1.0, (double) (wait + run) / Math.max(reference, 10));
      busyGpuSeconds += runs.gpuSeconds(i);
      lastEnd = Math.max(lastEnd, runs.end(i));
    }
    addNotes(ran);
    if (resizesRefused > 0) {
      notes.add(
          resizesRefused
              + " resizes named a job being stopped or no longer running, and were not applied"
              + " (first: "
              + firstRefused
              + ")");
    }
    Arrays.sort(waits);
    Arrays.sort(jcts);
    long makespan = lastEnd - firstSubmit;
    long[] nanos = Arrays.copyOf(passNanos, timedPasses);
    Arrays.sort(nanos);
    return new SimReport(
        policy.name(),
        trace.source(),
        clusterName,
        cluster.totalGpus(),
        n,
        skipped,
        trace.estimatesFromRuntime(),
        List.copyOf(notes),
        makespan,
        ran == 0 ? 0 : waitSum / ran,
        percentile(waits, 50),
        percentile(waits, 95),
        percentile(waits, 99),
        ran == 0 ? 0 : waits[ran - 1],
        ran == 0 ? 0 : jctSum / ran,
        percentile(jcts, 95),
        ran == 0 ? 0 : slowdownSum / ran,
        makespan == 0 ? 0 : busyGpuSeconds / ((double) cluster.totalGpus() * makespan),
        fragSeconds == 0 ? 0 : fragGpuSeconds / fragSeconds,
        passes,
        options.commModel().isPresent(),
        runs.lostGpuSeconds() / 3600.0,
        runs.stoppedAtLimit(),
        perJob(),
        0,
        nanos.length == 0 ? 0 : percentile(nanos, 50) / 1e6,
        nanos.length == 0 ? 0 : percentile(nanos, 99) / 1e6,
        series == null ? Optional.empty() : Optional.of(series.finish(lastEnd, waits)),
        dependencies.waited(),
        dependencies.ignored(),
        book == null ? Optional.empty() : Optional.of(tenancyReport(n - ran)),
        Optional.empty(),
        elasticReport(resizesRefused),
        options.migration().isPresent()
            ? java.util.OptionalInt.of(runs.migrations())
            : java.util.OptionalInt.empty());
  }

  /** The elastic model's figures, when it is enabled. */
  private Optional<ElasticReport> elasticReport(int resizesRefused) {
    ElasticModel model = options.elastic();
    if (!model.enabled()) {
      return Optional.empty();
    }
    ElasticRuns e = runs.elasticRuns();
    int elasticJobs = 0;
    int resizes = 0;
    for (int i = 0; i < n; i++) {
      elasticJobs += runs.elastic(i) ? 1 : 0;
      resizes += runs.elastic(i) ? e.resizes(i) : 0;
    }
    return Optional.of(
        new ElasticReport(
            model.elasticShare(),
            model.checkpointCostSec(),
            elasticJobs,
            resizes,
            e == null ? 0 : e.totalGrows(),
            resizesRefused,
            runs.migrations(),
            runs.preemptionLostGpuSeconds() / 3600.0,
            e == null ? 0 : e.resizeLostGpuSec() / 3600.0));
  }

  /** The run's own notes: jobs that never started, preemptions ignored or expired. */
  private void addNotes(int ran) {
    if (ran < n) {
      notes.add(
          (n - ran)
              + " jobs never started: their queue's quota can never admit them (left out"
              + " of the figures)");
    }
    if (runs.preemptionsIgnored() > 0) {
      notes.add(
          runs.preemptionsIgnored()
              + " preemptions named a job that was not running or already"
              + " stopping, and were ignored (first: "
              + runs.firstIgnored()
              + ")");
    }
    if (book != null && book.expired > 0) {
      notes.add(
          book.expired
              + " preemptions ended without their preemptor starting within 2 x grace"
              + " + 60 s (first: "
              + book.firstExpired
              + ", job numbers in trace order)");
    }
  }

  /** Each job's trace id, arrival, first start, end and nodes; empty when not recorded. */
  private Optional<SimJobs> perJob() {
    if (nodes == null) {
      return Optional.empty();
    }
    long[] ids = new long[n];
    long[] submits = new long[n];
    for (int i = 0; i < n; i++) {
      ids[i] = jobs.get(i).id();
      submits[i] = dependencies.arrival(i);
    }
    Optional<SimJobs.Elastic> elastic = Optional.empty();
    if (options.elastic().enabled()) {
      int[] minGpus = new int[n];
      int[] maxGpus = new int[n];
      int[] resizes = new int[n];
      int[] migrations = new int[n];
      double[] gpuSeconds = new double[n];
      double[] lost = new double[n];
      ElasticRuns e = runs.elasticRuns();
      for (int i = 0; i < n; i++) {
        var gang = specs.get(i).gang();
        minGpus[i] = gang.totalGpus();
        maxGpus[i] = (int) gang.maxGpus();
        gpuSeconds[i] = runs.gpuSeconds(i);
        migrations[i] = runs.migrations(i);
        lost[i] = runs.preemptionLostGpuSeconds(i);
        if (runs.elastic(i)) {
          resizes[i] = e.resizes(i);
          lost[i] += e.lostGpuSec(i);
        }
      }
      elastic =
          Optional.of(new SimJobs.Elastic(minGpus, maxGpus, resizes, migrations, gpuSeconds, lost));
    }
    return Optional.of(new SimJobs(ids, submits, runs.firstStarts(), runs.ends(), nodes, elastic));
  }

  /** Per-queue figures and fairness (finish-time fairness is added by the alone runs). */
  private TenancyReport tenancyReport(int neverStarted) {
    int queues = book.queueNames.size();
    int[] count = new int[queues];
    for (int i = 0; i < n; i++) {
      count[book.queueOf[i]] += runs.everStarted(i) ? 1 : 0;
    }
    long[][] waits = new long[queues][];
    for (int q = 0; q < queues; q++) {
      waits[q] = new long[count[q]];
    }
    int[] filled = new int[queues];
    double[] waitSum = new double[queues];
    double[] jctSum = new double[queues];
    double[] gpuSec = new double[queues];
    int bigGpus = book.settings.starvationMinGpus() > 0 ? book.settings.starvationMinGpus() : 64;
    long bigMaxWait = 0;
    for (int i = 0; i < n; i++) {
      if (!runs.everStarted(i)) {
        continue;
      }
      int q = book.queueOf[i];
      long wait = waitOf(i);
      waits[q][filled[q]++] = wait;
      waitSum[q] += wait;
      jctSum[q] += runs.end(i) - dependencies.arrival(i);
      gpuSec[q] += runs.gpuSeconds(i);
      if (specs.get(i).totalGpus() >= bigGpus) {
        bigMaxWait = Math.max(bigMaxWait, wait);
      }
    }
    var reports = new ArrayList<TenancyReport.QueueReport>(queues);
    double[] served = new double[queues];
    for (int q = 0; q < queues; q++) {
      Arrays.sort(waits[q]);
      served[q] =
          book.entitledGpuSec[q] > 0 ? book.servedGpuSec[q] / book.entitledGpuSec[q] : Double.NaN;
      int c = count[q];
      reports.add(
          new TenancyReport.QueueReport(
              book.queueNames.get(q),
              book.nominalGpus[q],
              (double) book.nominalGpus[q] / cluster.totalGpus(),
              c,
              gpuSec[q] / 3600.0,
              c == 0 ? 0 : waitSum[q] / c,
              percentile(waits[q], 99),
              c == 0 ? 0 : jctSum[q] / c,
              book.preemptions[q],
              book.lostGpuSec[q] / 3600.0,
              served[q],
              Double.NaN,
              0));
    }
    return new TenancyReport(
        book.schedules(),
        book.sim.checkpointEverySec(),
        runs.preemptionsSignalled(),
        runs.requeued(),
        runs.preemptionLostGpuSeconds() / 3600.0,
        TenancyReport.jain(served),
        "",
        Double.NaN,
        bigGpus,
        bigMaxWait,
        neverStarted,
        reports,
        accountReports());
  }

  /** Per account: the same figures as per queue, over the jobs charged to it. */
  private List<TenancyReport.AccountReport> accountReports() {
    int accounts = book.accountNames.size();
    int[] count = new int[accounts];
    boolean[][] inQueue = new boolean[accounts][book.queueNames.size()];
    for (int i = 0; i < n; i++) {
      int a = book.reportAccountOf[i];
      count[a] += runs.everStarted(i) ? 1 : 0;
      inQueue[a][book.queueOf[i]] = true;
    }
    long[][] waits = new long[accounts][];
    for (int a = 0; a < accounts; a++) {
      waits[a] = new long[count[a]];
    }
    int[] filled = new int[accounts];
    double[] waitSum = new double[accounts];
    double[] jctSum = new double[accounts];
    double[] gpuSec = new double[accounts];
    for (int i = 0; i < n; i++) {
      if (!runs.everStarted(i)) {
        continue;
      }
      int a = book.reportAccountOf[i];
      long wait = waitOf(i);
      waits[a][filled[a]++] = wait;
      waitSum[a] += wait;
      jctSum[a] += runs.end(i) - dependencies.arrival(i);
      gpuSec[a] += runs.gpuSeconds(i);
    }
    double[] factors = book.finalFairShareFactors();
    var reports = new ArrayList<TenancyReport.AccountReport>(accounts);
    for (int a = 0; a < accounts; a++) {
      Arrays.sort(waits[a]);
      var queues = new ArrayList<String>();
      for (int q = 0; q < book.queueNames.size(); q++) {
        if (inQueue[a][q]) {
          queues.add(book.queueNames.get(q));
        }
      }
      int c = count[a];
      reports.add(
          new TenancyReport.AccountReport(
              book.accountNames.get(a),
              queues,
              c,
              gpuSec[a] / 3600.0,
              c == 0 ? 0 : waitSum[a] / c,
              percentile(waits[a], 99),
              c == 0 ? 0 : jctSum[a] / c,
              book.accountPreemptions[a],
              book.accountLostGpuSec[a] / 3600.0,
              factors[a]));
    }
    return reports;
  }

  /** Nearest-rank percentile of a sorted array. */
  static long percentile(long[] sorted, int p) {
    if (sorted.length == 0) {
      return 0;
    }
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }
}
