package io.kairos.sim.report;

import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.sim.SimOptions;
import io.kairos.sim.SimReport;
import io.kairos.sim.Simulator;
import io.kairos.sim.trace.Trace;
import io.kairos.sim.trace.TraceJob;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** Small traces built in code, and simulator runs of them with series recorded. */
final class Runs {
  private Runs() {}

  static TraceJob job(long id, long submit, int gpus, long duration, String queue) {
    return new TraceJob(id, submit, gpus, duration, duration, "", queue, 0, 0);
  }

  static Trace trace(String source, List<TraceJob> jobs) {
    var list = new ArrayList<>(jobs);
    list.sort(Comparator.comparingLong(TraceJob::submitSec).thenComparingLong(TraceJob::id));
    return new Trace(source, "kairos-csv", list, list.size(), 0, false, List.of());
  }

  static SimReport run(Cluster cluster, Policy policy, Trace trace) {
    return new Simulator(
            cluster,
            cluster.nodeCount() + "x" + cluster.maxGpusPerNode(),
            policy,
            SimOptions.defaults().withSeries(true))
        .run(trace);
  }

  /** A mixed workload on 4 nodes of 4 GPUs: three queues, waits, partly busy nodes. */
  static Trace mixed(String source) {
    var jobs = new ArrayList<TraceJob>();
    for (int i = 0; i < 60; i++) {
      jobs.add(job(i + 1, i * 90L, 1 + i % 4 * (i % 3), 600 + (i * 37L) % 2400, "q" + i % 3));
    }
    return trace(source, jobs);
  }
}
