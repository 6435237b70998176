package io.kairos.core.invariant;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kairos.testkit.Clusters;
import io.kairos.testkit.Jobs;
import io.kairos.testkit.SchedulerHarness;
import org.junit.jupiter.api.Test;

class InvariantCheckerTest {

  @Test
  void reservationKeptWhenStartedAtOrBeforeIt() {
    assertThatCode(() -> InvariantChecker.checkReservationKept(1, 100, 100))
        .doesNotThrowAnyException();
    assertThatCode(() -> InvariantChecker.checkReservationKept(1, 100, 50))
        .doesNotThrowAnyException();
  }

  @Test
  void reservationBrokenWhenStartedLater() {
    assertThatThrownBy(() -> InvariantChecker.checkReservationKept(7, 100, 101))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("job 7");
  }

  @Test
  void storeChecksPassThroughAWholeRun() {
    var h = SchedulerHarness.of(Clusters.oneRack(3, 8));
    h.submit(Jobs.perNode(16, 8).limit(10));
    h.submit(Jobs.gpus(5).limit(5));
    h.submit(Jobs.tasks(3, 2).limit(7));

    h.runUntilIdle();

    assertThatCode(() -> InvariantChecker.checkStore(h.store())).doesNotThrowAnyException();
  }
}
