package io.kairos.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.kairos.protocol.GpuDevice;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class EmulatedGpusTest {
  private static final long GIB = 1L << 30;

  static Stream<Arguments> specs() {
    return Stream.of(
        Arguments.of("8", 8, "EMU", 80 * GIB),
        Arguments.of("0", 0, "EMU", 80 * GIB),
        Arguments.of("8xA100", 8, "A100", 80 * GIB),
        Arguments.of("4xH100-80GB", 4, "H100", 80 * GIB),
        Arguments.of("2xL4-24GB", 2, "L4", 24 * GIB),
        Arguments.of("2xA100-SXM4-40gb", 2, "A100-SXM4", 40 * GIB),
        Arguments.of("1xA100-SXM4", 1, "A100-SXM4", 80 * GIB),
        Arguments.of(" 64 ", 64, "EMU", 80 * GIB));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("specs")
  void parsesCountModelAndMemory(String spec, int count, String model, long memoryBytes) {
    assertThat(EmulatedGpus.parse(spec)).isEqualTo(new EmulatedGpus(count, model, memoryBytes));
  }

  @ParameterizedTest(name = "''{0}''")
  @ValueSource(
      strings = {
        "",
        " ",
        "x",
        "-1",
        "4x",
        "4xH 100",
        "4xH100-0GB",
        "65",
        "8xA100-",
        "8x-A100",
        "eight",
        "4*H100",
        "4xH100-80TB/"
      })
  void rejectsBadSpecsNamingTheField(String spec) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> EmulatedGpus.parse(spec))
        .withMessageStartingWith("gpus");
  }

  @Test
  void devicesHaveStableUuidsFromNodeAndIndex() {
    var gpus = EmulatedGpus.parse("2xH100-80GB");

    assertThat(gpus.devices("n7"))
        .containsExactly(
            new GpuDevice(0, "GPU-EMU-n7-0", "H100", 80 * GIB),
            new GpuDevice(1, "GPU-EMU-n7-1", "H100", 80 * GIB));
    assertThat(gpus.devices("n7")).isEqualTo(EmulatedGpus.parse("2xH100").devices("n7"));
    assertThat(gpus.devices("n8").getFirst().uuid()).isNotEqualTo("GPU-EMU-n7-0");
  }
}
