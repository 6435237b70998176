package io.kairos.sim.report;

import io.kairos.sim.SimReport;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.SequencedMap;

/**
 * The simulation report as one self-contained HTML page: the run's parameters, a summary table (one
 * row per policy), the {@link ReportCharts} as inline SVG, each with its definition and a data
 * table in a {@code <details>} element, and the simulator's notes.
 *
 * <p>Self-contained: inline CSS, inline SVG, no script, no fonts or images from elsewhere; a
 * Content-Security-Policy of {@code default-src 'none'} makes the browser refuse any load.
 * Deterministic: no wall-clock figures and no date, so the same runs give the same bytes.
 */
public final class HtmlReport {
  private HtmlReport() {}

  private static final String CSS =
      """
      :root { color-scheme: light; }
      body { margin: 0; background: #f6f6f4; color: #1a1a1a;
        font: 15px/1.5 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; }
      main { max-width: 820px; margin: 0 auto; padding: 24px 20px 48px; background: #ffffff; }
      h1 { font-size: 1.6em; margin: 0 0 4px; }
      h2 { font-size: 1.25em; margin: 36px 0 6px; padding-top: 18px;
        border-top: 1px solid #dcdcdc; }
      .lede { margin: 0 0 12px; color: #333333; }
      dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0; }
      dt { font-weight: 600; }
      dd { margin: 0; overflow-wrap: anywhere; }
      table { border-collapse: collapse; margin: 8px 0 16px; font-variant-numeric: tabular-nums; }
      caption { text-align: left; font-weight: 600; padding: 4px 0; }
      th, td { border-bottom: 1px solid #dcdcdc; padding: 3px 10px; text-align: left; }
      thead th { border-bottom: 2px solid #4d4d4d; }
      .num { text-align: right; }
      .definition { margin: 0 0 8px; color: #333333; }
      svg.chart { display: block; max-width: 100%; height: auto; }
      details { margin: 6px 0 0; }
      summary { cursor: pointer; color: #0b4f8a; }
      summary:focus-visible { outline: 2px solid #0b4f8a; outline-offset: 2px; }
      details table { font-size: 13px; }
      .notes li { margin: 2px 0; }
      footer { margin-top: 36px; font-size: 13px; color: #4d4d4d; }
      """;

  private static final String CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

  /**
   * The page.
   *
   * @param runs one run per policy, of the same trace and cluster, each with its series
   * @param parameters how the runs were made, as label and value, in display order
   * @param figures the charts, usually {@link ReportCharts#build(List)} of {@code runs}
   */
  public static String page(
      List<SimReport> runs, SequencedMap<String, String> parameters, List<Figure> figures) {
    SimReport first = runs.getFirst();
    var policies = runs.stream().map(SimReport::policy).toList();
    var out = new StringBuilder(64 * 1024);
    out.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        .append("<meta http-equiv=\"Content-Security-Policy\" content=\"")
        .append(CSP)
        .append("\">\n<meta name=\"generator\" content=\"kairos simulate\">\n<title>")
        .append(Svg.escape("Kairos simulation report: " + first.trace()))
        .append("</title>\n")
        .append("<style>\n")
        .append(CSS)
        .append("</style>\n</head>\n<body>\n<main>\n");
    out.append("<h1>Kairos simulation report</h1>\n<p class=\"lede\">")
        .append(
            Svg.escape(
                first.trace()
                    + " on "
                    + first.cluster()
                    + " ("
                    + Svg.grouped(first.clusterGpus())
                    + " GPUs): "
                    + String.join(", ", policies)
                    + "."))
        .append("</p>\n");

    out.append(
        "<section aria-labelledby=\"parameters-h\">\n"
            + "<h2 id=\"parameters-h\">Run parameters</h2>\n"
            + "<dl>\n");
    for (var e : parameters.entrySet()) {
      out.append("<dt>")
          .append(Svg.escape(e.getKey()))
          .append("</dt><dd>")
          .append(Svg.escape(e.getValue()))
          .append("</dd>\n");
    }
    out.append("</dl>\n</section>\n");

    out.append("<section aria-labelledby=\"summary-h\">\n<h2 id=\"summary-h\">Summary</h2>\n")
        .append(summary(runs).html())
        .append("</section>\n");

    for (Figure f : figures) {
      out.append("<section class=\"figure\" id=\"")
          .append(f.id())
          .append("\" aria-labelledby=\"")
          .append(f.id())
          .append("-h\">\n<h2 id=\"")
          .append(f.id())
          .append("-h\">")
          .append(Svg.escape(f.title()))
          .append("</h2>\n")
          .append("<p class=\"definition\">")
          .append(Svg.escape(f.definition()))
          .append("</p>\n")
          .append(f.svg())
          .append("<details>\n<summary>")
          .append(Svg.escape(f.tableSummary()))
          .append("</summary>\n")
          .append(f.table())
          .append("</details>\n</section>\n");
    }

    var notes = new LinkedHashSet<String>();
    runs.forEach(r -> notes.addAll(r.notes()));
    if (!notes.isEmpty()) {
      out.append(
          "<section aria-labelledby=\"notes-h\">\n"
              + "<h2 id=\"notes-h\">Notes</h2>\n"
              + "<ul class=\"notes\">\n");
      for (String n : notes) {
        out.append("<li>").append(Svg.escape(n)).append("</li>\n");
      }
      out.append("</ul>\n</section>\n");
    }
    out.append(
        "<footer>Written by <code>kairos simulate --report</code>. Simulated time only:"
            + " wall-clock figures are left out, so the same trace and flags give the same file."
            + " Charts are sampled on a grid of at most 2,000 windows per series.</footer>\n");
    out.append("</main>\n</body>\n</html>\n");
    return out.toString();
  }

  /** One row per policy: the simulator's headline metrics. */
  static HtmlTable summary(List<SimReport> runs) {
    var header =
        List.of(
            "policy",
            "jobs",
            "mean wait",
            "p50 wait",
            "p99 wait",
            "mean bounded slowdown",
            "makespan",
            "utilization");
    boolean[] numeric = new boolean[header.size()];
    for (int c = 1; c < numeric.length; c++) {
      numeric[c] = true;
    }
    var table =
        new HtmlTable("Results per policy (waits and makespan in seconds)", header, numeric);
    for (SimReport r : runs) {
      var row = new ArrayList<String>();
      row.add(r.policy());
      row.add(Svg.grouped(r.jobs()));
      row.add(Svg.grouped(Math.round(r.meanWaitSec())));
      row.add(Svg.grouped(r.p50WaitSec()));
      row.add(Svg.grouped(r.p99WaitSec()));
      row.add(Svg.fixed(r.meanBoundedSlowdown(), 2));
      row.add(Svg.grouped(r.makespanSec()));
      row.add(Svg.percent(r.utilization()));
      table.row(row);
    }
    return table;
  }
}
