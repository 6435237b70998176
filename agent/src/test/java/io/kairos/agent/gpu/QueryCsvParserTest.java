package io.kairos.agent.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.FieldSource;

class QueryCsvParserTest {
  static final List<String> SAMPLES = Samples.NAMES;

  @ParameterizedTest
  @FieldSource("SAMPLES")
  void agreesWithTheXmlOnIdentityAndMemory(String sample) {
    var fromCsv = QueryCsvParser.parse(Samples.read(sample, "query.csv"));
    var fromXml = SmiXmlParser.parse(Samples.read(sample, "q.xml")).gpus();

    assertThat(fromCsv)
        .extracting(GpuDetails::device)
        .isEqualTo(fromXml.stream().map(GpuDetails::device).toList());
    assertThat(fromCsv)
        .extracting(GpuDetails::pciBusId)
        .isEqualTo(fromXml.stream().map(GpuDetails::pciBusId).toList());
    assertThat(fromCsv)
        .extracting(GpuDetails::temperatureC)
        .isEqualTo(fromXml.stream().map(GpuDetails::temperatureC).toList());
  }

  @Test
  void placeholdersAreUnknownOrFalse() {
    var gpu =
        QueryCsvParser.parse(
                "0, GPU-a, NVIDIA L4, 23034, 00000000:01:00.0, [N/A], [Not Supported], [N/A]\n")
            .getFirst();

    assertThat(gpu.temperatureC()).isEqualTo(GpuDetails.UNKNOWN);
    assertThat(gpu.eccUncorrectableVolatile()).isEqualTo(GpuDetails.UNKNOWN);
    assertThat(gpu.retiredPagesPending()).isFalse();
    assertThat(gpu.slowdownThresholdC()).isEqualTo(GpuDetails.UNKNOWN);
  }

  @Test
  void readsCountsAndPendingRetirement() {
    var gpu =
        QueryCsvParser.parse("3, GPU-b, Tesla V100-SXM2-16GB, 16160, 00000000:88:00.0, 41, 2, Yes")
            .getFirst();

    assertThat(gpu.index()).isEqualTo(3);
    assertThat(gpu.memoryBytes()).isEqualTo(16160L << 20);
    assertThat(gpu.eccUncorrectableVolatile()).isEqualTo(2);
    assertThat(gpu.retiredPagesPending()).isTrue();
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "0, GPU-a, L4, 23034 | expected 8 fields",
        "x, GPU-a, L4, 23034, 00000000:01:00.0, 40, 0, No | is not a number",
        "[N/A], GPU-a, L4, 23034, 00000000:01:00.0, 40, 0, No | no index",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. | expected 8 fields"
      })
  void rejectsMalformedLinesNamingThem(String line, String problem) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> QueryCsvParser.parse(line))
        .withMessageContaining("query csv line 1")
        .withMessageContaining(problem);
  }
}
