package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kairos.control.accounting.AccountingSettings;
import io.kairos.control.health.PhiAccrualDetector;
import io.kairos.protocol.UtilizationPoint;
import io.kairos.protocol.UtilizationView;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dashboard's utilization history lives in the accounting store: the leader's samples are
 * written there, and a controller that starts again (or a new leader) rebuilds its history from it,
 * so the graph does not start empty after a restart or a failover.
 */
class UtilizationHistoryRestartTest {
  @TempDir Path dir;
  Controller controller;
  final int port = ConfigApiTest.freePort();

  ControllerConfig config() {
    return ControllerConfig.single(dir.resolve("ctl"), "127.0.0.1", port)
        .withRunAs(TestApi.SINGLE_USER)
        .withDetection(new PhiAccrualDetector.Settings(8.0, 1000, 100, 3_600_000, 1_000));
  }

  Connection store() throws SQLException {
    return DriverManager.getConnection(
        "jdbc:sqlite:" + dir.resolve("ctl").resolve(AccountingSettings.SQLITE_FILE));
  }

  long rows() throws SQLException {
    try (var c = store();
        var s = c.createStatement();
        var r = s.executeQuery("SELECT COUNT(*) FROM utilization")) {
      r.next();
      return r.getLong(1);
    }
  }

  @AfterEach
  void stop() throws Exception {
    if (controller != null) {
      controller.close();
    }
  }

  @Test
  void theHistoryOutlivesTheControllerThroughTheAccountingStore() throws Exception {
    controller = Controller.start(config());
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    // A new leader samples at once; the sample is in the store.
    await().atMost(Duration.ofSeconds(30)).until(() -> rows() >= 1);
    controller.close();
    controller = null;

    // Half an hour ago, as an earlier run would have recorded it.
    long halfHourAgo = Instant.now().minus(Duration.ofMinutes(30)).toEpochMilli();
    try (var c = store();
        var s = c.prepareStatement("INSERT INTO utilization VALUES (?, 777, 555, 3, 2, 1, 0)")) {
      s.setLong(1, halfHourAgo);
      s.executeUpdate();
    }

    controller = Controller.start(config());
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    var admin = new TestApi(controller.url(), controller.adminToken());
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              var reply = admin.get("/api/v1/stats/utilization?window=1h");
              assertThat(reply.status()).as(reply.body()).isEqualTo(200);
              var view = reply.as(UtilizationView.class);
              assertThat(view.points())
                  .as("the sample from before the restart")
                  .anySatisfy(
                      p -> {
                        assertThat(p.gpusTotal()).isEqualTo(777.0);
                        assertThat(p.gpusBusy()).isEqualTo(555.0);
                      });
              assertThat(view.points())
                  .as("and the first run's own sample, and the new run's")
                  .filteredOn((UtilizationPoint p) -> p.gpusTotal() != 777.0)
                  .isNotEmpty();
            });
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(rows())
                    .as("the first run's sample, the planted one, the new run's")
                    .isGreaterThanOrEqualTo(3));
  }
}
