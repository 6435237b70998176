package io.kairos.sim;

import io.kairos.core.model.Cluster;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.JobSpec;
import io.kairos.core.sched.Policy;
import io.kairos.core.state.Reducer;
import io.kairos.core.tenancy.Tenants;
import io.kairos.sim.trace.Trace;
import io.kairos.sim.trace.TraceJob;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Replays a trace through the scheduling core on a virtual clock.
 *
 * <p>Loop: take the next instant (the earliest of the next completion, from a 4-ary heap, and the
 * next arrival, from the sorted trace); apply all completions at that instant, then all arrivals;
 * then run one scheduling pass and apply its starts through the same {@link Reducer} the controller
 * uses, scheduling each started job's completion. A pass is skipped when no waiting job could fit
 * in the free GPUs (it could not start anything).
 *
 * <p>With {@link SimOptions#recordSeries()}, a {@link SeriesRecorder} is told of every start,
 * finish and interval between instants, for the report's charts; it changes no decision.
 *
 * <p>A job with a preceding job (SWF's fields 17 and 18, the CSV's {@code depends_on}) does not
 * arrive at its own submit time: it arrives its think time after the preceding job ends, as an
 * event in the same heap (completions at an instant come before arrivals). A preceding job that is
 * not in the trace, was skipped, or comes later in submit order is ignored and counted.
 *
 * <p>Deterministic and single-threaded. The only outside input is an optional nanosecond source
 * used to time passes, which never influences a decision.
 *
 * <p>This class checks the trace and turns its jobs into specs (skipping those that can never run),
 * then wires one run's parts: the {@link EventLoop} (events and passes), the {@link JobRuns} (work
 * left, stops, checkpoints, requeues), the {@link Dependencies} (jobs waiting for a preceding job)
 * and the {@link ReportBuilder} (figures, series, per-job output); under a tenancy, the {@link
 * TenancyBook}. Then, if asked, it runs each queue's jobs alone for finish-time fairness.
 */
public final class Simulator {
  /** Told how far the simulation has come; may be called often, must be cheap. */
  public interface Progress {
    void update(long finished, long total);
  }

  /** Simulated times stay below 2^40 s (35,000 years), far from overflow in the event keys. */
  public static final long MAX_TIME_SEC = 1L << 40;

  /**
   * Under a tenancy, a pass runs at least this often while jobs wait and others run, so that
   * time-driven decisions (a victim's protection running out, a large gang's wait reaching the
   * starvation limit, fair share decaying) happen without waiting for the next event.
   */
  public static final long PASS_INTERVAL_SEC = 60;

  private final Cluster cluster;
  private final String clusterName;
  private final Policy policy;
  private final SimOptions options;
  private final LongSupplier nanoTime;
  private final Progress progress;

  public Simulator(
      Cluster cluster,
      String clusterName,
      Policy policy,
      SimOptions options,
      LongSupplier nanoTime,
      Progress progress) {
    this.cluster = cluster;
    this.clusterName = clusterName;
    this.policy = policy;
    this.options = options;
    this.nanoTime = nanoTime;
    this.progress = progress;
  }

  public Simulator(Cluster cluster, String clusterName, Policy policy, SimOptions options) {
    this(cluster, clusterName, policy, options, null, null);
  }

