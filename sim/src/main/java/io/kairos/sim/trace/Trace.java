package io.kairos.sim.trace;

import java.util.List;

/**
 * A trace read from a file: jobs sorted by submission time (then id), and what the reader noticed
 * while reading.
 *
 * @param source the file it came from, as the user named it
 * @param format "swf", "philly", "kairos-csv" or "sacct"
 * @param jobs the jobs that count, sorted by (submitSec, id)
 * @param rowsRead data rows seen (comments and headers excluded)
 * @param rowsDropped rows that do not count (for SWF: run time or processors not positive; for
 *     sacct: job steps, jobs that never started or were still running, CPU-only jobs)
 * @param estimatesFromRuntime true when the trace carries no estimates (or {@code --estimate
 *     actual} was asked) and run times were used as time limits
 * @param notes human-readable remarks for the report, in the order they were made
 */
public record Trace(
    String source,
    String format,
    List<TraceJob> jobs,
    int rowsRead,
    int rowsDropped,
    boolean estimatesFromRuntime,
    List<String> notes) {
  public Trace {
    jobs = List.copyOf(jobs);
    notes = List.copyOf(notes);
  }
}
