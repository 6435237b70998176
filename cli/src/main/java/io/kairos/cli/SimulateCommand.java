package io.kairos.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.kairos.config.Tenancy;
import io.kairos.config.TenancyYaml;
import io.kairos.core.fairshare.FairShareFactor;
import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.core.sched.place.PlacementStrategy;
import io.kairos.sim.CommModel;
import io.kairos.sim.ElasticModel;
import io.kairos.sim.SimOptions;
import io.kairos.sim.SimReport;
import io.kairos.sim.SimTenancy;
import io.kairos.sim.Simulator;
import io.kairos.sim.report.Figure;
import io.kairos.sim.report.HtmlReport;
import io.kairos.sim.report.ReportCharts;
import io.kairos.sim.trace.EstimateMode;
import io.kairos.sim.trace.GpuWorkload;
import io.kairos.sim.trace.Trace;
import io.kairos.sim.trace.TraceReaders;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code kairos simulate}: replays a trace through one or more policies and reports. */
@Command(
    name = "simulate",
    mixinStandardHelpOptions = true,
    description = {
      "Replay a workload trace through the scheduling core on a virtual clock.",
      "Example: kairos simulate --trace ../shared/traces/swf/SDSC-SP2-1998-4.2-cln.swf.gz"
          + " --cluster 128x1 --policy easy,kairos"
    })