  public SimReport run(Trace trace) {
    // Jobs that can never fit are reported and skipped.
    var notes = new ArrayList<>(trace.notes());
    var kept = new ArrayList<TraceJob>(trace.jobs().size());
    var specs = new ArrayList<JobSpec>(trace.jobs().size());
    var skippedIds = new ArrayList<Long>();
    var unknownQueue = new java.util.TreeMap<String, Integer>();
    var tenancy = options.tenancy();
    int elasticJobs = 0;
    for (TraceJob t : trace.jobs()) {
      if (t.submitSec() < 0
          || t.durationSec() <= 0
          || t.timeLimitSec() < t.durationSec()
          || t.submitSec() > MAX_TIME_SEC - t.timeLimitSec()
          || t.thinkTimeSec() < 0
          || t.thinkTimeSec() > MAX_TIME_SEC) {
        throw new IllegalArgumentException(
            trace.source()
                + ": job "
                + t.id()
                + ": submit "
                + t.submitSec()
                + " s, duration "
                + t.durationSec()
                + " s, limit "
                + t.timeLimitSec()
                + " s: times must be >= 0"
                + " (duration >= 1, limit >= duration) and submit + limit below 2^40 s, think time "
                + t.thinkTimeSec()
                + " s between 0 and 2^40 s");
      }
      if (t.gpus() > cluster.totalGpus()
          || t.gpus() > GangSpec.MAX_TASKS
          || t.gpusPerNode() > cluster.maxGpusPerNode()) {
        skippedIds.add(t.id());
        continue;
      }
      GangSpec gang =
          t.gpusPerNode() > 0
              ? GangSpec.perNode(t.gpus(), t.gpusPerNode())
              : GangSpec.flexible(t.gpus());
      if (!cluster.canEverHold(gang, "")) {
        skippedIds.add(t.id());
        continue;
      }
      long limit = t.timeLimitSec();
      GangSpec elastic = options.elastic().elasticGang(t, cluster, options.seed());
      if (elastic != null && cluster.canEverHold(elastic, "")) {
        gang = elastic;
        limit = ElasticModel.elasticLimit(t, elastic);
        elasticJobs++;
      }
      var spec = new JobSpec(t.user(), t.queue(), t.priority(), gang, limit, "");
      if (tenancy.isPresent()) {
        var config = tenancy.get().tenancy().config();
        if (config.queue(t.queue()).isEmpty()) {
          unknownQueue.merge(t.queue(), 1, Integer::sum);
          continue;
        }
        if (tenancy.get().schedule()) {
          spec = resolve(spec, config);
        }
      }
      kept.add(t);
      specs.add(spec);
    }
    if (!skippedIds.isEmpty()) {
      notes.add(
          skippedIds.size()
              + " jobs larger than the cluster were skipped (first ids: "
              + skippedIds.subList(0, Math.min(5, skippedIds.size()))
              + ")");
    }
    if (!unknownQueue.isEmpty()) {
      int count = unknownQueue.values().stream().mapToInt(Integer::intValue).sum();
      notes.add(
          count
              + " jobs of queues the tenancy file does not declare were skipped (queues "
              + unknownQueue.keySet().stream().limit(5).toList()
              + (unknownQueue.size() > 5 ? ", ..." : "")
              + ")");
    }
    if (elasticJobs > 0) {
      notes.add(
          elasticJobs
              + " jobs are elastic (--elastic-share "
              + options.elastic().elasticShare()
              + ", seed "
              + options.seed()
              + ")");
    }
    // Preceding jobs, by index in submit order; only an earlier job can be waited for.
    var dependencies = Dependencies.of(kept);
    if (dependencies.ignored() > 0) {
      notes.add(
          dependencies.ignored()
              + " jobs name a preceding job that is not in the trace, was skipped or"
              + " comes later: they arrive at their own submit time");
    }
    TenancyBook book =
        tenancy.isEmpty()
            ? null
            : TenancyBook.of(
                tenancy.get(), cluster, specs, kept.isEmpty() ? 0 : kept.getFirst().submitSec());
    var runs =
        new JobRuns(
            cluster, kept, specs, options.commModel(), options.elastic().checkpointCostSec());
    var reportBuilder =
        new ReportBuilder(
            cluster,
            clusterName,
            policy,
            options,
            trace,
            kept,
            specs,
            notes,
            skippedIds.size(),
            book,
            runs,
            dependencies);
    SimReport report =
        new EventLoop(
                cluster,
                policy,
                options,
                nanoTime,
                progress,
                kept,
                specs,
                book == null ? RunTenancy.NONE : book,
                runs,
                dependencies,
                reportBuilder)
            .run();
    if (tenancy.isPresent() && tenancy.get().aloneRuns() && report.tenancy().isPresent()) {
      var shared = report.tenancy().get();
      report =
          report.withTenancy(
              Optional.of(aloneRuns(trace, kept, specs, book, runs, dependencies, shared)));
    }
    return report;
  }

  /**
   * The spec under the tenancy: account and priority class from the queue's defaults, the class's
   * priority; a job whose account would be empty (no account, no queue default, no user) is charged
   * to an account named after its queue.
   */
  private static JobSpec resolve(JobSpec spec, io.kairos.core.tenancy.TenancyConfig config) {
    JobSpec resolved = Tenants.resolve(spec, config);
    if (resolved.account().isEmpty()) {
      resolved = resolved.withTenancy(spec.queue(), resolved.priorityClass(), resolved.priority());
    }
    return resolved;
  }

  /**
   * Finish-time fairness: each queue's jobs (those that ran) simulated by themselves, same policy,
   * no tenancy, on whole nodes of the cluster's largest node size adding up to the queue's nominal
   * GPUs (rounded to the nearest node, at least one); jobs too large for that are left out of both
   * means. See {@link TenancyReport}.
   */
  private TenancyReport aloneRuns(
      Trace trace,
      List<TraceJob> kept,
      List<JobSpec> specs,
      TenancyBook book,
      JobRuns runs,
      Dependencies dependencies,
      TenancyReport shared) {
    int gpusPerNode = cluster.maxGpusPerNode();
    var aloneOptions =
        new SimOptions(
                false, options.commModel(), false, options.seed(), false, options.placement())
            .withElastic(options.elastic());
    var updated = new ArrayList<TenancyReport.QueueReport>();
    for (int q = 0; q < book.queueNames.size(); q++) {
      var queue = shared.queues().get(q);
      long nominal = book.nominalGpus[q];
      if (nominal <= 0) {
        updated.add(queue);
        continue;
      }
      int nodes = (int) Math.max(1, Math.min(1 << 20, Math.round((double) nominal / gpusPerNode)));
      Cluster alone = Cluster.uniform(nodes, gpusPerNode, 16, 8);
      var jobs = new ArrayList<TraceJob>();
      double sharedJct = 0;
      for (int i = 0; i < kept.size(); i++) {
        if (book.queueOf[i] != q || !runs.everStarted(i)) {
          continue;
        }
        TraceJob t = kept.get(i);
        if (!alone.canEverHold(specs.get(i).gang(), "")) {
          continue;
        }
        jobs.add(t);
        sharedJct += runs.end(i) - dependencies.arrival(i);
      }
      if (jobs.isEmpty()) {
        updated.add(queue);
        continue;
      }
      var subset =
          new Trace(
              trace.source() + " [" + book.queueNames.get(q) + "]",
              trace.format(),
              jobs,
              jobs.size(),
              0,
              trace.estimatesFromRuntime(),
              List.of());
      SimReport aloneReport =
          new Simulator(alone, nodes + "x" + gpusPerNode, policy, aloneOptions).run(subset);
      double rho =
          aloneReport.meanJctSec() > 0
              ? sharedJct / jobs.size() / aloneReport.meanJctSec()
              : Double.NaN;
      updated.add(queue.withFinishTimeFairness(rho, jobs.size()));
    }
    return shared.withQueues(updated);
  }
}
