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
          new String[] {"sim_wall_s", "simulation wall (s)"},
          new String[] {"pass_p50_ms", "pass p50 (ms)"},
          new String[] {"pass_p99_ms", "pass p99 (ms)"});

  static void text(PrintWriter out, List<SimReport> reports, boolean timing) {
    var first = reports.getFirst();
    out.println("trace    " + first.trace() + (first.estimatesFromRuntime()
        ? "  (run times used as time limits)" : ""));
    out.println("cluster  " + first.cluster() + " (" + first.clusterGpus() + " GPUs)"
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
    var notes = new LinkedHashSet<String>();
    reports.forEach(r -> notes.addAll(r.notes()));
    if (!notes.isEmpty()) {
      out.println();
      notes.forEach(n -> out.println("note: " + n));
    }
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
    var notes = new LinkedHashSet<String>();
    reports.forEach(r -> notes.addAll(r.notes()));
    if (!notes.isEmpty()) {
      out.println();
      notes.forEach(n -> out.println("Note: " + n + "."));
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
