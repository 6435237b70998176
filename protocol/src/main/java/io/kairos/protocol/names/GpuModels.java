package io.kairos.protocol.names;

import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * GPU model names as people and tools write them, reduced to one key: {@code a100}, {@code A100},
 * {@code a100_80g} and nvidia-smi's "NVIDIA A100-SXM4-80GB" are all {@code a100}. Slurm sites name
 * GPU types in their gres.conf as they like; this key is what those names and the agents' reported
 * product names have in common.
 *
 * <p>The key: lower case, split into words at anything not a letter or digit; without vendor and
 * product-line words (NVIDIA, Tesla, GeForce, Quadro, AMD, Instinct, Radeon, Intel), form factors
 * (SXM*, PCIe, HBM*, NVL, NVLink), memory sizes ({@code 80GB}, {@code 40g}) and "generation";
 * joined, and without a leading "rtx" or "gtx" when more follows. Examples: "NVIDIA H100 80GB HBM3"
 * is {@code h100}, "Tesla V100-SXM2-32GB" is {@code v100}, "NVIDIA GeForce RTX 3090" and {@code
 * rtx_3090} are {@code 3090}, "NVIDIA RTX A6000" and {@code a6000} are {@code a6000}, "Quadro RTX
 * 8000" is {@code 8000}, "NVIDIA L40S" is {@code l40s}.
 *
 * <p>Memory sizes are dropped, so an 80 GB and a 40 GB A100 have the same key: a site that tells
 * them apart names them through its own aliases.
 */
public final class GpuModels {
  private static final Set<String> DROPPED =
      Set.of(
          "nvidia",
          "tesla",
          "geforce",
          "quadro",
          "amd",
          "instinct",
          "radeon",
          "intel",
          "sxm",
          "sxm2",
          "sxm3",
          "sxm4",
          "sxm5",
          "pcie",
          "hbm",
          "hbm2",
          "hbm2e",
          "hbm3",
          "hbm3e",
          "nvl",
          "nvlink",
          "generation");

  private static final Pattern MEMORY = Pattern.compile("\\d+(?:g|gb|gib|m|mb|mib)");
  private static final Pattern WORD = Pattern.compile("[^a-z0-9]+");

  private GpuModels() {}

  /** The key of a model name; "" for a blank name. */
  public static String key(String model) {
    var out = new StringBuilder();
    for (String word : WORD.split(model.toLowerCase(Locale.ROOT))) {
      if (!word.isEmpty() && !DROPPED.contains(word) && !MEMORY.matcher(word).matches()) {
        out.append(word);
      }
    }
    String key = out.toString();
    if ((key.startsWith("rtx") || key.startsWith("gtx")) && key.length() > 3) {
      key = key.substring(3);
    }
    return key;
  }

  /** Whether two names name the same model: equal, or with equal non-empty keys. */
  public static boolean same(String a, String b) {
    if (a.equals(b)) {
      return true;
    }
    String k = key(a);
    return !k.isEmpty() && k.equals(key(b));
  }
}
