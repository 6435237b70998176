package io.kairos.cli;

import io.kairos.sim.SimReport;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/** Renders simulation reports side by side: one column per policy. */
final class ReportTable {
  private ReportTable() {}

  private static final List<String[]> ROWS =
      List.of(
          new String[] {"jobs", "jobs"},
          new String[] {"skipped", "skipped (larger than cluster)"},
          new String[] {"makespan_s", "makespan (s)"},
          new String[] {"mean_wait_s", "mean wait (s)"},
          new String[] {"p50_wait_s", "p50 wait (s)"},
          new String[] {"p95_wait_s", "p95 wait (s)"},
          new String[] {"p99_wait_s", "p99 wait (s)"},
          new String[] {"max_wait_s", "max wait (s)"},
          new String[] {"mean_jct_s", "mean JCT (s)"},
          new String[] {"p95_jct_s", "p95 JCT (s)"},
          new String[] {"mean_bounded_slowdown", "mean bounded slowdown"},
          new String[] {"utilization", "utilization"},
          new String[] {"fragmentation", "fragmentation (free GPUs)"},
          new String[] {"passes", "passes"},
          new String[] {"gpu_hours_lost_to_spread", "GPU-hours lost to spread"},
          new String[] {"jobs_stopped_at_limit", "jobs stopped at limit"},
          new String[] {"migrations", "migrations"},
          new String[] {"predictions_scored", "start predictions scored"},
          new String[] {"prediction_p50_error_s", "prediction error p50 (s)"},
          new String[] {"prediction_p90_error_s", "prediction error p90 (s)"},
          new String[] {"prediction_within_10_min", "predictions within 10 min"},
          new String[] {"prediction_within_1_h", "predictions within 1 h"},
          new String[] {"naive_p50_error_s", "naive error p50 (s)"},
          new String[] {"naive_p90_error_s", "naive error p90 (s)"},
          new String[] {"naive_within_10_min", "naive within 10 min"},
          new String[] {"naive_within_1_h", "naive within 1 h"},
          new String[] {"elastic_jobs", "elastic jobs"},
          new String[] {"resizes", "resizes"},
          new String[] {"grows", "of which grows"},
          new String[] {"resizes_refused", "resizes refused"},
          new String[] {"gpu_hours_lost_to_preemption", "GPU-h lost to preemption"},
          new String[] {"gpu_hours_lost_to_resizes", "GPU-h lost to resizes"},
          new String[] {"sim_wall_s", "simulation wall (s)"},
          new String[] {"pass_p50_ms", "pass p50 (ms)"},
          new String[] {"pass_p99_ms", "pass p99 (ms)"});

  static void text(PrintWriter out, List<SimReport> reports, boolean timing) {
    var first = reports.getFirst();
    out.println(
        "trace    "
            + first.trace()
            + (first.estimatesFromRuntime() ? "  (run times used as time limits)" : ""));
    out.println(
        "cluster  "
            + first.cluster()
            + " ("
            + first.clusterGpus()
            + " GPUs)"
            + (first.commModel() ? "  comm model on" : ""));
    var maps = reports.stream().map(r -> r.toMap(timing)).toList();
    int labelWidth = ROWS.stream().mapToInt(r -> r[1].length()).max().orElse(10);
    var header = new StringBuilder(pad("", labelWidth));
    for (SimReport r : reports) {
      header.append("  ").append(padLeft(r.policy(), 14));
    }
    out.println();
    out.println(header);
    for (String[] row : ROWS) {
      if (!maps.getFirst().containsKey(row[0]) || hidden(row[0], first)) {
        continue;
      }
      var line = new StringBuilder(pad(row[1], labelWidth));
      for (Map<String, Object> m : maps) {
        line.append("  ").append(padLeft(String.valueOf(m.get(row[0])), 14));
      }
      out.println(line);
    }
    if (first.tenancy().isPresent()) {
      for (String[] row : tenancyRows(reports)) {
        var line = new StringBuilder(pad(row[0], labelWidth));
        for (int c = 1; c < row.length; c++) {
          line.append("  ").append(padLeft(row[c], 14));
        }
        out.println(line);
      }
      for (SimReport r : reports) {
        out.println();
        out.println(
            "queues under "
                + r.policy()
                + (r.tenancy().orElseThrow().scheduled()
                    ? " (scheduled by the tenancy)"
                    : " (measured only)"));
        printAligned(out, queueRows(r));
        if (!r.tenancy().orElseThrow().accountsAreQueues()) {
          out.println();
          out.println("accounts under " + r.policy());
          printAligned(out, accountRows(r));
        }
      }
    }
    var notes = new LinkedHashSet<String>();
    reports.forEach(r -> notes.addAll(r.notes()));
    if (!notes.isEmpty()) {
      out.println();
      notes.forEach(n -> out.println("note: " + n));
    }
  }

