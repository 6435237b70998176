package io.kairos.agent.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.kairos.agent.gpu.Topology.Kind;
import io.kairos.agent.gpu.Topology.Link;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class TopologyTest {
  @ParameterizedTest
  @CsvSource({
    "X, SELF, 0", "' X ', SELF, 0", "NV1, NVLINK, 1", "NV4, NVLINK, 4", "NV12, NVLINK, 12",
    "NV18, NVLINK, 18", "PIX, PIX, 0", "PXB, PXB, 0", "PHB, PHB, 0", "NODE, NODE, 0",
    "SYS, SYS, 0", "SOC, SYS, 0", "NV0, UNKNOWN, 0", "C2C, UNKNOWN, 0"
  })
  void readsEveryCellKind(String cell, Kind kind, int nvlinks) {
    assertThat(Link.parse(cell)).isEqualTo(new Link(kind, nvlinks));
  }

  @Test
  void dgxH100IsAllNv18WithAffinitiesAndNoNics() {
    Topology t = Topology.parse(Samples.read("dgx-h100", "topo.txt"));

    assertThat(t.gpus()).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
    for (int a = 0; a < 8; a++) {
      for (int b = 0; b < 8; b++) {
        assertThat(t.link(a, b))
            .isEqualTo(a == b ? new Link(Kind.SELF, 0) : new Link(Kind.NVLINK, 18));
      }
    }
    assertThat(t.cpuAffinity()).containsEntry(0, "0-55,112-167").containsEntry(7, "56-111,168-223");
    assertThat(t.numaAffinity()).containsEntry(3, "0").containsEntry(4, "1").hasSize(8);
  }

  @Test
  void pcieBoxHasTwoBridgedPairs() {
    Topology t = Topology.parse(Samples.read("pcie-4gpu", "topo.txt"));

    assertThat(t.link(0, 1)).isEqualTo(new Link(Kind.NVLINK, 12));
    assertThat(t.link(2, 3)).isEqualTo(new Link(Kind.NVLINK, 12));
    assertThat(t.link(1, 2).kind()).isEqualTo(Kind.SYS);
    assertThat(t.numaAffinity()).isEqualTo(Map.of(0, "0", 1, "0", 2, "1", 3, "1"));
  }

  @Test
  void olderDriverNamesNicsByDeviceAndHasNoNumaColumn() {
    Topology t = Topology.parse(Samples.read("v100-old-driver", "topo.txt"));

    assertThat(t.gpus()).containsExactly(0, 1, 2, 3);
    assertThat(t.link(0, 3)).isEqualTo(new Link(Kind.NVLINK, 2));
    assertThat(t.cpuAffinity()).containsEntry(2, "0-19,40-59");
    assertThat(t.numaAffinity()).isEmpty();
  }

  @Test
  void readsHandPastedSpaceSeparatedOutput() {
    String text =
        """
                GPU0    GPU1    CPU Affinity    NUMA Affinity
        GPU0     X      PHB     0-11            N/A
        GPU1    PHB      X      0-11            N/A

        Legend:
          X    = Self
        """;

    Topology t = Topology.parse(text);
    assertThat(t.link(0, 1).kind()).isEqualTo(Kind.PHB);
    assertThat(t.cpuAffinity()).isEqualTo(Map.of(0, "0-11", 1, "0-11"));
    assertThat(t.numaAffinity()).isEmpty();
  }

  @Test
  void ignoresColourCodes() {
    String text =
        "\u001B[4m\tGPU0\tGPU1\tCPU Affinity\u001B[0m\nGPU0\t X \tNV4\t0-7\nGPU1\tNV4\t X \t0-7\n";

    assertThat(Topology.parse(text).link(1, 0)).isEqualTo(new Link(Kind.NVLINK, 4));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "No devices were found",
        "\tGPU0\tGPU1\nGPU0\t X \tNV1\n",
        "\tGPU0\tGPU1\nGPU0\t X \tNV1\nGPU1\tNV1\tNV1\n",
        "\tGPU0\tGPU1\nGPU0\t X \tNV1\n\nLegend:\nGPU1\tNV1\t X \n"
      })
  void rejectsBrokenMatrices(String text) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Topology.parse(text))
        .withMessageStartingWith("topo -m");
  }

  static Stream<Arguments> domains() {
    return Stream.of(
        Arguments.of("dgx-h100", List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7)), 8),
        Arguments.of("pcie-4gpu", List.of(List.of(0, 1), List.of(2, 3)), 2),
        Arguments.of("v100-old-driver", List.of(List.of(0, 1, 2, 3)), 4));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("domains")
  void groupsGpusIntoNvlinkDomains(String sample, List<List<Integer>> domains, int size) {
    GpuInventory inventory = Samples.inventory(sample);

    assertThat(inventory.nvlinkDomains()).isEqualTo(domains);
    assertThat(inventory.nvlinkDomainSize()).isEqualTo(size);
  }

  @Test
  void unequalDomainsFallBackToOne() {
    // 0-1-2 chained by NVLink (0 and 2 only through 1), 3 alone: domains of 3 and 1.
    String text =
        "\tGPU0\tGPU1\tGPU2\tGPU3\n"
            + "GPU0\t X \tNV2\tSYS\tSYS\n"
            + "GPU1\tNV2\t X \tNV2\tSYS\n"
            + "GPU2\tSYS\tNV2\t X \tSYS\n"
            + "GPU3\tSYS\tSYS\tSYS\t X \n";
    var gpus = SmiXmlParser.parse(Samples.read("pcie-4gpu", "q.xml")).gpus();

    GpuInventory inventory = GpuInventory.of("", gpus, Topology.parse(text), List.of());
    assertThat(inventory.nvlinkDomains()).containsExactly(List.of(0, 1, 2), List.of(3));
    assertThat(inventory.nvlinkDomainSize()).isEqualTo(1);
  }

  @Test
  void withoutTopologyEveryGpuIsItsOwnDomain() {
    var gpus = SmiXmlParser.parse(Samples.read("pcie-4gpu", "q.xml")).gpus();
    GpuInventory noTopology = GpuInventory.of("", gpus, Topology.EMPTY, List.of());

    assertThat(noTopology.nvlinkDomains()).hasSize(4);
    assertThat(noTopology.nvlinkDomainSize()).isEqualTo(1);
    assertThat(GpuInventory.of("", List.of(), Topology.EMPTY, List.of()).nvlinkDomainSize())
        .isEqualTo(1);
  }
}