final class SimulateCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--trace",
      description =
          "Trace file (SWF, Philly CSV, Kairos CSV or Slurm sacct --parsable2 output; gzip ok).")
  Path trace;

  @Option(
      names = "--generate",
      description =
          "Instead of --trace: a generated GPU workload, e.g. jobs=20000,load=0.95,max-gpus=256,seed=1"
              + " (each key optional; see docs/simulator.md).")
  String generate;

  @Option(
      names = "--format",
      defaultValue = "auto",
      description =
          "auto, swf, philly, kairos-csv, sacct or sia-workload (default: ${DEFAULT-VALUE}).")
  String format;

  @Option(
      names = "--cluster",
      required = true,
      description = "NxG (N nodes of G GPUs, e.g. 64x8) or a cluster YAML file.")
  String cluster;

  @Option(
      names = "--rack-size",
      defaultValue = "16",
      description = "Nodes per rack for NxG clusters (default: ${DEFAULT-VALUE}).")
  int rackSize;

  @Option(
      names = "--block-size",
      defaultValue = "8",
      description = "Racks per block for NxG clusters (default: ${DEFAULT-VALUE}).")
  int blockSize;

  @Option(
      names = "--policy",
      defaultValue = "kairos",
      split = ",",
      description =
          "Policies, comma separated: fcfs, easy, conservative, sjf, kairos, kairos-predicted (default: ${DEFAULT-VALUE}).")
  List<String> policies;

  @Option(
      names = "--estimate",
      defaultValue = "requested",
      description = "requested (the trace's estimate) or actual (run times as estimates).")
  String estimate;

  @Option(names = "--json", description = "Print one JSON object instead of a table.")
  boolean json;

  @Option(names = "--markdown", description = "Print a Markdown table (for docs).")
  boolean markdown;

  @Option(
      names = "--no-timing",
      description = "Leave out wall-clock figures, so output is byte-identical across runs.")
  boolean noTiming;

  @Option(
      names = "--jobs-out",
      description = "Write per-job rows (policy, id, submit, start, end, nodes) as CSV.")
  Path jobsOut;

  @Option(
      names = "--report",
      description =
          "Write a self-contained HTML report with charts (utilization, wait CDF, queue shares, fragmentation) of all policies.")
  Path reportOut;

  @Option(
      names = "--charts",
      description = "Write the report's charts as standalone SVG files into this directory.")
  Path chartsDir;

  @Option(
      names = "--check-invariants",
      description = "Check scheduler invariants after every event (slower).")
  boolean checkInvariants;

  @Option(
      names = "--comm-model",
      description = "Slow down gangs spread across topology levels (ring all-reduce model).")
  boolean commModel;

  @Option(
      names = "--comm-fraction",
      defaultValue = "0.2",
      description = "Share of a packed job's time spent communicating (default: ${DEFAULT-VALUE}).")
  double commFraction;

  @Option(
      names = "--migration",
      description =
          "Move running jobs (all count as checkpointable) when that lets a waiting job start or packs a spread gang, and the gain exceeds the cost.")
  boolean migration;

  @Option(
      names = "--migration-restart-cost",
      defaultValue = "60",
      description = "Seconds of a moved gang's time one move costs (default: ${DEFAULT-VALUE}).")
  long migrationRestartCost;

  @Option(
      names = "--migration-window",
      defaultValue = "3600",
      description = "Seconds before a moved job may be moved again (default: ${DEFAULT-VALUE}).")
  long migrationWindow;

  @Option(
      names = "--placement",
      defaultValue = "topology",
      description =
          "topology (lowest domain, best fit; default) or first-fit (node order, blind to topology: for comparison).")
  String placement;

  @Option(
      names = "--every-pass",
      description =
          "Run a pass after every event batch, even when it provably starts nothing (slower; same decisions).")
  boolean everyPass;

  @Option(
      names = "--tenancy",
      description =
          "Tenancy file (queues, quotas, cohorts, priority classes, fair-share accounts; see docs/tenancy.md). Every run reports per-queue figures against it; the --tenancy-policies schedule by it.")
  Path tenancyFile;

  @Option(
      names = "--tenancy-policies",
      defaultValue = "kairos",
      split = ",",
      description =
          "Policies that schedule by the tenancy file (quota admission, fair share, preemption); the others run plain and are only measured by it (default: ${DEFAULT-VALUE}).")
  List<String> tenancyPolicies;

  @Option(
      names = "--checkpoint-every",
      defaultValue = "30m",
      description =
          "Under a tenancy: a running job saves its progress this often (run time since it started); a preempted job resumes from its last checkpoint. 0 for never (default: ${DEFAULT-VALUE}).")
  String checkpointEvery;

  @Option(
      names = "--elastic-share",
      description =
          "Make this fraction (0 to 1) of the eligible jobs (2+ GPUs in whole nodes) elastic, from half to twice their nodes, chosen by --seed and the job id (see docs/simulator.md; default: none).")
  String elasticShare;

  @Option(
      names = "--checkpoint-cost",
      description =
          "Seconds a checkpoint on demand takes (e.g. 60s, 2m): preempted jobs checkpoint and keep their work, losing only this; each resize of an elastic job costs this (default: 0, free).")
  String checkpointCost;

  @Option(
      names = "--fair-share",
      defaultValue = "classic",
      description =
          "Under a tenancy: classic or fair-tree (Slurm's algorithms; default: ${DEFAULT-VALUE}).")
  String fairShare;

  @Option(
      names = "--no-alone-runs",
      description =
          "Under a tenancy: skip the per-queue runs alone on the queue's nominal GPUs (no finish-time fairness; faster).")
  boolean noAloneRuns;

  @Option(
      names = "--predictions",
      description =
          "Measure predicted start times: at each job's arrival and each hour of its wait, the start the controller would show, against the real start (slower; see docs/simulator.md).")
  boolean predictions;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description = "Seed for randomised tie breaks (default: ${DEFAULT-VALUE}).")
  long seed;

  @Override
  public Integer call() {
    long started = System.nanoTime();
    var chosen = new ArrayList<Policy>();
    for (String name : policies) {
      chosen.add(
          Policy.byName(name.trim())
              .orElseThrow(
                  () ->
                      new UsageException(
                          "--policy: unknown policy '"
                              + name
                              + "'; choose from "
                              + String.join(", ", Policy.names()))));
    }
    EstimateMode mode =
        switch (estimate) {
          case "requested" -> EstimateMode.REQUESTED;
          case "actual" -> EstimateMode.ACTUAL;
          default ->
              throw new UsageException(
                  "--estimate: unknown value '" + estimate + "'; use requested or actual");
        };
    if (!TraceReaders.FORMATS.contains(format) && !format.equals(TraceReaders.AUTO)) {
      throw new UsageException(
          "--format: unknown format '"
              + format
              + "'; use "
              + String.join(", ", TraceReaders.FORMATS));
    }
    if (!(commFraction >= 0 && commFraction <= 1)) {
      throw new UsageException("--comm-fraction must be between 0 and 1, got " + commFraction);
    }
    if (migrationRestartCost < 0 || migrationWindow < 0) {
      throw new UsageException(
          "--migration-restart-cost and --migration-window must be >= 0 seconds, got "
              + migrationRestartCost
              + " and "
              + migrationWindow);
    }
    if (rackSize < 1 || blockSize < 1) {
      throw new UsageException("--rack-size and --block-size must be >= 1");
    }
    if (json && markdown) {
      throw new UsageException("--json and --markdown: choose one");
    }
    PlacementStrategy strategy =
        switch (placement) {
          case "topology" -> PlacementStrategy.TOPOLOGY;
          case "first-fit" -> PlacementStrategy.FIRST_FIT;
          default ->
              throw new UsageException(
                  "--placement: unknown value '" + placement + "'; use topology or first-fit");
        };
    Optional<SimTenancy> tenancy = tenancy();
    for (String name : tenancyPolicies) {
      if (Policy.byName(name.trim()).isEmpty()) {
        throw new UsageException(
            "--tenancy-policies: unknown policy '"
                + name
                + "'; choose from "
                + String.join(", ", Policy.names()));
      }
    }
    if ((trace == null) == (generate == null)) {
      throw new UsageException("give one of --trace FILE and --generate SPEC");
    }
    var named = ClusterSpecs.parse(cluster, rackSize, blockSize);
    Trace loaded =
        trace != null ? TraceReaders.read(trace, format, mode) : generated(named.cluster());
    SimOptions options =
        new SimOptions(
            checkInvariants,
            commModel ? Optional.of(CommModel.defaults(commFraction)) : Optional.empty(),
            jobsOut != null,
            seed,
            everyPass,
            strategy,
            reportOut != null || chartsDir != null);
    options = options.withPredictions(predictions).withElastic(elasticModel());
    if (migration) {
      options =
          options.withMigration(
              Optional.of(
                  new io.kairos.core.sched.MigrationSettings(
                      migrationWindow, migrationRestartCost, 0.30)));
    }
    var reports = new ArrayList<SimReport>();
    for (Policy policy : chosen) {
      long t0 = System.nanoTime();
      var progress = ProgressBar.forTerminal(policy.name());
      boolean schedules = tenancyPolicies.stream().anyMatch(p -> p.trim().equals(policy.name()));
      var runOptions = options.withTenancy(tenancy.map(t -> t.withSchedule(schedules)));
      var report =
          new Simulator(
                  named.cluster(), named.name(), policy, runOptions, System::nanoTime, progress)
              .run(loaded);
      if (progress != null) {
        progress.done();
      }
      reports.add(report.withWall((System.nanoTime() - t0) / 1e9));
    }
    if (jobsOut != null) {
      writeJobs(jobsOut, reports, named.cluster());
    }
    if (reportOut != null || chartsDir != null) {
      writeReport(reports, loaded);
    }
    var out = spec.commandLine().getOut();
    if (json) {
      printJson(out, reports, (System.nanoTime() - started) / 1e9);
    } else if (markdown) {
      ReportTable.markdown(out, reports, !noTiming);
    } else {
      ReportTable.text(out, reports, !noTiming);
    }
    out.flush();
    return 0;
  }

  /** The workload --generate asks for, on {@code cluster}. */
  private Trace generated(Cluster on) {
    GpuWorkload workload;
    try {
      workload = GpuWorkload.parse(generate);
    } catch (IllegalArgumentException e) {
      throw new UsageException("--generate: " + e.getMessage());
    }
    return workload.generate(on.totalGpus(), on.maxGpusPerNode());
  }

  /** The elastic model from --elastic-share and --checkpoint-cost. */
  private ElasticModel elasticModel() {
    double share = 0;
    if (elasticShare != null) {
      try {
        share = Double.parseDouble(elasticShare.strip());
      } catch (NumberFormatException e) {
        share = Double.NaN;
      }
      if (!(share >= 0 && share <= 1)) {
        throw new UsageException(
            "--elastic-share: not a fraction between 0 and 1: '"
                + elasticShare
                + "'; write e.g. 0.5");
      }
    }
    long cost = checkpointCost == null ? 0 : parseDuration(checkpointCost, "--checkpoint-cost");
    try {
      return new ElasticModel(share, cost);
    } catch (IllegalArgumentException e) {
      throw new UsageException(e.getMessage());
    }
  }

  /** The tenancy of the runs, from --tenancy and its companions; empty without a file. */
  private Optional<SimTenancy> tenancy() {
    long checkpointSec = parseDuration(checkpointEvery, "--checkpoint-every");
    FairShareFactor.Algorithm algorithm =
        switch (fairShare) {
          case "classic" -> FairShareFactor.Algorithm.CLASSIC;
          case "fair-tree" -> FairShareFactor.Algorithm.FAIR_TREE;
          default ->
              throw new UsageException(
                  "--fair-share: unknown value '" + fairShare + "'; use classic or fair-tree");
        };
    if (tenancyFile == null) {
      return Optional.empty();
    }
    Tenancy read;
    try {
      read = TenancyYaml.read(tenancyFile);
    } catch (TenancyYaml.InvalidConfig e) {
      throw new UsageException(
          "--tenancy: "
              + e.problems().size()
              + " problem(s) in "
              + tenancyFile
              + ":\n"
              + String.join("\n", e.problems()));
    }
    return Optional.of(new SimTenancy(read, true, checkpointSec, algorithm, !noAloneRuns));
  }

  /** A duration such as 0, 90s, 30m, 2h or 1d, in seconds. */
  static long parseDuration(String text, String option) {
    var m = java.util.regex.Pattern.compile("([0-9]{1,12})([smhd]?)").matcher(text.strip());
    if (!m.matches() || (m.group(2).isEmpty() && !m.group(1).equals("0"))) {
      throw new UsageException(
          option + ": not a duration: '" + text + "'; write e.g. 30m, 2h, 90s or 0");
    }
    long unit =
        switch (m.group(2)) {
          case "m" -> 60;
          case "h" -> 3600;
          case "d" -> 86_400;
          default -> 1;
        };
    return Long.parseLong(m.group(1)) * unit;
  }

  private void printJson(PrintWriter out, List<SimReport> reports, double wallSec) {
    var mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    Object value;
    if (reports.size() == 1) {
      value = reports.getFirst().toMap(!noTiming);
    } else {
      var m = new LinkedHashMap<String, Object>();
      m.put("runs", reports.stream().map(r -> r.toMap(!noTiming)).toList());
      if (!noTiming) {
        m.put("total_wall_s", Math.round(wallSec * 1000) / 1000.0);
      }
      value = m;
    }
    try {
      out.println(mapper.writeValueAsString(value));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void writeReport(List<SimReport> reports, Trace loaded) {
    List<Figure> figures = ReportCharts.build(reports);
    if (chartsDir != null) {
      try {
        Files.createDirectories(chartsDir);
        for (Figure f : figures) {
          Files.writeString(chartsDir.resolve(f.fileName()), f.standaloneSvg());
        }
      } catch (IOException e) {
        throw new UsageException("--charts " + chartsDir + ": cannot write: " + e.getMessage());
      }
    }
    if (reportOut != null) {
      var first = reports.getFirst();
      var parameters = new LinkedHashMap<String, String>();
      parameters.put("trace", first.trace() + " (" + loaded.format() + ")");
      parameters.put("jobs", first.jobs() + " simulated, " + first.skipped() + " skipped");
      parameters.put("cluster", first.cluster() + ", " + first.clusterGpus() + " GPUs");
      parameters.put(
          "policies", String.join(", ", reports.stream().map(SimReport::policy).toList()));
      parameters.put("seed", Long.toString(seed));
      if (tenancyFile != null) {
        parameters.put(
            "tenancy",
            tenancyFile
                + " (scheduled by: "
                + String.join(", ", tenancyPolicies)
                + "; checkpoint every "
                + checkpointEvery
                + ")");
      }
      parameters.put(
          "estimates", first.estimatesFromRuntime() ? "run times (the trace has none)" : estimate);
      parameters.put("placement", placement);
      parameters.put("communication model", commModel ? "on, fraction " + commFraction : "off");
      if (elasticShare != null || checkpointCost != null) {
        parameters.put(
            "elastic model",
            "elastic share "
                + (elasticShare == null ? "0" : elasticShare)
                + ", checkpoint cost "
                + (checkpointCost == null ? "0" : checkpointCost));
      }
      try {
        Files.writeString(reportOut, HtmlReport.page(reports, parameters, figures));
      } catch (IOException e) {
        throw new UsageException("--report " + reportOut + ": cannot write: " + e.getMessage());
      }
    }
  }

  private static void writeJobs(Path file, List<SimReport> reports, Cluster cluster) {
    boolean elastic = reports.getFirst().perJob().orElseThrow().elastic().isPresent();
    try (BufferedWriter w = Files.newBufferedWriter(file)) {
      w.write("policy,id,submit_s,start_s,end_s,wait_s,nodes");
      w.write(elastic ? ",min_gpus,max_gpus,resizes,migrations,gpu_s,lost_gpu_s\n" : "\n");
      var sb = new StringBuilder(256);
      for (SimReport r : reports) {
        var jobs = r.perJob().orElseThrow();
        for (int i = 0; i < jobs.size(); i++) {
          sb.setLength(0);
          sb.append(r.policy())
              .append(',')
              .append(jobs.traceIds()[i])
              .append(',')
              .append(jobs.submitSec()[i])
              .append(',')
              .append(jobs.startSec()[i])
              .append(',')
              .append(jobs.endSec()[i])
              .append(',')
              .append(jobs.startSec()[i] - jobs.submitSec()[i])
              .append(',');
          int[] nodes = jobs.nodes()[i];
          for (int k = 0; k < nodes.length; k++) {
            if (k > 0) {
              sb.append(' ');
            }
            sb.append(cluster.node(nodes[k]).name());
          }
          if (jobs.elastic().isPresent()) {
            var e = jobs.elastic().get();
            sb.append(',')
                .append(e.minGpus()[i])
                .append(',')
                .append(e.maxGpus()[i])
                .append(',')
                .append(e.resizes()[i])
                .append(',')
                .append(e.migrations()[i])
                .append(',')
                .append(Math.round(e.gpuSeconds()[i]))
                .append(',')
                .append(Math.round(e.lostGpuSeconds()[i]));
          }
          sb.append('\n');
          w.write(sb.toString());
        }
      }
    } catch (IOException e) {
      throw new UsageException("--jobs-out " + file + ": cannot write: " + e.getMessage());
    }
  }

  static String fmt(double v) {
    return String.format(Locale.ROOT, "%.3f", v);
  }
}