  /** Rows with each column as wide as its widest cell; the first left-aligned, the others right. */
  private static void printAligned(PrintWriter out, List<String[]> rows) {
    int[] widths = new int[rows.getFirst().length];
    for (String[] row : rows) {
      for (int c = 0; c < row.length; c++) {
        widths[c] = Math.max(widths[c], row[c].length());
      }
    }
    for (String[] row : rows) {
      var line = new StringBuilder(pad(row[0], widths[0]));
      for (int c = 1; c < row.length; c++) {
        line.append("  ").append(padLeft(row[c], widths[c]));
      }
      out.println(line);
    }
  }

  /**
   * One report's per-account table, header first. Printed only when the accounts differ from the
   * queues ({@link io.kairos.sim.TenancyReport#accountsAreQueues()}); JSON always has them.
   */
  static List<String[]> accountRows(SimReport report) {
    var rows = new ArrayList<String[]>();
    rows.add(
        new String[] {
          "account",
          "queues",
          "jobs",
          "GPU-h",
          "mean wait s",
          "p99 wait s",
          "mean JCT s",
          "preempted",
          "lost GPU-h",
          "fair share"
        });
    for (var a : report.tenancy().orElseThrow().accounts()) {
      rows.add(
          new String[] {
            a.name(),
            String.join(" ", a.queues()),
            Integer.toString(a.jobs()),
            num(a.gpuHours()),
            num(a.meanWaitSec()),
            Long.toString(a.p99WaitSec()),
            num(a.meanJctSec()),
            Integer.toString(a.preemptions()),
            num(a.lostGpuHours()),
            num(a.fairShareFactor())
          });
    }
    return rows;
  }

  /** Overall tenancy rows: a label, then one cell per report. */
  private static List<String[]> tenancyRows(List<SimReport> reports) {
    var rows = new ArrayList<String[]>();
    var t = reports.stream().map(r -> r.tenancy().orElseThrow()).toList();
    rows.add(row("Jain index (served fraction)", t, x -> num(x.jainIndex())));
    rows.add(
        row(
            "worst finish-time fairness",
            t,
            x -> x.worstQueue().isEmpty() ? "-" : num(x.worstFinishTimeFairness())));
    rows.add(row("worst FTF queue", t, x -> x.worstQueue().isEmpty() ? "-" : x.worstQueue()));
    rows.add(
        row(
            "max wait >= " + t.getFirst().bigGangGpus() + " GPUs (s)",
            t,
            x -> Long.toString(x.bigGangMaxWaitSec())));
    rows.add(row("preemptions", t, x -> Integer.toString(x.preemptions())));
    rows.add(row("requeued", t, x -> Integer.toString(x.requeued())));
    rows.add(row("GPU-hours lost to preemption", t, x -> num(x.preemptionGpuHoursLost())));
    return rows;
  }

