package io.kairos.agent.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/** Discovery through the fake nvidia-smi: the real parsers behind a real process. */
class DiscoveryTest {
  static final List<String> SAMPLES = Samples.NAMES;
  private static final String NO_DRIVER =
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that"
          + " the latest NVIDIA driver is installed and running.";

  @TempDir Path dir;

  @ParameterizedTest
  @FieldSource("SAMPLES")
  void findsWhatTheSampleHolds(String sample) throws NvidiaSmiException {
    var fake = FakeNvidiaSmi.withSample(dir, sample);

    GpuInventory inventory = new Discovery(fake.smi()).discover();

    assertThat(inventory).isEqualTo(Samples.inventory(sample));
    assertThat(inventory.warnings()).isEmpty();
  }

  @Test
  void dgxH100AdvertisesEightH100sInOneDomain() throws NvidiaSmiException {
    GpuInventory inventory =
        new Discovery(FakeNvidiaSmi.withSample(dir, "dgx-h100").smi()).discover();

    assertThat(inventory.devices()).hasSize(8);
    assertThat(inventory.devices().get(5).index()).isEqualTo(5);
    assertThat(inventory.devices().get(5).model()).isEqualTo("NVIDIA H100 80GB HBM3");
    assertThat(inventory.devices().get(5).memoryBytes()).isEqualTo(81559L << 20);
    assertThat(inventory.nvlinkDomainSize()).isEqualTo(8);
  }

  @Test
  void driverNotLoadedNamesCommandExitCodeAndFirstStderrLine() {
    var fake =
        FakeNvidiaSmi.withSample(dir, "dgx-h100")
            .remove("q.xml")
            .remove("query.csv")
            .fail(9, NO_DRIVER);

    assertThatExceptionOfType(NvidiaSmiException.class)
        .isThrownBy(() -> new Discovery(fake.smi()).discover())
        .withMessageStartingWith(
            "nvidia-smi -q -x exited 9: NVIDIA-SMI has failed because it couldn't communicate with"
                + " the NVIDIA driver")
        .withMessageContaining("the --query-gpu fallback also failed: exited 9");
  }

  @Test
  void garbageXmlFallsBackToTheCsvQuery() throws NvidiaSmiException {
    var fake = FakeNvidiaSmi.withSample(dir, "pcie-4gpu").write("q.xml", "<nvidia_smi_log><gpu>");

    GpuInventory inventory = new Discovery(fake.smi()).discover();

    assertThat(inventory.devices()).isEqualTo(Samples.inventory("pcie-4gpu").devices());
    assertThat(inventory.nvlinkDomainSize()).isEqualTo(2);
    assertThat(inventory.warnings())
        .singleElement()
        .asString()
        .contains("used the --query-gpu fallback");
  }

  @Test
  void aFailedXmlQueryFallsBackToTheCsvQuery() throws NvidiaSmiException {
    var fake =
        FakeNvidiaSmi.withSample(dir, "v100-old-driver").fail("q.xml", 3, "Unsupported feature");

    GpuInventory inventory = new Discovery(fake.smi()).discover();

    assertThat(inventory.gpuCount()).isEqualTo(4);
    assertThat(inventory.warnings()).contains("Unsupported feature");
  }

  @Test
  void garbageEverywhereIsAnErrorNamingBothAttempts() {
    var fake =
        FakeNvidiaSmi.withSample(dir, "dgx-h100")
            .write("q.xml", "Segmentation fault\n")
            .write("query.csv", "Segmentation fault\n");

    assertThatExceptionOfType(NvidiaSmiException.class)
        .isThrownBy(() -> new Discovery(fake.smi()).discover())
        .withMessageContaining("nvidia-smi -q -x printed unusable output")
        .withMessageContaining("query csv line 1");
  }

  @Test
  void aFailedTopologyIsAWarningAndDomainsOfOne() throws NvidiaSmiException {
    var fake =
        FakeNvidiaSmi.withSample(dir, "dgx-h100").fail("topo.txt", 255, "Failed to run topology");

    GpuInventory inventory = new Discovery(fake.smi()).discover();

    assertThat(inventory.gpuCount()).isEqualTo(8);
    assertThat(inventory.topology()).isEqualTo(Topology.EMPTY);
    assertThat(inventory.nvlinkDomainSize()).isEqualTo(1);
    assertThat(inventory.warnings())
        .anySatisfy(
            w ->
                assertThat(w)
                    .startsWith("nvidia-smi topo -m exited 255")
                    .endsWith("NVLink domains unknown"));
  }

  @Test
  void aTimeoutIsAnErrorWithoutFallback() {
    var fake = FakeNvidiaSmi.withSample(dir, "dgx-h100").sleep(Duration.ofSeconds(60));

    assertThatExceptionOfType(NvidiaSmiException.class)
        .isThrownBy(() -> new Discovery(fake.smi(Duration.ofMillis(300))).discover())
        .withMessage("nvidia-smi -q -x timed out after 300 ms");
  }

  @Test
  void aMissingBinaryIsAnErrorNamingIt() {
    var smi = new NvidiaSmi("/nonexistent/nvidia-smi", Map.of(), Duration.ofSeconds(5));

    assertThatExceptionOfType(NvidiaSmiException.class)
        .isThrownBy(() -> new Discovery(smi).discover())
        .withMessageStartingWith("nvidia-smi -q -x could not start")
        .withMessageContaining("/nonexistent/nvidia-smi");
  }
}
