package io.kairos.sim.report;

import io.kairos.sim.SimReport;
import io.kairos.sim.SimSeries;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntToDoubleFunction;

/**
 * The charts of a simulation report, built from runs of one trace (one run per policy), each of
 * which carries its {@link SimSeries}:
 *
 * <ol>
 *   <li>utilization over time, one line per policy;
 *   <li>the wait-time CDF, one line per policy, log-scaled wait axis;
 *   <li>each queue's share of the cluster's GPUs over time, stacked, one panel per policy;
 *   <li>under a tenancy file, one chart per policy: each queue's GPUs held against its nominal
 *       quota, small multiples ({@link QuotaChart});
 *   <li>GPU fragmentation over time: the share of free GPUs stranded on partly busy nodes.
 * </ol>
 *
 * <p>Runs of one trace share the grid's origin and first step and differ only in how often the step
 * doubled, so all runs are first brought to the coarsest step (exactly: buckets hold integrals).
 * Data tables average further, to at most {@value #TABLE_ROWS} rows.
 */
public final class ReportCharts {
  private ReportCharts() {}

  /** Most rows of a time-series data table. */
  static final int TABLE_ROWS = 100;

  private static final double[] QUANTILES = {0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99, 1.0};

  /** The time unit of the x axes: hours for runs up to three days, days beyond. */
  record TimeUnit(String name, double seconds) {
    static TimeUnit of(double spanSec) {
      return spanSec <= 3 * 86_400 ? new TimeUnit("hours", 3600) : new TimeUnit("days", 86_400);
    }
  }

  /** The figures, in report order; every run must carry its series. */
  public static List<Figure> build(List<SimReport> runs) {
    if (runs.isEmpty()) {
      throw new IllegalArgumentException("report: no runs");
    }
    var series = new ArrayList<SimSeries>();
    long step = 1;
    for (SimReport r : runs) {
      SimSeries s =
          r.series()
              .orElseThrow(
                  () ->
                      new IllegalArgumentException(
                          "report: run " + r.policy() + " has no series (recordSeries was off)"));
      series.add(s);
      step = Math.max(step, s.stepSec());
    }
    var common = new ArrayList<SimSeries>();
    for (SimSeries s : series) {
      common.add(s.coarsenTo(step));
    }
    var names = runs.stream().map(SimReport::policy).toList();
    double spanSec = 0;
    for (SimSeries s : common) {
      spanSec = Math.max(spanSec, (double) s.points() * s.stepSec());
    }
    TimeUnit unit = TimeUnit.of(spanSec);
    var figures = new ArrayList<Figure>();
    figures.add(utilization(names, common, unit));
    figures.add(waitCdf(names, common));
    figures.add(queueShare(names, common, unit));
    for (int i = 0; i < runs.size(); i++) {
      if (!common.get(i).quota().isEmpty()) {
        figures.add(quotaUsage(runs.get(i), common.get(i), timeAxis(common, unit), unit));
      }
    }
    figures.add(fragmentation(names, common, unit));
    return List.copyOf(figures);
  }

  /** Most windows of a usage-against-quota panel (small panels need fewer points). */
  static final int QUOTA_POINTS = 250;