  private static String[] row(
      String label,
      List<io.kairos.sim.TenancyReport> reports,
      java.util.function.Function<io.kairos.sim.TenancyReport, String> cell) {
    var row = new String[reports.size() + 1];
    row[0] = label;
    for (int i = 0; i < reports.size(); i++) {
      row[i + 1] = cell.apply(reports.get(i));
    }
    return row;
  }

  /** One report's per-queue table, header first. */
  static List<String[]> queueRows(SimReport report) {
    var rows = new ArrayList<String[]>();
    rows.add(
        new String[] {
          "queue",
          "nominal",
          "share",
          "jobs",
          "GPU-h",
          "mean wait s",
          "p99 wait s",
          "mean JCT s",
          "preempted",
          "lost GPU-h",
          "served",
          "FTF"
        });
    for (var q : report.tenancy().orElseThrow().queues()) {
      rows.add(
          new String[] {
            q.name(),
            Long.toString(q.nominalGpus()),
            num(q.entitlement()),
            Integer.toString(q.jobs()),
            num(q.gpuHours()),
            num(q.meanWaitSec()),
            Long.toString(q.p99WaitSec()),
            num(q.meanJctSec()),
            Integer.toString(q.preemptions()),
            num(q.lostGpuHours()),
            num(q.servedFraction()),
            num(q.finishTimeFairness())
          });
    }
    return rows;
  }

  private static String num(double v) {
    return Double.isNaN(v) ? "-" : SimulateCommand.fmt(v);
  }

  static void markdown(PrintWriter out, List<SimReport> reports, boolean timing) {
    var maps = reports.stream().map(r -> r.toMap(timing)).toList();
    var head = new ArrayList<String>();
    head.add("metric");
    reports.forEach(r -> head.add(r.policy()));
    out.println("| " + String.join(" | ", head) + " |");
    out.println("|" + " --- |".repeat(head.size()));
    for (String[] row : ROWS) {
      if (!maps.getFirst().containsKey(row[0]) || hidden(row[0], reports.getFirst())) {
        continue;
      }
      var cells = new ArrayList<String>();
      cells.add(row[1]);
      maps.forEach(m -> cells.add(String.valueOf(m.get(row[0]))));
      out.println("| " + String.join(" | ", cells) + " |");
    }
    if (reports.getFirst().tenancy().isPresent()) {
      for (String[] row : tenancyRows(reports)) {
        out.println("| " + String.join(" | ", row) + " |");
      }
      for (SimReport r : reports) {
        out.println();
        out.println(
            "Queues under "
                + r.policy()
                + (r.tenancy().orElseThrow().scheduled()
                    ? " (scheduled by the tenancy):"
                    : " (measured only):"));
        out.println();
        printMarkdown(out, queueRows(r));
        if (!r.tenancy().orElseThrow().accountsAreQueues()) {
          out.println();
          out.println("Accounts under " + r.policy() + ":");
          out.println();
          printMarkdown(out, accountRows(r));
        }
      }
    }
    var notes = new LinkedHashSet<String>();
    reports.forEach(r -> notes.addAll(r.notes()));
    if (!notes.isEmpty()) {
      out.println();
      notes.forEach(n -> out.println("Note: " + n + "."));
    }
  }

  private static void printMarkdown(PrintWriter out, List<String[]> rows) {
    for (int k = 0; k < rows.size(); k++) {
      out.println("| " + String.join(" | ", rows.get(k)) + " |");
      if (k == 0) {
        out.println("|" + " --- |".repeat(rows.get(k).length));
      }
    }
  }

  /** Comm model rows mean nothing without the comm model. */
  private static boolean hidden(String key, SimReport first) {
    return !first.commModel()
        && (key.equals("gpu_hours_lost_to_spread") || key.equals("jobs_stopped_at_limit"));
  }

  private static String pad(String s, int width) {
    return s.length() >= width ? s : s + " ".repeat(width - s.length());
  }

  private static String padLeft(String s, int width) {
    return s.length() >= width ? s : " ".repeat(width - s.length()) + s;
  }
}
