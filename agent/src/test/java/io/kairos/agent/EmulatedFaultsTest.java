package io.kairos.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Failing single emulated GPUs through the faults file, and how the node's health splits what it
 * finds: a problem of one GPU is reported by index (the controller takes that GPU out alone) and
 * refuses no launch; a problem of the node as a whole (here: a line the file cannot mean) does.
 */
class EmulatedFaultsTest {
  @TempDir Path dir;

  @Test
  void aListedGpuIsUnhealthyAloneAndTheNodeStaysUsable() throws Exception {
    Path file = dir.resolve("faults");
    var health = NodeHealth.emulated(file, 8);
    assertThat(health.checks()).isTrue();

    assertThat(health.checkNow()).as("no file: healthy").isEmpty();
    assertThat(health.latestGpuProblems()).isEmpty();

    Files.writeString(file, "# GPU faults\n\n2 XID 48: double-bit ECC error\n");
    assertThat(health.checkNow()).as("no problem of the node as a whole").isEmpty();
    assertThat(health.latest()).isEmpty();
    assertThat(health.latestGpuProblems())
        .isEqualTo(Map.of(2, "GPU 2: XID 48: double-bit ECC error"));

    Files.writeString(file, "2\n5 thermal\n");
    health.checkNow();
    assertThat(health.latestGpuProblems())
        .isEqualTo(Map.of(2, "GPU 2: emulated fault", 5, "GPU 5: thermal"));

    Files.delete(file);
    health.checkNow();
    assertThat(health.latestGpuProblems()).isEmpty();
  }

  @Test
  void aLineThatNamesNoGpuOfTheNodeIsAProblemOfTheNodeNamingTheLine() throws Exception {
    Path file = dir.resolve("faults");
    var health = NodeHealth.emulated(file, 4);
    Files.writeString(file, "1 ok\n4 too high\n");

    assertThat(health.checkNow())
        .singleElement()
        .asString()
        .contains("line 2")
        .contains("INDEX 0 to 3");
    assertThat(health.latestGpuProblems()).containsOnlyKeys(1);

    Files.writeString(file, "gpu2 bad\n");
    assertThat(health.checkNow()).singleElement().asString().contains("line 1");
  }
}
