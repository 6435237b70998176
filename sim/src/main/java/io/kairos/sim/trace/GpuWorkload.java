package io.kairos.sim.trace;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * A generated GPU workload shaped like the GPU clusters' traces (Philly, Helios): mostly one-GPU
 * jobs, a tail of gangs of whole nodes up to {@code maxGpus}, heavy-tailed run times, time limits
 * that users over-ask, and arrivals with a daily cycle at a chosen offered load. The same
 * parameters give the same trace, to the byte: {@code kairos simulate --generate
 * jobs=20000,load=0.95,seed=1 --cluster 128x8}.
 *
 * <ul>
 *   <li><b>Sizes.</b> 1 GPU 70%; 2 and 4 GPUs (one node) 7% and 8%; 8 GPUs (a whole node) 8%; gangs
 *       of whole nodes of 16, 32, 64, 128 and 256 GPUs 3%, 2%, 1%, 0.6% and 0.4% (Philly: 93% one
 *       GPU, gangs up to 128; Helios has more multi-node jobs). Sizes above {@code maxGpus} or the
 *       cluster are drawn again.
 *   <li><b>Run times.</b> Log-normal, median 20 minutes, sigma 2 (mean about 2.5 hours), times 1 +
 *       log2(GPUs) / 4 (larger jobs train longer), between 10 seconds and 7 days (Philly: median 19
 *       minutes, mean 3.6 hours).
 *   <li><b>Time limits.</b> 60% ask the run time times a factor uniform in [1, 5], rounded up to 15
 *       minutes; 40% ask the smallest of the site's default limits 1 h, 4 h, 24 h, 72 h and 7 days
 *       that covers the run time (users who take the default). So estimates are as poor as users':
 *       short jobs that ask a day.
 *   <li><b>Arrivals.</b> A Poisson process whose rate follows a daily cycle (1 + 0.5 sin, peak at
 *       midday), scaled so that the offered load, GPU-seconds of run time asked per GPU-second of
 *       the cluster over the whole span, is {@code load}.
 *   <li><b>Users.</b> 100, Zipf-like (user k submits in proportion to 1 / (k + 1)).
 * </ul>
 *
 * @param jobs how many jobs
 * @param load offered load (e.g. 0.95)
 * @param maxGpus the largest gang, in GPUs
 * @param seed the generator's seed
 */
public record GpuWorkload(int jobs, double load, int maxGpus, long seed) {
  /** The {@link Trace#format()} of a generated trace. */
  public static final String FORMAT = "generated";

  private static final int[] SIZES = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  private static final double[] SIZE_SHARE = {
    0.70, 0.07, 0.08, 0.08, 0.03, 0.02, 0.01, 0.006, 0.004
  };
  private static final long[] DEFAULT_LIMITS = {3_600, 14_400, 86_400, 259_200, 604_800};
  private static final int USERS = 100;
  private static final long DAY_SEC = 86_400;

  public GpuWorkload {
    if (jobs < 1 || jobs > 10_000_000) {
      throw new IllegalArgumentException("jobs must be between 1 and 10,000,000, got " + jobs);
    }
    if (!(load > 0 && load <= 10)) {
      throw new IllegalArgumentException("load must be above 0 and at most 10, got " + load);
    }
    if (maxGpus < 1) {
      throw new IllegalArgumentException("max-gpus must be >= 1, got " + maxGpus);
    }
  }

  /**
   * Parses {@code jobs=20000,load=0.95,max-gpus=256,seed=1}; every key is optional (these are the
   * defaults).
   *
   * @throws IllegalArgumentException naming the key that is unknown or not a number
   */
  public static GpuWorkload parse(String text) {
    int jobs = 20_000;
    double load = 0.95;
    int maxGpus = 256;
    long seed = 1;
    for (String part : text.split(",")) {
      var kv = part.strip();
      if (kv.isEmpty()) {
        continue;
      }
      int eq = kv.indexOf('=');
      if (eq < 0) {
        throw new IllegalArgumentException("expected key=value, got '" + kv + "'");
      }
      String key = kv.substring(0, eq).strip().toLowerCase(Locale.ROOT);
      String value = kv.substring(eq + 1).strip();
      try {
        switch (key) {
          case "jobs" -> jobs = Integer.parseInt(value);
          case "load" -> load = Double.parseDouble(value);
          case "max-gpus" -> maxGpus = Integer.parseInt(value);
          case "seed" -> seed = Long.parseLong(value);
          default ->
              throw new IllegalArgumentException(
                  "unknown key '" + key + "': use jobs, load, max-gpus, seed");
        }
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(key + ": not a number: '" + value + "'", e);
      }
    }
    return new GpuWorkload(jobs, load, maxGpus, seed);
  }

