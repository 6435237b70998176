package io.kairos.agent;

import io.kairos.protocol.GpuDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The GPUs an agent advertises without real hardware: a count, a model and a memory size, parsed
 * from a spec such as {@code "8"}, {@code "8xA100"} or {@code "4xH100-80GB"}.
 *
 * <p>Devices get stable UUIDs derived from the node name and index ({@code GPU-EMU-n1-0}), so a
 * restarted agent advertises the same devices. Immutable; performs no discovery.
 *
 * @param count GPUs on the node, 0 to 64
 * @param model the model name every device reports ({@code EMU} by default)
 * @param memoryBytes memory per device
 */
public record EmulatedGpus(int count, String model, long memoryBytes) {
  /** The most GPUs one node may have (the controller tracks a node's GPUs in a 64-bit mask). */
  public static final int MAX_COUNT = 64;

  public static final String DEFAULT_MODEL = "EMU";
  public static final long DEFAULT_MEMORY_BYTES = 80L << 30;

  // count, then optionally "x" + model, then optionally "-<n>GB"; the model is matched lazily so
  // that "H100-80GB" splits into model "H100" and 80 GB, while "A100-SXM4" stays one model.
  private static final Pattern SPEC =
      Pattern.compile("(\\d{1,3})(?:x([A-Za-z0-9_.\\-]+?)(?:-(\\d{1,5})(?i:GB))?)?");
  private static final Pattern MODEL =
      Pattern.compile("[A-Za-z0-9]([A-Za-z0-9_.\\-]*[A-Za-z0-9])?");

  // After the patterns: the constructor uses them.
  /** No GPUs: a CPU-only node. */
  public static final EmulatedGpus NONE = new EmulatedGpus(0, DEFAULT_MODEL, DEFAULT_MEMORY_BYTES);

  public EmulatedGpus {
    if (count < 0 || count > MAX_COUNT) {
      throw new IllegalArgumentException(
          "gpus: count must be between 0 and " + MAX_COUNT + ", got " + count);
    }
    Objects.requireNonNull(model, "gpus.model");
    if (!MODEL.matcher(model).matches()) {
      throw new IllegalArgumentException(
          "gpus.model: '"
              + model
              + "' must be letters, digits, '.', '_' or '-', starting and ending with a letter or"
              + " digit");
    }
    if (memoryBytes <= 0) {
      throw new IllegalArgumentException("gpus.memoryBytes must be > 0, got " + memoryBytes);
    }
  }

  /**
   * Parses {@code COUNT[xMODEL[-MEMGB]]}: {@code "8"} is 8 {@code EMU} GPUs of 80 GiB, {@code
   * "8xA100"} 8 A100 of 80 GiB, {@code "4xH100-80GB"} 4 H100 of 80 GiB (GB here means GiB, as GPU
   * vendors use it).
   *
   * @throws IllegalArgumentException naming the field and the expected form
   */
  public static EmulatedGpus parse(String spec) {
    if (spec == null || spec.isBlank()) {
      throw new IllegalArgumentException(
          "gpus: spec must not be empty (examples: 8, 8xA100, 4xH100-80GB)");
    }
    Matcher m = SPEC.matcher(spec.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "gpus: '" + spec + "' is not COUNT[xMODEL[-MEMGB]] (examples: 8, 8xA100, 4xH100-80GB)");
    }
    int count = Integer.parseInt(m.group(1));
    String model = m.group(2) == null ? DEFAULT_MODEL : m.group(2);
    long memoryBytes = m.group(3) == null ? DEFAULT_MEMORY_BYTES : Long.parseLong(m.group(3)) << 30;
    return new EmulatedGpus(count, model, memoryBytes);
  }

  /** The devices of node {@code node}, indexes 0 to count - 1. */
  public List<GpuDevice> devices(String node) {
    List<GpuDevice> devices = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      devices.add(new GpuDevice(i, uuid(node, i), model, memoryBytes));
    }
    return List.copyOf(devices);
  }

  /** Whether {@code uuid} is one this class made up. */
  public static boolean isEmulated(String uuid) {
    return uuid != null && uuid.startsWith(UUID_PREFIX);
  }

  private static final String UUID_PREFIX = "GPU-EMU-";

  static String uuid(String node, int index) {
    return UUID_PREFIX + node + "-" + index;
  }
}
