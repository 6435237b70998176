package io.kairos.sim.trace;

import java.io.IOException;
import java.io.Writer;

/**
 * Writes a {@link Trace} in the format {@link KairosCsvReader} reads, so a trace in any format can
 * be converted. Reading the output back gives the same jobs: when the trace's time limits are run
 * times ({@link Trace#estimatesFromRuntime()}), the {@code time_limit_s} column is left empty so
 * that this stays visible.
 */
public final class KairosCsvWriter {
  private KairosCsvWriter() {}

  /**
   * Writes {@code trace} to {@code out}: a comment naming the source, the header, one line per job.
   * Does not close {@code out}.
   *
   * @throws IllegalArgumentException when a user or queue name contains a comma or a line break,
   *     which the format cannot hold
   */
  public static void write(Trace trace, Writer out) throws IOException {
    out.write("# converted from " + oneLine(trace.format()) + " trace " + oneLine(trace.source()));
    out.write('\n');
    boolean dependencies = trace.jobs().stream().anyMatch(j -> j.precedingJobId() > 0);
    out.write(String.join(",", KairosCsvReader.COLUMNS));
    if (dependencies) {
      out.write("," + String.join(",", KairosCsvReader.DEPENDENCY_COLUMNS));
    }
    out.write('\n');
    for (var job : trace.jobs()) {
      var limit = trace.estimatesFromRuntime() ? "" : Long.toString(job.timeLimitSec());
      out.write(
          job.id()
              + ","
              + job.submitSec()
              + ","
              + job.gpus()
              + ","
              + job.durationSec()
              + ","
              + limit
              + ","
              + checked(job.user(), "user", job)
              + ","
              + checked(job.queue(), "queue", job)
              + ","
              + job.priority()
              + ","
              + job.gpusPerNode()
              + (dependencies ? "," + job.precedingJobId() + "," + job.thinkTimeSec() : "")
              + "\n");
    }
  }

  private static String checked(String value, String column, TraceJob job) {
    if (value.indexOf(',') >= 0 || value.indexOf('\n') >= 0 || value.indexOf('\r') >= 0) {
      throw new IllegalArgumentException(
          "job %d: %s '%s' cannot be written to CSV: it contains a comma or a line break"
              .formatted(job.id(), column, oneLine(value)));
    }
    return value.strip();
  }

  private static String oneLine(String text) {
    return text.replace('\n', ' ').replace('\r', ' ');
  }
}
