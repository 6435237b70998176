package io.kairos.protocol.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A step's exit code as Slurm 22.05's srun computed it (tasks ending as listed; 128 + N is a task
 * killed by signal N, -1 one lost with its node).
 */
class StepExitTest {
  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "0 0 0     | 0",
        "1 2 3     | 3",
        "3 2 1     | 3",
        "2 137     | 137",
        "5 143     | 143",
        "143 137   | 143",
        "137 143   | 143",
        "0 -1      | 137",
        "255 0     | 255",
        "''        | 0",
      })
  void followsSrun(String codes, int expected) {
    List<Integer> list =
        codes.isBlank()
            ? List.of()
            : Arrays.stream(codes.trim().split(" +")).map(Integer::valueOf).toList();
    assertThat(StepExit.of(list)).isEqualTo(expected);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "3   | Exited with exit code 3",
        "137 | Killed",
        "143 | Terminated",
        "139 | Segmentation fault",
        "-1  | Killed (its node was lost)",
      })
  void describesAsSrun(int code, String words) {
    assertThat(StepExit.describe(code)).isEqualTo(words);
  }

  @org.junit.jupiter.api.Test
  void aCleanExitSaysNothing() {
    assertThat(StepExit.describe(0)).isNull();
  }
}
