package io.kairos.agent.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.agent.gpu.HealthProblem.Kind;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Health checks end to end: the fake nvidia-smi and real check programs, edited between runs. */
class HealthProbeTest {
  @TempDir Path dir;
  @TempDir Path programs;

  private HealthProbe probe(FakeNvidiaSmi fake, HealthCheckProgram... checks) {
    return new HealthProbe(
        new Discovery(fake.smi()), new HealthChecker(HealthPolicy.DEFAULTS), List.of(checks));
  }

  @Test
  void anEccRiseOnTheRealXmlIsReported() throws IOException {
    var fake = FakeNvidiaSmi.withSample(dir, "dgx-h100");
    GpuInventory baseline = new Discovery(fake.smi()).discover();
    fake.edit(
        "q.xml",
        xml ->
            xml.replaceFirst(
                "(?s)(<uuid>GPU-e47b1d95.*?<volatile>.*?<dram_uncorrectable>)0<", "$12<"));

    HealthReport report = probe(fake).check(baseline);

    assertThat(report.problems())
        .extracting(HealthProblem::reason)
        .containsExactly("GPU 3 (GPU-e47b1d95...): uncorrectable ECC errors rose 0 -> 2");
  }

  @Test
  void aGpuRemovedFromTheXmlIsMissing() throws IOException {
    var fake = FakeNvidiaSmi.withSample(dir, "pcie-4gpu");
    GpuInventory baseline = new Discovery(fake.smi()).discover();
    fake.edit(
        "q.xml", xml -> xml.replaceFirst("(?s)\t<gpu id=\"00000000:B1:00.0\">.*?</gpu>\n", ""));

    HealthReport report = probe(fake).check(baseline);

    assertThat(report.problems())
        .extracting(HealthProblem::kind, HealthProblem::gpuIndex)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(Kind.GPU_MISSING, 2));
  }

  @Test
  void aLostGpuWithExit15IsReportedByIndex() throws IOException {
    var fake = FakeNvidiaSmi.withSample(dir, "dgx-h100");
    GpuInventory baseline = new Discovery(fake.smi()).discover();
    fake.fail(
        15,
        "Unable to determine the device handle for GPU0000:3A:00.0: GPU is lost. Reboot the system to recover this GPU");

    HealthReport report = probe(fake).check(baseline);

    assertThat(report.problems())
        .extracting(HealthProblem::kind)
        .containsExactly(Kind.NVIDIA_SMI_FAILED, Kind.GPU_LOST);
    assertThat(report.problems().get(0).reason())
        .startsWith("nvidia-smi -q -x exited 15: Unable to determine");
    assertThat(report.problems().get(1).gpuIndex()).isEqualTo(2);
  }

  @Test
  void aHotGpuInTheRealXmlIsReported() throws IOException {
    var fake = FakeNvidiaSmi.withSample(dir, "pcie-4gpu");
    GpuInventory baseline = new Discovery(fake.smi()).discover();
    fake.edit(
        "q.xml", xml -> xml.replaceFirst("<gpu_temp>41 C</gpu_temp>", "<gpu_temp>94 C</gpu_temp>"));

    assertThat(probe(fake).check(baseline).summary())
        .isEqualTo("GPU 1 at 94 C, slowdown threshold 92 C");
  }

  @Test
  void checkProgramPassFailAndTimeout() throws IOException {
    var fake = FakeNvidiaSmi.withSample(dir, "pcie-4gpu");
    GpuInventory baseline = new Discovery(fake.smi()).discover();
    var pass = program("pass", "#!/bin/sh\necho all good\nexit 0\n", Duration.ofSeconds(10));
    var fail =
        program(
            "nhc",
            "#!/bin/sh\necho 'ERROR:  nhc:  Health check failed:  check_fs_mount:  /scratch not mounted'\necho detail\nexit 1\n",
            Duration.ofSeconds(10));
    var stderrOnly =
        program("quiet", "#!/bin/sh\necho 'disk full' >&2\nexit 4\n", Duration.ofSeconds(10));
    var slow = program("slow", "#!/bin/sh\nsleep 60\n", Duration.ofMillis(300));

    assertThat(probe(fake, pass).check(baseline).isHealthy()).isTrue();
    assertThat(probe(fake, fail, stderrOnly, slow).check(baseline).problems())
        .extracting(HealthProblem::reason)
        .containsExactly(
            "health check nhc failed (exit 1): ERROR:  nhc:  Health check failed:  check_fs_mount:  /scratch not mounted",
            "health check quiet failed (exit 4): disk full",
            "health check slow timed out after 300 ms");
  }

  @Test
  void aMissingCheckProgramIsAProblem() {
    var missing =
        new HealthCheckProgram(
            List.of(programs.resolve("absent").toString()), Map.of(), Duration.ofSeconds(5));

    assertThat(missing.run().problems())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.kind()).isEqualTo(Kind.CHECK_PROGRAM);
              assertThat(p.reason()).startsWith("health check absent could not start");
            });
  }

  private HealthCheckProgram program(String name, String script, Duration timeout)
      throws IOException {
    Path path = programs.resolve(name);
    Files.writeString(path, script);
    Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rwxr-xr-x"));
    return new HealthCheckProgram(List.of(path.toString()), Map.of(), timeout);
  }
}
