package io.kairos.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kairos.core.sched.MigrationSettings;
import org.junit.jupiter.api.Test;

/**
 * The tenancy file's {@code scheduling.migration} block: off unless enabled, every value checked.
 */
class MigrationYamlTest {
  private static final String FILE = "tenancy.yaml";

  @Test
  void offWhenAbsentOrDisabled() {
    assertThat(TenancyYaml.parse("scheduling: {preemptionGrace: 30s}\n", FILE).migration())
        .isEmpty();
    assertThat(
            TenancyYaml.parse(
                    "scheduling:\n  migration: {enabled: false, protectionWindow: 2h}\n", FILE)
                .migration())
        .isEmpty();
  }

  @Test
  void enabledWithDefaultsAndWithEveryKnob() {
    assertThat(TenancyYaml.parse("scheduling:\n  migration: {enabled: true}\n", FILE).migration())
        .contains(MigrationSettings.DEFAULT);
    assertThat(
            TenancyYaml.parse(
                    """
                    scheduling:
                      migration:
                        enabled: true
                        protectionWindow: 2h
                        restartCost: 90s
                        consolidationGain: 0.25
                    """,
                    FILE)
                .migration())
        .contains(new MigrationSettings(7_200, 90, 0.25));
  }

  @Test
  void badValuesNameTheFieldAndTheFix() {
    assertThatThrownBy(
            () ->
                TenancyYaml.parse(
                    "scheduling:\n  migration: {enabled: true, consolidationGain: 1.5}\n", FILE))
        .hasMessageContaining("scheduling.migration.consolidationGain")
        .hasMessageContaining("from 0 to 1");
    assertThatThrownBy(
            () ->
                TenancyYaml.parse(
                    "scheduling:\n  migration: {enabled: true, protectionWindow: soon}\n", FILE))
        .hasMessageContaining("scheduling.migration.protectionWindow")
        .hasMessageContaining("30s, 10m");
    assertThatThrownBy(
            () -> TenancyYaml.parse("scheduling:\n  migration: {enabled: yes please}\n", FILE))
        .hasMessageContaining("scheduling.migration.enabled");
    assertThatThrownBy(() -> TenancyYaml.parse("scheduling:\n  migration: {enable: true}\n", FILE))
        .hasMessageContaining("scheduling.migration")
        .hasMessageContaining("enable");
  }
}
