package io.kairos.control.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PriorLeasesTest {
  @TempDir Path dir;

  @Test
  void aFirstStartAssumesTheLeaseOfEarlierReleasesAndKeepsTheLongerOne() throws Exception {
    assertThat(PriorLeases.readAndRecord(dir, LeaseSettings.DEFAULT))
        .isEqualTo(PriorLeases.LEGACY_LEASE_MS);
    assertThat(Files.readString(dir.resolve(PriorLeases.FILE)).strip()).isEqualTo("10000");
    assertThat(
            PosixFilePermissions.toString(
                Files.getPosixFilePermissions(dir.resolve("agent-lease"))))
        .isEqualTo("rw-------");
  }

  @Test
  void aRestartWithAShorterLeaseWaitsOutTheLongerOneUntilSettled() throws Exception {
    PriorLeases.settle(dir, new LeaseSettings(20_000, 500));
    assertThat(PriorLeases.readAndRecord(dir, LeaseSettings.DEFAULT)).isEqualTo(20_000);
    assertThat(PriorLeases.read(dir)).as("still the longer one").isEqualTo(20_000);
    PriorLeases.settle(dir, LeaseSettings.DEFAULT);
    assertThat(PriorLeases.readAndRecord(dir, LeaseSettings.DEFAULT)).isEqualTo(3_500);
  }

  @Test
  void anUnreadableRecordCountsAsTheLegacyLease() throws Exception {
    Files.writeString(dir.resolve(PriorLeases.FILE), "-5\n");
    assertThat(PriorLeases.read(dir)).isEqualTo(PriorLeases.LEGACY_LEASE_MS);
    Files.writeString(dir.resolve(PriorLeases.FILE), "99999999999\n");
    assertThat(PriorLeases.read(dir)).isEqualTo(PriorLeases.LEGACY_LEASE_MS);
  }
}
