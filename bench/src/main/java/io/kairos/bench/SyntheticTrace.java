package io.kairos.bench;

import io.kairos.core.model.Cluster;
import io.kairos.sim.trace.Trace;
import io.kairos.sim.trace.TraceJob;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A seeded synthetic GPU trace for the simulator benchmarks.
 *
 * <ul>
 *   <li>Sizes: 1 GPU 45%, 2 GPUs 12%, 4 GPUs 12% (these three one-node jobs; 30% of the 2 and 4 GPU
 *       jobs "flexible", {@code gpusPerNode} 0), one whole node 18%, gangs of 2, 4 and 8 whole
 *       nodes 6%, 4% and 3% ({@code gpusPerNode} = the cluster's GPUs per node).
 *   <li>Run times: log-uniform between 1 minute and 24 hours. Time limits (the estimates the
 *       scheduler sees): the run time times a factor uniform in [1, 4], rounded up to 15 minutes.
 *   <li>Arrivals: a Poisson process whose rate makes the offered load (GPU-seconds asked per
 *       GPU-second of the cluster) equal to {@code load}.
 * </ul>
 *
 * <p>Memory: {@link TraceJob} records only; user and queue strings are shared.
 */
public final class SyntheticTrace {
  private static final String[] USERS = new String[64];
  private static final String QUEUE = "default";

  static {
    for (int i = 0; i < USERS.length; i++) {
      USERS[i] = "user" + i;
    }
  }

  private SyntheticTrace() {}

  public static Trace generate(Cluster cluster, int jobs, double load, long seed) {
    if (load <= 0) {
      throw new IllegalArgumentException("load must be > 0, got " + load);
    }
    var rng = new SplittableRandom(seed);
    int gpn = cluster.maxGpusPerNode();
    int[] gpus = new int[jobs];
    int[] perNode = new int[jobs];
    long[] duration = new long[jobs];
    long[] limit = new long[jobs];
    double gpuSeconds = 0;
    double minLog = Math.log(60);
    double maxLog = Math.log(86_400);
    for (int i = 0; i < jobs; i++) {
      double u = rng.nextDouble();
      int g;
      int pn;
      if (u < 0.45) {
        g = 1;
        pn = 1;
      } else if (u < 0.57) {
        g = Math.min(2, gpn);
        pn = rng.nextDouble() < 0.3 ? 0 : g;
      } else if (u < 0.69) {
        g = Math.min(4, gpn);
        pn = rng.nextDouble() < 0.3 ? 0 : g;
      } else if (u < 0.87) {
        g = gpn;
        pn = gpn;
      } else if (u < 0.93) {
        g = 2 * gpn;
        pn = gpn;
      } else if (u < 0.97) {
        g = 4 * gpn;
        pn = gpn;
      } else {
        g = 8 * gpn;
        pn = gpn;
      }
      long d = Math.max(1, Math.round(Math.exp(minLog + rng.nextDouble() * (maxLog - minLog))));
      double factor = 1 + 3 * rng.nextDouble();
      long l = Math.max(d, ((long) Math.ceil(d * factor / 900.0)) * 900);
      gpus[i] = g;
      perNode[i] = pn;
      duration[i] = d;
      limit[i] = l;
      gpuSeconds += (double) g * d;
    }
    double meanGap = gpuSeconds / (jobs * (double) cluster.totalGpus() * load);
    var list = new ArrayList<TraceJob>(jobs);
    double clock = 0;
    for (int i = 0; i < jobs; i++) {
      clock += -meanGap * Math.log(1 - rng.nextDouble());
      list.add(
          new TraceJob(
              i + 1L,
              (long) clock,
              gpus[i],
              duration[i],
              limit[i],
              USERS[rng.nextInt(USERS.length)],
              QUEUE,
              0,
              perNode[i]));
    }
    return new Trace(
        "synthetic(jobs=" + jobs + ",load=" + load + ",seed=" + seed + ")",
        "synthetic",
        list,
        jobs,
        0,
        false,
        List.of());
  }
}
