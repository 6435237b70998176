package io.kairos.config;

import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * A site's Slurm names in Kairos' terms ({@code kairos server --slurm FILE}, read by {@link
 * SlurmNamesYaml}): its GPU types (gres.conf's {@code Type=}) as the models its agents report, its
 * partitions as queues, and whether {@code --qos} must name a priority class. Names are matched
 * case-insensitively, as Slurm users write them in either case.
 *
 * @param gpuTypes a GPU type name (lower case) to the model it means, written as {@code
 *     --gpu-model} takes it: the agents' name for it ("NVIDIA A100-SXM4-80GB") or any name with the
 *     same key ({@code io.kairos.protocol.names.GpuModels}); types not listed are matched by that
 *     key alone
 * @param partitions a partition name (lower case) to the queue it is; partitions not listed are the
 *     queue of the same name in lower case (queue names are lower case)
 * @param strictQos true: a {@code --qos} that names no priority class is refused, as Slurm refuses
 *     an unknown QOS; false (the default): it is ignored with a warning, for scripts written for
 *     another site
 */
public record SlurmNames(
    Map<String, String> gpuTypes, Map<String, String> partitions, boolean strictQos) {
  /** No aliases, partitions are queues, an unknown QOS is a warning. */
  public static final SlurmNames DEFAULTS = new SlurmNames(Map.of(), Map.of(), false);

  public SlurmNames {
    gpuTypes = lowerKeys(gpuTypes);
    partitions = lowerKeys(partitions);
  }

  private static Map<String, String> lowerKeys(Map<String, String> map) {
    var out = new TreeMap<String, String>();
    map.forEach((k, v) -> out.put(k.toLowerCase(Locale.ROOT), v));
    return Map.copyOf(out);
  }

  /** The model a requested GPU type means here: the site's alias for it, else the name itself. */
  public String gpuModel(String type) {
    return gpuTypes.getOrDefault(type.toLowerCase(Locale.ROOT), type);
  }

  /**
   * The queue a partition is: the site's mapping for it (in any case), else the name in lower case
   * (queue names are lower case).
   */
  public String queue(String partition) {
    String lower = partition.toLowerCase(Locale.ROOT);
    return partitions.getOrDefault(lower, lower);
  }
}
