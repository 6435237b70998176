package io.kairos.agent.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class SmiXmlParserTest {
  private static final long MIB = 1L << 20;

  static Stream<Arguments> samples() {
    return Stream.of(
        Arguments.of(
            "dgx-h100",
            "535.129.03",
            8,
            "NVIDIA H100 80GB HBM3",
            81559 * MIB,
            "GPU-5d3b8e1c-7a4f-2b9e-1c6d-0f3e8a9b7c21",
            "0000:18:00.0",
            33,
            87,
            92),
        Arguments.of(
            "pcie-4gpu",
            "550.54.15",
            4,
            "NVIDIA A100 80GB PCIe",
            81920 * MIB,
            "GPU-3f8a2c61-0d94-7be5-2a1c-84e6f9d03b72",
            "0000:17:00.0",
            38,
            92,
            95),
        Arguments.of(
            "v100-old-driver",
            "418.87.01",
            4,
            "Tesla V100-SXM2-16GB",
            16160 * MIB,
            "GPU-b7d2e8f1-9a34-c06d-5e27-13f8a4b6c090",
            "0000:1a:00.0",
            36,
            84,
            87));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("samples")
  void readsIdentityMemoryAndThermalsOfEverySample(
      String sample,
      String driver,
      int count,
      String model,
      long memoryBytes,
      String firstUuid,
      String firstBusId,
      int temperature,
      int slowdown,
      int shutdown) {
    var report = SmiXmlParser.parse(Samples.read(sample, "q.xml"));

    assertThat(report.driverVersion()).isEqualTo(driver);
    assertThat(report.gpus()).hasSize(count);
    assertThat(report.gpus())
        .extracting(GpuDetails::index)
        .containsExactly(
            java.util.stream.IntStream.range(0, count).boxed().toArray(Integer[]::new));
    assertThat(report.gpus())
        .allSatisfy(
            g -> {
              assertThat(g.model()).isEqualTo(model);
              assertThat(g.memoryBytes()).isEqualTo(memoryBytes);
              assertThat(g.eccUncorrectableVolatile()).isZero();
              assertThat(g.eccUncorrectableAggregate()).isZero();
              assertThat(g.retiredPagesPending()).isFalse();
              assertThat(g.remappedRowsPending()).isFalse();
              assertThat(g.remappedRowsFailure()).isFalse();
            });
    GpuDetails first = report.gpus().getFirst();
    assertThat(first.uuid()).isEqualTo(firstUuid);
    assertThat(first.pciBusId()).isEqualTo(firstBusId);
    assertThat(first.temperatureC()).isEqualTo(temperature);
    assertThat(first.slowdownThresholdC()).isEqualTo(slowdown);
    assertThat(first.shutdownThresholdC()).isEqualTo(shutdown);
  }

  @Test
  void sumsDramAndSramUncorrectableOnNewDrivers() {
    String xml =
        Samples.read("dgx-h100", "q.xml")
            .replaceFirst(
                "<dram_uncorrectable>0</dram_uncorrectable>",
                "<dram_uncorrectable>2</dram_uncorrectable>")
            .replaceFirst(
                "<sram_uncorrectable>0</sram_uncorrectable>",
                "<sram_uncorrectable>1</sram_uncorrectable>");

    assertThat(SmiXmlParser.parse(xml).gpus().getFirst().eccUncorrectableVolatile()).isEqualTo(3);
  }

  @Test
  void readsDoubleBitTotalsOnOldDrivers() {
    String xml =
        Samples.read("v100-old-driver", "q.xml")
            .replaceFirst("(?s)(<double_bit>.*?<total>)0</total>", "$15</total>");

    GpuDetails gpu = SmiXmlParser.parse(xml).gpus().getFirst();
    assertThat(gpu.eccUncorrectableVolatile()).isEqualTo(5);
    assertThat(gpu.eccUncorrectableAggregate()).isZero();
  }

  @Test
  void readsTheSplitSramCountersOfLaterDrivers() {
    String xml =
        gpuXml(
            "<ecc_errors><volatile><sram_correctable>0</sram_correctable>"
                + "<sram_uncorrectable_parity>1</sram_uncorrectable_parity>"
                + "<sram_uncorrectable_secded>2</sram_uncorrectable_secded>"
                + "<dram_correctable>0</dram_correctable><dram_uncorrectable>4</dram_uncorrectable>"
                + "</volatile></ecc_errors>");

    assertThat(SmiXmlParser.parse(xml).gpus().getFirst().eccUncorrectableVolatile()).isEqualTo(7);
  }

  @Test
  void eccNotReportedIsUnknown() {
    String xml =
        gpuXml(
            "<ecc_errors><volatile><dram_uncorrectable>N/A</dram_uncorrectable></volatile>"
                + "<aggregate><dram_uncorrectable>[Not Supported]</dram_uncorrectable></aggregate>"
                + "</ecc_errors><temperature><gpu_temp>N/A</gpu_temp></temperature>");

    GpuDetails gpu = SmiXmlParser.parse(xml).gpus().getFirst();
    assertThat(gpu.eccUncorrectableVolatile()).isEqualTo(GpuDetails.UNKNOWN);
    assertThat(gpu.eccUncorrectableAggregate()).isEqualTo(GpuDetails.UNKNOWN);
    assertThat(gpu.temperatureC()).isEqualTo(GpuDetails.UNKNOWN);
    assertThat(gpu.slowdownThresholdC()).isEqualTo(GpuDetails.UNKNOWN);
  }

  @Test
  void readsPendingRetirementAndRowRemapping() {
    String newer =
        Samples.read("pcie-4gpu", "q.xml")
            .replaceFirst(
                "<remapped_row_pending>No</remapped_row_pending>",
                "<remapped_row_pending>Yes</remapped_row_pending>")
            .replaceFirst(
                "<remapped_row_failure>No</remapped_row_failure>",
                "<remapped_row_failure>Yes</remapped_row_failure>");
    String older =
        Samples.read("v100-old-driver", "q.xml")
            .replaceFirst(
                "<pending_blacklist>No</pending_blacklist>",
                "<pending_blacklist>Yes</pending_blacklist>");

    GpuDetails a100 = SmiXmlParser.parse(newer).gpus().getFirst();
    GpuDetails v100 = SmiXmlParser.parse(older).gpus().getFirst();
    assertThat(a100.remappedRowsPending()).isTrue();
    assertThat(a100.remappedRowsFailure()).isTrue();
    assertThat(v100.retiredPagesPending()).isTrue();
  }

  @Test
  void indexIsDocumentOrderNotMinorNumber() {
    String xml =
        Samples.read("pcie-4gpu", "q.xml")
            .replaceFirst("<minor_number>0</minor_number>", "<minor_number>7</minor_number>");

    assertThat(SmiXmlParser.parse(xml).gpus())
        .extracting(GpuDetails::index)
        .containsExactly(0, 1, 2, 3);
  }

  @Test
  void neverResolvesExternalEntities() {
    String xml =
        "<?xml version=\"1.0\"?>\n"
            + "<!DOCTYPE nvidia_smi_log [<!ENTITY leak SYSTEM \"file:///etc/passwd\">]>\n"
            + "<nvidia_smi_log><driver_version>&leak;</driver_version>"
            + "<gpu id=\"00000000:01:00.0\"><uuid>GPU-x</uuid><product_name>P</product_name></gpu>"
            + "</nvidia_smi_log>";

    String driver;
    try {
      driver = SmiXmlParser.parse(xml).driverVersion();
    } catch (IllegalArgumentException refused) {
      return; // refusing the document is as good as not resolving it
    }
    assertThat(driver).doesNotContain("root:");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
        "<nvidia_smi_log><gpu>",
        "<other/>",
        "<nvidia_smi_log><gpu><product_name>X</product_name></gpu></nvidia_smi_log>"
      })
  void rejectsWhatIsNotAReport(String text) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> SmiXmlParser.parse(text))
        .withMessageStartingWith("-q -x");
  }

  @Test
  void noGpusIsAnEmptyReport() {
    assertThat(
            SmiXmlParser.parse("<nvidia_smi_log><attached_gpus>0</attached_gpus></nvidia_smi_log>")
                .gpus())
        .isEmpty();
  }

  private static String gpuXml(String body) {
    return "<nvidia_smi_log><gpu id=\"00000000:01:00.0\"><uuid>GPU-1</uuid>"
        + "<product_name>NVIDIA L4</product_name><fb_memory_usage><total>23034 MiB</total>"
        + "</fb_memory_usage>"
        + body
        + "</gpu></nvidia_smi_log>";
  }
}
