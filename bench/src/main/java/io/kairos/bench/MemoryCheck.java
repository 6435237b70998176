package io.kairos.bench;

import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.sim.SimOptions;
import io.kairos.sim.SimReport;
import io.kairos.sim.Simulator;
import io.kairos.sim.trace.Trace;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.ArrayList;
import java.util.List;

/**
 * Shows that a million-job trace simulates in a 2 GiB heap.
 *
 * <pre>
 *   java -Xmx2g -cp bench/target/benchmarks.jar io.kairos.bench.MemoryCheck [jobs] [load] [policies]
 * </pre>
 *
 * <p>Defaults: 1,000,000 jobs, offered load 0.9 (a small queue forms; at 0.8 almost nothing waits
 * on this cluster), policies "easy,kairos", on {@code Cluster.uniform(1024, 8, 32, 8)} (8,192
 * GPUs). Prints, per policy, the jobs simulated, wall seconds, mean wait, passes, utilisation, and
 * the peak heap use so far.
 */
public final class MemoryCheck {
  private MemoryCheck() {}

  public static void main(String[] args) {
    int jobs = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    double load = args.length > 1 ? Double.parseDouble(args[1]) : 0.9;
    List<Policy> policies = new ArrayList<>();
    for (String name : (args.length > 2 ? args[2] : "easy,kairos").split(",")) {
      policies.add(
          Policy.byName(name).orElseThrow(() -> new IllegalArgumentException("no policy " + name)));
    }
    var cluster = Cluster.uniform(1024, 8, 32, 8);
    long t0 = System.nanoTime();
    Trace trace = SyntheticTrace.generate(cluster, jobs, load, 11L);
    System.out.printf(
        "trace: %d jobs, load %.2f, span %.1f days, generated in %.1f s; max heap %d MiB%n",
        trace.jobs().size(),
        load,
        trace.jobs().getLast().submitSec() / 86_400.0,
        (System.nanoTime() - t0) / 1e9,
        Runtime.getRuntime().maxMemory() >> 20);
    for (Policy policy : policies) {
      long start = System.nanoTime();
      SimReport report =
          new Simulator(
                  cluster,
                  "uniform-1024x8",
                  policy,
                  SimOptions.defaults(),
                  null,
                  (done, total) -> {})
              .run(trace);
      double wall = (System.nanoTime() - start) / 1e9;
      System.out.printf(
          "%-8s jobs=%d wall_s=%.1f mean_wait_s=%.1f p99_wait_s=%d passes=%d utilization=%.3f"
              + " peak_heap_mib=%d%n",
          policy.name(),
          report.jobs(),
          wall,
          report.meanWaitSec(),
          report.p99WaitSec(),
          report.passes(),
          report.utilization(),
          peakHeapMib());
    }
  }

  private static long peakHeapMib() {
    long peak = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP && pool.getPeakUsage() != null) {
        peak += pool.getPeakUsage().getUsed();
      }
    }
    return peak >> 20;
  }
}
