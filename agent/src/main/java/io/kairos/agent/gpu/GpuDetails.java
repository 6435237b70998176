package io.kairos.agent.gpu;

import io.kairos.protocol.GpuDevice;
import java.util.Objects;

/**
 * One GPU as nvidia-smi reported it: identity plus the health readings the checker compares.
 *
 * <p>Readings a driver or board does not report ({@code N/A}, {@code [Not Supported]}) are {@link
 * #UNKNOWN} (-1); a check skips what is unknown rather than guessing. Counts are totals over all
 * memory kinds: double-bit ECC on older drivers, DRAM plus SRAM uncorrectable on newer ones.
 *
 * @param index nvidia-smi's index (PCI bus order), the {@code N} of {@code GPUN} in {@code topo -m}
 * @param uuid {@code GPU-...}, stable across reboots
 * @param model product name, e.g. {@code NVIDIA H100 80GB HBM3}
 * @param memoryBytes total framebuffer memory
 * @param pciBusId canonical {@code dddd:bb:dd.f}, lower case (see {@link #canonicalBusId})
 * @param temperatureC current core temperature
 * @param slowdownThresholdC the temperature at which the GPU throttles itself
 * @param shutdownThresholdC the temperature at which the GPU shuts down
 * @param eccUncorrectableVolatile uncorrectable ECC errors since the driver loaded
 * @param eccUncorrectableAggregate uncorrectable ECC errors over the board's life
 * @param retiredPagesPending a page retirement waits for the next driver reload (pre-Ampere)
 * @param remappedRowsPending a row remapping waits for the next GPU reset (Ampere and later)
 * @param remappedRowsFailure a row remapping failed: the board needs service
 */
public record GpuDetails(
    int index,
    String uuid,
    String model,
    long memoryBytes,
    String pciBusId,
    int temperatureC,
    int slowdownThresholdC,
    int shutdownThresholdC,
    long eccUncorrectableVolatile,
    long eccUncorrectableAggregate,
    boolean retiredPagesPending,
    boolean remappedRowsPending,
    boolean remappedRowsFailure) {
  /** A reading the driver did not report. */
  public static final int UNKNOWN = -1;

  public GpuDetails {
    if (index < 0) {
      throw new IllegalArgumentException("gpu.index must be >= 0, got " + index);
    }
    Objects.requireNonNull(uuid, "gpu.uuid");
    Objects.requireNonNull(model, "gpu.model");
    Objects.requireNonNull(pciBusId, "gpu.pciBusId");
    pciBusId = canonicalBusId(pciBusId);
  }

  /** The wire record the controller knows. */
  public GpuDevice device() {
    return new GpuDevice(index, uuid, model, memoryBytes);
  }

  /** {@code "GPU 3 (GPU-1a2b3c4d...)"}: how problems name a GPU. */
  public String label() {
    return "GPU " + index + " (" + shortUuid(uuid) + ")";
  }

  /** The first 12 characters of a UUID and an ellipsis: enough to find it, short enough to read. */
  static String shortUuid(String uuid) {
    return uuid.length() <= 15 ? uuid : uuid.substring(0, 12) + "...";
  }

  /**
   * nvidia-smi writes bus ids with an 8-digit domain in XML and CSV ({@code 00000000:3B:00.0}) and
   * a 4-digit one in error messages ({@code 0000:3B:00.0}); both become {@code 0000:3b:00.0}.
   * Anything that does not look like a bus id is returned lower-cased and stripped.
   */
  public static String canonicalBusId(String busId) {
    String id = busId.strip().toLowerCase(java.util.Locale.ROOT);
    int first = id.indexOf(':');
    if (first > 0 && id.indexOf(':', first + 1) > first) {
      String domain = id.substring(0, first);
      if (domain.matches("[0-9a-f]{1,8}")) {
        long value = Long.parseLong(domain, 16);
        return String.format("%04x", value) + id.substring(first);
      }
    }
    return id;
  }
}