  /**
   * One run's queues against their nominal quotas: a {@link QuotaChart} panel per queue, GPUs held
   * averaged over windows of at most {@value #QUOTA_POINTS} per run.
   */
  private static Figure quotaUsage(SimReport run, SimSeries full, Axis time, TimeUnit unit) {
    long step = full.stepSec();
    while ((full.points() * full.stepSec() + step - 1) / step > QUOTA_POINTS) {
      step *= 2;
    }
    SimSeries s = full.coarsenTo(step);
    var quota = s.quota();
    var panels = new ArrayList<QuotaChart.Panel>();
    var summaries = new ArrayList<String>();
    double covered = 0;
    for (double c : full.coveredSec()) {
      covered += c;
    }
    for (int q = 0; q < quota.queues().size(); q++) {
      int queue = q;
      panels.add(
          new QuotaChart.Panel(
              quota.queues().get(q),
              quota.nominalGpus()[q],
              values(s, k -> s.quotaGpus(queue, k))));
      summaries.add(
          quota.queues().get(q)
              + " mean "
              + Svg.fixed(sum(full.quota().gpuSec()[q]) / covered, 1)
              + " of "
              + quota.nominalGpus()[q]);
    }
    String policy = run.policy();
    boolean scheduled = run.tenancy().map(t -> t.scheduled()).orElse(false);
    String title = "GPUs held against nominal quota, per queue: " + policy;
    String definition =
        "One panel per queue of the tenancy file: the GPUs its running jobs held under "
            + policy
            + (scheduled ? " (scheduled by the tenancy)" : " (not scheduled by it, only measured)")
            + ", averaged over windows of "
            + duration(step)
            + "; blue up to the queue's nominal GPU quota, orange above it (GPUs borrowed from"
            + " the cohort, or taken from others' idle quota), the dashed line at the nominal"
            + " quota. Each panel has its own vertical scale. Queues are ordered by GPU time in the"
            + " trace; past "
            + SimSeries.MAX_QUOTA_QUEUES
            + " the rest are summed as "
            + SimSeries.OTHER_QUEUES
            + " against the sum of their quotas.";
    String desc =
        "Small multiples, one panel per queue, of GPUs held over time against the nominal quota"
            + " under "
            + policy
            + ". Mean GPUs held of nominal: "
            + String.join("; ", summaries)
            + ".";
    String svg =
        QuotaChart.svg(
            "chart-quota-" + Svg.slug(policy),
            title,
            desc,
            time,
            "GPUs held",
            midpoints(s, unit),
            panels);
    var table =
        new HtmlTable(
            policy + ": GPUs held per queue against its nominal quota",
            List.of(
                "queue",
                "nominal GPUs",
                "mean GPUs held",
                "mean held / nominal",
                "highest window mean",
                "time above nominal (window means)"),
            numericAfterFirst(6));
    for (int q = 0; q < quota.queues().size(); q++) {
      long nominal = quota.nominalGpus()[q];
      double mean = sum(full.quota().gpuSec()[q]) / covered;
      double highest = 0;
      double above = 0;
      for (int k = 0; k < full.points(); k++) {
        double held = full.quotaGpus(q, k);
        highest = Math.max(highest, held);
        above += held > nominal + 1e-9 ? full.coveredSec()[k] : 0;
      }
      table.row(
          List.of(
              quota.queues().get(q),
              Svg.grouped(nominal),
              Svg.fixed(mean, 1),
              nominal > 0 ? Svg.percent(mean / nominal) : "-",
              Svg.fixed(highest, 1),
              Svg.percent(covered > 0 ? above / covered : 0)));
    }
    return new Figure(
        "quota-" + Svg.slug(policy),
        title,
        definition,
        svg,
        table.html(),
        "Data table: " + policy + ", GPUs held per queue against its nominal quota");
  }

  private static double sum(double[] values) {
    double total = 0;
    for (double v : values) {
      total += v;
    }
    return total;
  }

  private static Figure utilization(List<String> names, List<SimSeries> runs, TimeUnit unit) {
    var lines = new ArrayList<Series>();
    var means = new ArrayList<String>();
    for (int i = 0; i < runs.size(); i++) {
      SimSeries s = runs.get(i);
      lines.add(new Series(names.get(i), midpoints(s, unit), values(s, s::utilization)));
      means.add(names.get(i) + " " + Svg.percent(mean(s.busyGpuSec(), total(s))));
    }
    String title = "GPU utilization over time";
    String definition =
        "Busy GPUs divided by all GPUs of the cluster, averaged over each sample window of "
            + duration(runs.getFirst().stepSec())
            + ", from the first submission to the last completion.";
    String desc =
        "Line chart, one line per policy ("
            + String.join(", ", names)
            + "). Mean utilization: "
            + String.join("; ", means)
            + ".";
    String svg =
        LineChart.svg(
            "chart-utilization",
            title,
            desc,
            timeAxis(runs, unit),
            percentAxis("busy GPUs (% of all GPUs)"),
            lines,
            false);
    return new Figure(
        "utilization",
        title,
        definition,
        svg,
        timeTable(
            "Utilization (% of GPUs busy) per time window",
            names, runs, unit, SimSeries::utilization),
        "Data table: utilization per time window");
  }

