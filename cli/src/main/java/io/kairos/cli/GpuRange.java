package io.kairos.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.regex.Pattern;

/**
 * A GPU count as the CLI and job files take it: {@code 16}, or an elastic range {@code 8-32} (the
 * job's minimum and maximum, torchrun's {@code --nnodes=MIN:MAX} in GPUs), which the API receives
 * as {@code gpus} and {@code maxGpus}.
 *
 * @param max null for a fixed count
 */
record GpuRange(int min, Integer max) {
  private static final Pattern RANGE = Pattern.compile("\\s*(\\d{1,9})\\s*-\\s*(\\d{1,9})\\s*");
  private static final Pattern COUNT = Pattern.compile("\\s*(\\d{1,9})\\s*");

  /**
   * {@code text} as a count or a range; bad text is a {@link UsageException} naming {@code where}.
   */
  static GpuRange parse(String text, String where) {
    var range = RANGE.matcher(text);
    if (range.matches()) {
      int min = Integer.parseInt(range.group(1));
      int max = Integer.parseInt(range.group(2));
      if (max < min) {
        throw new UsageException(
            where
                + ": the range "
                + text.strip()
                + " ends below its start; give MIN-MAX, e.g. 8-32");
      }
      return new GpuRange(min, max);
    }
    var count = COUNT.matcher(text);
    if (count.matches()) {
      return new GpuRange(Integer.parseInt(count.group(1)), null);
    }
    throw new UsageException(
        where
            + ": expected a GPU count (16) or an elastic range MIN-MAX (8-32), got '"
            + text
            + "'");
  }

  /** A job file's {@code gpus: 8-32} as {@code gpus: 8, maxGpus: 32}; other values stay. */
  static void expand(ObjectNode root, String where) {
    var gpus = root.get("gpus");
    if (gpus == null || !gpus.isTextual() || !gpus.asText().contains("-")) {
      return; // a count, or a value the reader refuses with its own message
    }
    var range = parse(gpus.asText(), where + ": gpus");
    root.put("gpus", range.min());
    if (range.max() != null) {
      if (root.has("maxGpus")) {
        throw new UsageException(
            where + ": gpus gives a range and maxGpus is set too; give one of them");
      }
      root.put("maxGpus", range.max());
    }
  }
}
