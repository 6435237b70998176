package io.kairos.sim;

import io.kairos.core.Checks;
import io.kairos.core.model.TopologyLevel;

/**
 * How much slower a job runs when its gang is spread over a wider topology level.
 *
 * <p>Model: a data-parallel job spends {@code commFraction} of its time, when packed inside one
 * NVLink domain, in ring all-reduce. A ring's time is set by its slowest link, so spreading the
 * gang over level L stretches the communication part by {@code nvlinkGBps / bandwidth(L)}:
 *
 * <pre>
 *   runtime(L) = runtime * ((1 - f) + f * nvlinkGBps / bandwidth(L))
 * </pre>
 *
 * <p>The trace's run time is taken as the packed run time. Default bandwidths (GB/s per GPU, one
 * direction), typical of an H100 cluster: NVLink 450, inside a node across NVLink domains (PCIe 5)
 * 64, rack (400 Gb/s InfiniBand per GPU) 50, block (2:1 oversubscribed spine) 25, zone 12.5,
 * cluster (across zones) 6.25. Example: f = 0.2, a gang spread over two racks of one block runs 0.8
 * + 0.2 * 450 / 25 = 4.4 times longer: why placement keeps gangs inside racks.
 */
public record CommModel(
    double commFraction,
    double nvlinkGBps,
    double nodeGBps,
    double rackGBps,
    double blockGBps,
    double zoneGBps,
    double clusterGBps) {
  public CommModel {
    Checks.argument(
        commFraction >= 0 && commFraction <= 1,
        () -> "comm fraction must be in [0, 1], got " + commFraction);
    for (double bw :
        new double[] {nvlinkGBps, nodeGBps, rackGBps, blockGBps, zoneGBps, clusterGBps}) {
      Checks.argument(bw > 0, () -> "bandwidths must be > 0, got " + bw);
    }
  }

  public static CommModel defaults(double commFraction) {
    return new CommModel(commFraction, 450, 64, 50, 25, 12.5, 6.25);
  }

  public double bandwidth(TopologyLevel level) {
    return switch (level) {
      case NVLINK -> nvlinkGBps;
      case NODE -> nodeGBps;
      case RACK -> rackGBps;
      case BLOCK -> blockGBps;
      case ZONE -> zoneGBps;
      case CLUSTER -> clusterGBps;
    };
  }

  /** The factor a job's run time is multiplied by when spread over {@code level}. */
  public double slowdown(TopologyLevel level) {
    return (1 - commFraction) + commFraction * nvlinkGBps / bandwidth(level);
  }
}
