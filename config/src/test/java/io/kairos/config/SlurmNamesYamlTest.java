package io.kairos.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The site's Slurm names file: read in any case, every problem reported at once. */
class SlurmNamesYamlTest {
  @Test
  void readsAliasesPartitionsAndStrictQos() {
    var names =
        SlurmNamesYaml.parse(
            """
            gpuTypes:
              A100_80G: NVIDIA A100-SXM4-80GB
              ampere: a100
            partitions:
              Hopper-Prod: research
            strictQos: true
            """,
            "slurm.yaml");

    assertThat(names.gpuModel("a100_80g")).isEqualTo("NVIDIA A100-SXM4-80GB");
    assertThat(names.gpuModel("AMPERE")).isEqualTo("a100");
    assertThat(names.gpuModel("v100")).isEqualTo("v100");
    assertThat(names.queue("hopper-prod")).isEqualTo("research");
    assertThat(names.queue("Other")).isEqualTo("other");
    assertThat(names.strictQos()).isTrue();
  }

  @Test
  void anEmptyFileIsTheDefaults() {
    assertThat(SlurmNamesYaml.parse("", "slurm.yaml")).isEqualTo(SlurmNames.DEFAULTS);
  }

  @Test
  void everyProblemIsNamedWithItsKeyAndFix() {
    assertThatThrownBy(
            () ->
                SlurmNamesYaml.parse(
                    """
                    gpuTypes:
                      a100: x
                      A100: y
                      v100: [1, 2]
                    partitions:
                      gpu: Not A Queue
                    strictQos: maybe
                    colour: blue
                    """,
                    "slurm.yaml"))
        .isInstanceOf(TenancyYaml.InvalidConfig.class)
        .hasMessageContaining("gpuTypes.v100")
        .hasMessageContaining("gpuTypes.A100: named twice")
        .hasMessageContaining("partitions.gpu")
        .hasMessageContaining("strictQos")
        .hasMessageContaining("colour");
  }
}
