package io.kairos.agent.gpu;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The recorded nvidia-smi samples in {@code src/test/resources/nvidia-smi/<name>/}: {@code q.xml}
 * ({@code -q -x}), {@code query.csv} (the {@code --query-gpu} fallback) and {@code topo.txt}
 * ({@code topo -m}).
 *
 * <ul>
 *   <li>{@code dgx-h100}: 8x H100 SXM, driver 535, every pair NV18, ten NICs, two NUMA nodes.
 *   <li>{@code pcie-4gpu}: 4x A100 PCIe, driver 550, NVLink bridges joining 0-1 and 2-3.
 *   <li>{@code v100-old-driver}: 4x V100 SXM2, driver 418: double_bit ECC, pending_blacklist, no
 *       remapped_rows, {@code mlx5_0} as a column and no NUMA column.
 * </ul>
 */
final class Samples {
  static final List<String> NAMES = List.of("dgx-h100", "pcie-4gpu", "v100-old-driver");

  private Samples() {}

  static String read(String sample, String file) {
    String resource = "/nvidia-smi/" + sample + "/" + file;
    try (InputStream in = Samples.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalArgumentException("no test resource " + resource);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A pure inventory built from a sample's XML and topology, as discovery would build it. */
  static GpuInventory inventory(String sample) {
    SmiXmlParser.Report report = SmiXmlParser.parse(read(sample, "q.xml"));
    return GpuInventory.of(
        report.driverVersion(), report.gpus(), Topology.parse(read(sample, "topo.txt")), List.of());
  }
}
