package io.kairos.control.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.raft.MigrationCodecGoldenTest;
import io.kairos.control.state.ControlCommand.MigrateJob;
import io.kairos.control.state.ControlState;
import io.kairos.core.model.JobId;
import io.kairos.core.sched.MigrationSettings;
import io.kairos.core.sched.Migrations;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * What the pass is told of migration ({@link MigrationProposals#inputs}): a move's hold, with its
 * end by the core's rule, whether migration is on or was turned off while the move was under way
 * (then nothing moves, but the hold still binds and still ends).
 */
class MigrationInputsTest {
  private static final long T0 = 1_700_000_000_000L;
  private static final MigrationSettings ON = new MigrationSettings(3600, 10, 0.3);

  /** The golden log's nodes, job and start, then a move of job 1 to n2 at T0 + 3. */
  private static ControlState moved() {
    var state = new ControlState();
    var log = MigrationCodecGoldenTest.commands();
    for (int i = 0; i < 5; i++) {
      state.apply(log.get(i));
    }
    assertThat(state.apply(new MigrateJob(T0 + 3, 1, 1, List.of("n2"), 7, 3600, "g")).isOk())
        .isTrue();
    return state;
  }

  @Test
  void aHoldEndsAtTheMovePlusTheCheckpointTimeoutPlusTheRestartCost() {
    ControlState s = moved();
    var cluster = s.store().snapshot().cluster();
    int n2 = cluster.indexOf("n2").orElseThrow();
    Migrations in = MigrationProposals.inputs(s, cluster, Optional.of(ON));
    assertThat(in.enabled()).isTrue();
    assertThat(in.held()).containsEntry(n2, JobId.of(1));
    long timeout = s.job(1).orElseThrow().request.checkpoint().timeoutSec();
    long end = (T0 + 3 + 999) / 1000 + timeout + 10;
    assertThat(in.holdEndsSec()).containsEntry(JobId.of(1), end);
    assertThat(in.expiredAt(end - 1)).isEmpty();
    assertThat(in.expiredAt(end)).containsExactly(JobId.of(1));
  }

  @Test
  void turnedOffWhileAMoveIsUnderWayTheHoldStillBindsAndEnds() {
    ControlState s = moved();
    var cluster = s.store().snapshot().cluster();
    Migrations in = MigrationProposals.inputs(s, cluster, Optional.empty());
    assertThat(in.enabled()).as("nothing moves").isFalse();
    assertThat(in.movable()).isEmpty();
    assertThat(in.held()).containsValue(JobId.of(1));
    assertThat(in.expiredAt(Long.MAX_VALUE)).containsExactly(JobId.of(1));
  }

  @Test
  void withNoHoldAndMigrationOffThePassIsToldNothing() {
    var state = new ControlState();
    var log = MigrationCodecGoldenTest.commands();
    for (int i = 0; i < 5; i++) {
      state.apply(log.get(i));
    }
    assertThat(
            MigrationProposals.inputs(state, state.store().snapshot().cluster(), Optional.empty()))
        .isSameAs(Migrations.OFF);
  }
}
