package io.kairos.core.sched.place;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kairos.testkit.Clusters;
import io.kairos.testkit.Jobs;
import io.kairos.testkit.SchedulerHarness;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** GPU choice inside a node: one NVLink domain when possible, the tightest such domain. */
class GpuPickerTest {

  record Row(long free, int gpus, int nvlink, int tasks, int perTask, long expected) {}

  static Stream<Arguments> rows() {
    return Stream.of(
        row(
            "javadoc example: both domains have 3 free, the first wins",
            new Row(0b1110_1110, 8, 4, 1, 2, 0b0000_0110)),
        row(
            "the domain with the fewest free GPUs that holds the task",
            new Row(0b1111_0011, 8, 4, 1, 2, 0b0000_0011)),
        row(
            "a 4-GPU task takes the whole free domain, not 3 + 1",
            new Row(0b1111_0111, 8, 4, 1, 4, 0b1111_0000)),
        row(
            "a task no domain holds takes the lowest free GPUs",
            new Row(0b0011_0011, 8, 4, 1, 3, 0b0001_0011)),
        row(
            "two tasks: each the tightest domain at its turn",
            new Row(0b1110_1111, 8, 4, 2, 2, 0b0110_0011)),
        row("a full node for two 4-GPU tasks", new Row(0xFF, 8, 4, 2, 4, 0xFF)),
        row("one domain: lowest free GPUs", new Row(0b1010_1010, 8, 8, 1, 3, 0b0010_1010)),
        row(
            "domains of 2: the pair with one busy GPU is skipped for 2 GPUs",
            new Row(0b1111_1101, 8, 2, 1, 2, 0b0000_1100)),
        row(
            "domains of 2: 1 GPU goes to the pair with one free",
            new Row(0b1111_1101, 8, 2, 1, 1, 0b0000_0001)),
        row("domains of 1", new Row(0b1000_0100, 8, 1, 1, 1, 0b0000_0100)),
        row("64 GPUs in one domain", new Row(-1L, 64, 64, 1, 64, -1L)),
        row(
            "64 GPUs in two domains: the upper half is tighter",
            new Row(~(0b11L << 32), 64, 32, 1, 8, 0xFFL << 34)));
  }

  private static Arguments row(String name, Row row) {
    return Arguments.of(Named.of(name, row));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void picks(Row r) {
    long mask = GpuPicker.pick(r.free(), r.gpus(), r.nvlink(), r.tasks(), r.perTask());

    assertThat(Long.toBinaryString(mask)).isEqualTo(Long.toBinaryString(r.expected()));
    assertThat(mask & ~r.free()).as("only free GPUs").isZero();
    assertThat(Long.bitCount(mask)).isEqualTo(r.tasks() * r.perTask());
  }

  @Test
  void tooFewFreeGpusIsAnError() {
    assertThatThrownBy(() -> GpuPicker.pick(0b0001, 8, 4, 1, 2))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void passPicksGpusInsideOneNvlinkDomain() {
    // One node of 8 GPUs in two NVLink domains of 4; GPU 1 is busy. A 4-GPU job must not take
    // GPUs 0, 2, 3, 4 (lowest free, across domains) but the whole second domain.
    var h = SchedulerHarness.of(Clusters.builder().rack("b0", "r0", 1, 8, 4).build());
    h.occupy(0, 0b0000_0010);
    h.submit(Jobs.tasks(1, 4));
    h.submit(Jobs.tasks(1, 2));

    var pass = h.runPass();
    h.commit(pass);

    assertThat(pass.starts().get(0).placement().gpuMask(0)).isEqualTo(0b1111_0000L);
    assertThat(pass.starts().get(1).placement().gpuMask(0)).isEqualTo(0b0000_0101L);
  }
}
