package io.kairos.sim;

import io.kairos.sim.trace.EstimateMode;
import io.kairos.sim.trace.TestTraces;
import io.kairos.sim.trace.Trace;
import io.kairos.sim.trace.TraceJob;
import io.kairos.sim.trace.TraceReaders;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Test helpers for the simulator: finds the shared trace files (through {@link TestTraces}) and
 * builds small traces in code.
 */
final class SimTestTraces {
  private SimTestTraces() {}

  static final String KTH = "swf/KTH-SP2-1996-2.1-cln.swf.gz";
  static final String SDSC = "swf/SDSC-SP2-1998-4.2-cln.swf.gz";
  static final String LUBLIN = "swf/lublin_256_new2.swf";
  static final String PHILLY = "philly/pollux_philly_jobs.csv.gz";

  static Path dir() {
    return TestTraces.dir();
  }

  static Path file(String relative) {
    return TestTraces.file(relative);
  }

  static Trace read(String relative, EstimateMode mode) {
    return TraceReaders.read(file(relative), "auto", mode);
  }

  /** The first {@code n} jobs of {@code trace} (all of them when it has fewer). */
  static Trace prefix(Trace trace, int n) {
    var jobs = trace.jobs().subList(0, Math.min(n, trace.jobs().size()));
    return new Trace(
        trace.source(),
        trace.format(),
        jobs,
        jobs.size(),
        0,
        trace.estimatesFromRuntime(),
        trace.notes());
  }

  /** A trace of {@code jobs}, sorted by (submit, id) as readers return them. */
  static Trace of(TraceJob... jobs) {
    var list = new ArrayList<>(List.of(jobs));
    list.sort(
        java.util.Comparator.comparingLong(TraceJob::submitSec).thenComparingLong(TraceJob::id));
    return new Trace("test", "kairos-csv", list, list.size(), 0, false, List.of());
  }

  /** A job with limit = duration, no user, the default queue, priority 0, packed anywhere. */
  static TraceJob job(long id, long submit, int gpus, long duration) {
    return job(id, submit, gpus, duration, duration);
  }

  static TraceJob job(long id, long submit, int gpus, long duration, long limit) {
    return new TraceJob(id, submit, gpus, duration, limit, "", "default", 0, 0);
  }

  static TraceJob perNode(long id, long submit, int gpus, int gpusPerNode, long duration) {
    return new TraceJob(id, submit, gpus, duration, duration, "", "default", 0, gpusPerNode);
  }
}
