package io.kairos.agent.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIOException;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The runner against the fake nvidia-smi and small shell programs: real processes, no mocks. */
class NvidiaSmiTest {
  @TempDir Path dir;

  @Test
  void runsEachQueryWithItsArguments() throws IOException {
    var fake = FakeNvidiaSmi.withSample(dir, "pcie-4gpu");
    NvidiaSmi smi = fake.smi();

    assertThat(smi.queryXml().stdout()).isEqualTo(Samples.read("pcie-4gpu", "q.xml"));
    assertThat(smi.queryCsv().stdout()).isEqualTo(Samples.read("pcie-4gpu", "query.csv"));
    CommandResult topo = smi.topology();
    assertThat(topo.stdout()).isEqualTo(Samples.read("pcie-4gpu", "topo.txt"));
    assertThat(topo.isSuccess()).isTrue();
    assertThat(topo.command()).endsWith("topo", "-m");
  }

  @Test
  void capturesExitCodeAndStderr() throws IOException {
    var fake =
        FakeNvidiaSmi.withSample(dir, "dgx-h100")
            .remove("q.xml")
            .fail(
                9,
                "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make"
                    + " sure that the latest NVIDIA driver is installed and running.");

    CommandResult result = fake.smi().queryXml();

    assertThat(result.exitCode()).isEqualTo(9);
    assertThat(result.stdout()).isEmpty();
    assertThat(result.describeFailure())
        .startsWith(
            "nvidia-smi -q -x exited 9: NVIDIA-SMI has failed because it couldn't communicate with"
                + " the NVIDIA driver");
  }

  @Test
  void killsAProgramThatRunsPastItsTimeout() throws IOException {
    var fake = FakeNvidiaSmi.withSample(dir, "dgx-h100").sleep(Duration.ofSeconds(60));

    long started = System.nanoTime();
    CommandResult result = fake.smi(Duration.ofMillis(300)).queryXml();

    assertThat(result.timedOut()).isTrue();
    assertThat(result.isSuccess()).isFalse();
    assertThat(result.describeFailure()).isEqualTo("nvidia-smi -q -x timed out");
    // The sleeping child was killed with its shell, or the readers would have waited 60 s.
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(30));
  }

  @Test
  void aMissingBinaryIsAClearError() {
    var smi =
        new NvidiaSmi(
            dir.resolve("no-such-nvidia-smi").toString(), Map.of(), Duration.ofSeconds(5));

    assertThatIOException()
        .isThrownBy(smi::queryXml)
        .withMessageStartingWith("no-such-nvidia-smi -q -x could not start");
  }

  @Test
  void passesTheExtraEnvironmentAndInheritsTheRest() throws IOException {
    CommandResult result =
        CommandRunner.run(
            List.of(
                "/bin/sh",
                "-c",
                "echo \"$KAIROS_TEST_VAR:${PATH:+has-path}\"; echo oops >&2; exit 3"),
            Map.of("KAIROS_TEST_VAR", "hello"),
            Duration.ofSeconds(10));

    assertThat(result.stdout().strip()).isEqualTo("hello:has-path");
    assertThat(result.firstErrorLine()).isEqualTo("oops");
    assertThat(result.exitCode()).isEqualTo(3);
  }

  @Test
  void drainsLargeOutputWithoutStalling() throws IOException {
    CommandResult result =
        CommandRunner.run(
            List.of(
                "/bin/sh",
                "-c",
                "head -c 3000000 /dev/zero | tr '\\0' a; head -c 300000 /dev/zero >&2"),
            Map.of(),
            Duration.ofSeconds(20));

    assertThat(result.isSuccess()).isTrue();
    assertThat(result.stdout()).hasSize(3_000_000);
    assertThat(result.stderr()).hasSize(300_000);
  }

  @Test
  void unsupportedArgumentsFailLikeTheRealBinary() throws IOException {
    var fake = FakeNvidiaSmi.withSample(dir, "dgx-h100");

    CommandResult result = fake.smi().run(List.of("-L"));
    assertThat(result.exitCode()).isEqualTo(2);
  }
}