  private static Figure waitCdf(List<String> names, List<SimSeries> runs) {
    var lines = new ArrayList<Series>();
    var medians = new ArrayList<String>();
    long maxWait = 10;
    for (int i = 0; i < runs.size(); i++) {
      SimSeries s = runs.get(i);
      double[] x = new double[s.waitCdfSec().length];
      for (int k = 0; k < x.length; k++) {
        x[k] = Math.max(1, s.waitCdfSec()[k]);
        maxWait = Math.max(maxWait, s.waitCdfSec()[k]);
      }
      lines.add(new Series(names.get(i), x, s.waitCdfFraction()));
      medians.add(names.get(i) + " " + duration(quantile(s, 0.5)));
    }
    String title = "Wait-time distribution (CDF)";
    String definition =
        "For each wait time on the (logarithmic) horizontal axis, the share of jobs that waited at"
            + " most that long between submission and start. Waits under 1 s, including 0, are"
            + " drawn at 1 s. A curve further up and to the left is better.";
    String desc =
        "Cumulative distribution of job wait times, one line per policy ("
            + String.join(", ", names)
            + "), wait on a log scale. Median wait: "
            + String.join("; ", medians)
            + ".";
    String svg =
        LineChart.svg(
            "chart-wait-cdf",
            title,
            desc,
            Axis.log("wait (seconds, log scale)", 1, maxWait, ReportCharts::powerOfTen),
            percentAxis("jobs that waited at most this long (%)"),
            lines,
            true);
    var header = new ArrayList<String>();
    header.add("percentile");
    header.addAll(names);
    boolean[] numeric = numericAfterFirst(header.size());
    var table = new HtmlTable("Wait time (s) at each percentile", header, numeric);
    for (double q : QUANTILES) {
      var row = new ArrayList<String>();
      row.add(q == 1.0 ? "max" : "p" + Math.round(q * 100));
      for (SimSeries s : runs) {
        row.add(Svg.grouped(quantile(s, q)));
      }
      table.row(row);
    }
    return new Figure(
        "wait-cdf", title, definition, svg, table.html(), "Data table: wait-time percentiles");
  }

  private static Figure queueShare(List<String> names, List<SimSeries> runs, TimeUnit unit) {
    List<String> queues = runs.getFirst().queues();
    var panels = new ArrayList<StackedAreaChart.Panel>();
    for (int i = 0; i < runs.size(); i++) {
      SimSeries s = runs.get(i);
      var layers = new ArrayList<double[]>();
      for (int q = 0; q < s.queues().size(); q++) {
        int queue = q;
        layers.add(values(s, k -> s.queueShare(queue, k)));
      }
      panels.add(new StackedAreaChart.Panel(names.get(i), midpoints(s, unit), layers));
    }
    String title = "GPU share per queue over time";
    String definition =
        "The GPUs each queue's running jobs held, as a share of all GPUs, averaged over each"
            + " sample window and stacked; the top of the stack is the utilization. One panel per"
            + " policy. Queues are the trace's queues (SWF queue field, Philly virtual cluster);"
            + " the "
            + SimSeries.MAX_QUEUES
            + " largest by GPU time are named, the rest are"
            + " summed as "
            + SimSeries.OTHER_QUEUES
            + ".";
    String desc =
        "Stacked area chart of GPU share per queue, one panel per policy ("
            + String.join(", ", names)
            + "), queues: "
            + String.join(", ", queues)
            + ".";
    String svg =
        StackedAreaChart.svg(
            "chart-queue-share",
            title,
            desc,
            timeAxis(runs, unit),
            percentAxis("GPUs held (% of all)"),
            queues,
            panels);
    var tables = new StringBuilder();
    for (int i = 0; i < runs.size(); i++) {
      SimSeries s = runs.get(i);
      var header =
          new ArrayList<String>(List.of("from (" + unit.name() + ")", "to (" + unit.name() + ")"));
      header.addAll(s.queues());
      var table =
          new HtmlTable(
              names.get(i) + ": GPU share per queue (% of all GPUs) per time window",
              header,
              numericAfterFirst(header.size()));
      SimSeries t = forTable(s);
      for (int k = 0; k < t.points(); k++) {
        var row = new ArrayList<String>(windowCells(t, k, unit));
        for (int q = 0; q < t.queues().size(); q++) {
          row.add(Svg.fixed(t.queueShare(q, k) * 100, 1));
        }
        table.row(row);
      }
      tables.append(table.html());
    }
    return new Figure(
        "queue-share",
        title,
        definition,
        svg,
        tables.toString(),
        "Data tables: GPU share per queue and time window, one per policy");
  }

