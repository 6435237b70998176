package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.protocol.QueueView;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How {@code kairos queues} writes a queue's quotas. */
class QueuesCommandTest {
  @Test
  void quotasShowUsageOfNominalAndBorrowingWithMemoryInBinaryUnits() {
    var quotas =
        List.of(
            new QueueView.Quota("gpu:H100", 8, null, null, 10, 2),
            new QueueView.Quota("cpu", 2048, null, null, 0, 0),
            new QueueView.Quota("memory", 16L << 40, null, null, 3L << 30, 0));
    assertThat(QueuesCommand.quotas(quotas))
        .isEqualTo("gpu:H100 10/8 +2 borrowed, cpu 0/2048, memory 3Gi/16Ti");
  }

  @Test
  void amountsThatAreNotWholeUnitsStayExact() {
    assertThat(QueuesCommand.amount(1536, true)).isEqualTo("1536");
    assertThat(QueuesCommand.amount(3L << 29, true)).isEqualTo("1536Mi");
    assertThat(QueuesCommand.amount(5000, false)).isEqualTo("5000");
    assertThat(QueuesCommand.quotas(List.of())).isEqualTo("-");
  }
}
