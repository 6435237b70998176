package io.kairos.protocol.names;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** GPU model names as gres.conf types and nvidia-smi write them, reduced to one key. */
class GpuModelsTest {
  @ParameterizedTest(name = "{0} is {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a100|a100",
        "A100|a100",
        "NVIDIA A100-SXM4-80GB|a100",
        "NVIDIA A100-PCIE-40GB|a100",
        "a100_80g|a100",
        "NVIDIA H100 80GB HBM3|h100",
        "h100|h100",
        "Tesla V100-SXM2-32GB|v100",
        "v100|v100",
        "NVIDIA GeForce RTX 3090|3090",
        "rtx_3090|3090",
        "NVIDIA RTX A6000|a6000",
        "a6000|a6000",
        "Quadro RTX 8000|8000",
        "NVIDIA L40S|l40s",
        "EMU|emu",
        "'   '|''"
      })
  void reducesANameToItsKey(String name, String key) {
    assertThat(GpuModels.key(name)).isEqualTo(key);
  }

  @ParameterizedTest(name = "{0} = {1}: {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a100|NVIDIA A100-SXM4-80GB|true",
        "A100|a100|true",
        "v100|NVIDIA A100-SXM4-80GB|false",
        "l40|NVIDIA L40S|false",
        "h100|NVIDIA H100 80GB HBM3|true",
        "''|''|true",
        "''|NVIDIA|false"
      })
  void twoNamesAreTheSameModelWhenTheirKeysAre(String a, String b, boolean same) {
    assertThat(GpuModels.same(a, b)).isEqualTo(same);
  }
}