  private static Figure fragmentation(List<String> names, List<SimSeries> runs, TimeUnit unit) {
    var lines = new ArrayList<Series>();
    var means = new ArrayList<String>();
    for (int i = 0; i < runs.size(); i++) {
      SimSeries s = runs.get(i);
      lines.add(new Series(names.get(i), midpoints(s, unit), values(s, s::fragmentation)));
      double free = 0;
      for (int k = 0; k < s.points(); k++) {
        free += s.clusterGpus() * s.coveredSec()[k] - s.busyGpuSec()[k];
      }
      means.add(names.get(i) + " " + Svg.percent(mean(s.strandedGpuSec(), free)));
    }
    String title = "GPU fragmentation over time";
    String definition =
        "Stranded free GPUs: of the GPUs that were free, the share that sat on partly busy nodes"
            + " (nodes with some, but not all, of their GPUs free). Those GPUs cannot host a job"
            + " that needs whole nodes, such as an 8-GPU job on 8-GPU nodes. Measured as stranded"
            + " free GPU-time over all free GPU-time in each sample window; 0 when no GPU was"
            + " free. Always 0 on clusters of 1-GPU nodes. Lower is better.";
    String desc =
        "Line chart of the share of free GPUs stranded on partly busy nodes, one line per policy ("
            + String.join(", ", names)
            + "). Over the whole run: "
            + String.join("; ", means)
            + ".";
    String svg =
        LineChart.svg(
            "chart-fragmentation",
            title,
            desc,
            timeAxis(runs, unit),
            percentAxis("stranded free GPUs (% of free)"),
            lines,
            false);
    return new Figure(
        "fragmentation",
        title,
        definition,
        svg,
        timeTable(
            "Stranded free GPUs (% of free GPUs) per time window",
            names, runs, unit, SimSeries::fragmentation),
        "Data table: fragmentation per time window");
  }

  /** A value of a series at bucket k. */
  private interface BucketValue {
    double at(SimSeries s, int k);
  }

  /** One row per (averaged) time window, one column per policy, values in percent. */
  private static String timeTable(
      String caption, List<String> names, List<SimSeries> runs, TimeUnit unit, BucketValue value) {
    var header =
        new ArrayList<String>(List.of("from (" + unit.name() + ")", "to (" + unit.name() + ")"));
    header.addAll(names);
    var table = new HtmlTable(caption, header, numericAfterFirst(header.size()));
    var tableRuns = runs.stream().map(ReportCharts::forTable).toList();
    int rows = tableRuns.stream().mapToInt(SimSeries::points).max().orElse(0);
    SimSeries longest =
        tableRuns.stream().filter(s -> s.points() == rows).findFirst().orElseThrow();
    for (int k = 0; k < rows; k++) {
      var row = new ArrayList<String>(windowCells(longest, k, unit));
      for (SimSeries s : tableRuns) {
        row.add(k < s.points() ? Svg.fixed(value.at(s, k) * 100, 1) : "(ended)");
      }
      table.row(row);
    }
    return table.html();
  }