  /** The name of the trace: its parameters. */
  public String source() {
    return String.format(
        Locale.ROOT, "generated(jobs=%d,load=%s,max-gpus=%d,seed=%d)", jobs, load, maxGpus, seed);
  }

  /**
   * The workload for a cluster of {@code totalGpus} GPUs with {@code gpusPerNode} per node: gangs
   * larger than one node ask whole nodes.
   */
  public Trace generate(long totalGpus, int gpusPerNode) {
    var rng = new SplittableRandom(seed);
    long largest = Math.min(maxGpus, totalGpus);
    int[] gpus = new int[jobs];
    long[] run = new long[jobs];
    long[] limit = new long[jobs];
    double gpuSeconds = 0;
    for (int i = 0; i < jobs; i++) {
      int g = size(rng, largest);
      double median = 1_200 * (1 + log2(g) / 4);
      double normal = gaussian(rng);
      long r = Math.round(median * Math.exp(2.0 * normal));
      r = Math.max(10, Math.min(7 * DAY_SEC, r));
      long l;
      if (rng.nextDouble() < 0.6) {
        l = Math.max(r, (long) Math.ceil(r * (1 + 4 * rng.nextDouble()) / 900.0) * 900);
      } else {
        l = r;
        for (long d : DEFAULT_LIMITS) {
          if (d >= r) {
            l = d;
            break;
          }
        }
      }
      gpus[i] = g;
      run[i] = r;
      limit[i] = l;
      gpuSeconds += (double) g * r;
    }
    // The span over which arrivals spread: offered load = GPU-seconds / (span x GPUs).
    double span = gpuSeconds / (totalGpus * load);
    double meanGap = span / jobs;
    var list = new ArrayList<TraceJob>(jobs);
    double clock = 0;
    String[] users = new String[USERS];
    double[] userWeight = new double[USERS];
    double weightSum = 0;
    for (int u = 0; u < USERS; u++) {
      users[u] = "user" + u;
      weightSum += 1.0 / (u + 1);
      userWeight[u] = weightSum;
    }
    for (int i = 0; i < jobs; i++) {
      // Thinning: candidate gaps at the peak rate (1.5 x the mean), kept with the cycle's share.
      do {
        clock += -meanGap / 1.5 * Math.log(1 - rng.nextDouble());
      } while (rng.nextDouble() * 1.5 > 1 + 0.5 * Math.sin(2 * Math.PI * (clock / DAY_SEC - 0.25)));
      double pick = rng.nextDouble() * weightSum;
      int user = 0;
      while (userWeight[user] < pick) {
        user++;
      }
      int g = gpus[i];
      // Up to one node: on one node; larger: whole nodes, or anywhere if nodes do not divide it.
      int perNode = g <= gpusPerNode ? g : g % gpusPerNode == 0 ? gpusPerNode : 0;
      list.add(
          new TraceJob(
              i + 1L, (long) clock, g, run[i], limit[i], users[user], "default", 0, perNode));
    }
    return new Trace(
        source(),
        FORMAT,
        list,
        jobs,
        0,
        false,
        List.of("generated workload: " + jobs + " jobs, offered load " + load));
  }

  private static int size(SplittableRandom rng, long largest) {
    while (true) {
      double u = rng.nextDouble();
      int k = 0;
      while (k < SIZES.length - 1 && u >= SIZE_SHARE[k]) {
        u -= SIZE_SHARE[k];
        k++;
      }
      if (SIZES[k] <= largest) {
        return SIZES[k];
      }
    }
  }

  private static double log2(int g) {
    return 31 - Integer.numberOfLeadingZeros(g);
  }

  /** A standard normal draw (Box-Muller), from the seeded generator only. */
  private static double gaussian(SplittableRandom rng) {
    double u1 = 1 - rng.nextDouble();
    double u2 = rng.nextDouble();
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }
}