  /** The series averaged to at most {@value #TABLE_ROWS} windows (a power-of-two merge). */
  private static SimSeries forTable(SimSeries s) {
    long step = s.stepSec();
    while ((s.points() * s.stepSec() + step - 1) / step > TABLE_ROWS) {
      step *= 2;
    }
    return s.coarsenTo(step);
  }

  private static List<String> windowCells(SimSeries s, int k, TimeUnit unit) {
    double from = s.bucketStartSec(k) / unit.seconds();
    double to = (s.bucketStartSec(k) + s.coveredSec()[k]) / unit.seconds();
    return List.of(Svg.fixed(from, 2), Svg.fixed(to, 2));
  }

  private static double[] midpoints(SimSeries s, TimeUnit unit) {
    double[] x = new double[s.points()];
    for (int k = 0; k < x.length; k++) {
      x[k] = (s.bucketStartSec(k) + s.coveredSec()[k] / 2) / unit.seconds();
    }
    return x;
  }

  private static double[] values(SimSeries s, IntToDoubleFunction value) {
    double[] y = new double[s.points()];
    for (int k = 0; k < y.length; k++) {
      y[k] = value.applyAsDouble(k);
    }
    return y;
  }

  private static Axis timeAxis(List<SimSeries> runs, TimeUnit unit) {
    double max = 0;
    for (SimSeries s : runs) {
      double covered = 0;
      for (double c : s.coveredSec()) {
        covered += c;
      }
      max = Math.max(max, covered / unit.seconds());
    }
    return Axis.linear(
        "time since the first submission (" + unit.name() + ")", 0, max, ReportCharts::number);
  }

  private static Axis percentAxis(String label) {
    return Axis.linear(label, 0, 1, v -> Math.round(v * 100) + "%");
  }

  private static double total(SimSeries s) {
    double sum = 0;
    for (double c : s.coveredSec()) {
      sum += c * s.clusterGpus();
    }
    return sum;
  }

  private static double mean(double[] part, double whole) {
    double sum = 0;
    for (double v : part) {
      sum += v;
    }
    return whole <= 0 ? 0 : sum / whole;
  }

  /** The nearest-rank quantile from the CDF points: the smallest wait with F(wait) >= q. */
  static long quantile(SimSeries s, double q) {
    double[] f = s.waitCdfFraction();
    for (int k = 0; k < f.length; k++) {
      if (f[k] >= q - 1e-12) {
        return s.waitCdfSec()[k];
      }
    }
    return f.length == 0 ? 0 : s.waitCdfSec()[f.length - 1];
  }

  /** A tick of a power-of-ten axis: 1, 10, 100, 1k, 10k, 100k, 1M, ... */
  static String powerOfTen(double v) {
    long n = Math.round(v);
    if (n >= 1_000_000_000L && n % 1_000_000_000L == 0) {
      return n / 1_000_000_000L + "G";
    }
    if (n >= 1_000_000 && n % 1_000_000 == 0) {
      return n / 1_000_000 + "M";
    }
    if (n >= 1000 && n % 1000 == 0) {
      return n / 1000 + "k";
    }
    return Long.toString(n);
  }

  /** An axis number: whole numbers plain, others with up to two decimals. */
  static String number(double v) {
    if (Math.abs(v - Math.rint(v)) < 1e-9) {
      return Svg.grouped(Math.round(v));
    }
    String s = Svg.fixed(v, 2);
    return s.replaceAll("0+$", "").replaceAll("\\.$", "");
  }

  /** A duration in seconds, for people: 45 s, 12.5 min, 3.2 h, 4.1 d. */
  public static String duration(long seconds) {
    if (seconds < 120) {
      return seconds + " s";
    }
    if (seconds < 7200) {
      return Svg.fixed(seconds / 60.0, 1) + " min";
    }
    if (seconds < 172_800) {
      return Svg.fixed(seconds / 3600.0, 1) + " h";
    }
    return Svg.fixed(seconds / 86_400.0, 1) + " d";
  }

  private static boolean[] numericAfterFirst(int columns) {
    boolean[] numeric = new boolean[columns];
    for (int c = 1; c < columns; c++) {
      numeric[c] = true;
    }
    return numeric;
  }
}
