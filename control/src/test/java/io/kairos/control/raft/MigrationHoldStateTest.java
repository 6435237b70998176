package io.kairos.control.raft;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.state.ControlCommand;
import io.kairos.control.state.ControlCommand.EndMigrationHold;
import io.kairos.control.state.ControlCommand.MigrateJob;
import io.kairos.control.state.ControlState;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The end of a move's hold in the replicated state ({@link EndMigrationHold}), on the log of {@link
 * MigrationCodecGoldenTest} up to the move: a move records when its hold ends; ending it frees the
 * target and says so; an end naming another move, or a second end, changes nothing; both commands
 * encode and decode to the same value, and a move without a recorded end keeps its old bytes.
 */
class MigrationHoldStateTest {
  private static final long T0 = 1_700_000_000_000L;

  /** The golden log's first six entries (three nodes, the job, its start), then a move. */
  private static ControlState moved(long holdEndsMs) {
    var state = new ControlState();
    List<ControlCommand> log = MigrationCodecGoldenTest.commands();
    for (int i = 0; i < 5; i++) {
      assertThat(state.apply(log.get(i)).isOk()).as("entry %d", i).isTrue();
    }
    var move = new MigrateJob(T0 + 3, 1, 1, List.of("n2"), 7, 3600, "gain > cost", holdEndsMs);
    assertThat(state.apply(move).isOk()).isTrue();
    return state;
  }

  @Test
  void aMoveRecordsItsHoldsEndAndTheMessageSaysIt() {
    ControlState state = moved(T0 + 3 + 360_000);
    var job = state.job(1).orElseThrow();
    assertThat(job.migrationTarget).containsExactly("n2");
    assertThat(job.migrationHoldEndsMs).isEqualTo(T0 + 3 + 360_000);
    assertThat(job.message).contains("its nodes are held for it until 2023-11-14T22:19:20.003Z");
  }

  @Test
  void endingTheHoldFreesTheTargetOnceAndOnlyForThatMove() {
    ControlState state = moved(T0 + 3 + 360_000);
    assertThat(state.apply(new EndMigrationHold(T0 + 400_000, 1, T0 + 99)).isOk())
        .as("another move's end")
        .isFalse();
    assertThat(state.job(1).orElseThrow().migrationTarget).containsExactly("n2");
    assertThat(state.apply(new EndMigrationHold(T0 + 400_000, 1, T0 + 3)).isOk()).isTrue();
    var job = state.job(1).orElseThrow();
    assertThat(job.migrationTarget).isEmpty();
    assertThat(job.migrationHoldEndsMs).isZero();
    assertThat(job.message).startsWith("the hold on n2 ended at ");
    assertThat(state.apply(new EndMigrationHold(T0 + 400_001, 1, T0 + 3)).isOk())
        .as("ended already")
        .isFalse();
    assertThat(state.apply(new EndMigrationHold(T0 + 400_001, 42, T0 + 3)).isOk())
        .as("no such job")
        .isFalse();
  }

  /** What {@link ControlState#anyMigrationHold} answers without a walk of every live job. */
  private static boolean anyLiveJobHolds(ControlState state) {
    return state.activeJobs().stream().anyMatch(j -> !j.migrationTarget.isEmpty());
  }

  @Test
  void anyMigrationHoldFollowsTheHoldThroughItsEndASnapshotAndACancel() throws Exception {
    ControlState state = moved(T0 + 3 + 360_000);
    assertThat(state.anyMigrationHold()).isTrue().isEqualTo(anyLiveJobHolds(state));
    var out = new java.io.ByteArrayOutputStream();
    CommandCodec.writeImage(state.image(), out);
    var loaded =
        ControlState.of(
            CommandCodec.readImage(new java.io.ByteArrayInputStream(out.toByteArray())));
    assertThat(loaded.anyMigrationHold()).as("after a snapshot").isTrue();
    assertThat(state.apply(new EndMigrationHold(T0 + 400_000, 1, T0 + 3)).isOk()).isTrue();
    assertThat(state.anyMigrationHold()).isFalse().isEqualTo(anyLiveJobHolds(state));
    // The job cancelled while it holds: it is no longer live, so nothing holds.
    assertThat(loaded.apply(new ControlCommand.CancelJob(T0 + 500_000, 1, "alice")).status())
        .isLessThan(300);
    assertThat(loaded.anyMigrationHold()).isEqualTo(anyLiveJobHolds(loaded));
    assertThat(new ControlState().anyMigrationHold()).isFalse();
  }

  @Test
  void theCommandsEncodeAndDecodeToTheSameValues() {
    var end = new EndMigrationHold(T0, 1, T0 - 5);
    assertThat(CommandCodec.decode(CommandCodec.encode(end))).isEqualTo(end);
    var move = new MigrateJob(T0, 1, 1, List.of("n2"), 7, 3600, "d", T0 + 60_000);
    assertThat(CommandCodec.decode(CommandCodec.encode(move))).isEqualTo(move);
    var old = new MigrateJob(T0, 1, 1, List.of("n2"), 7, 3600, "d");
    assertThat(new String(CommandCodec.encode(old), java.nio.charset.StandardCharsets.UTF_8))
        .as("a move without a recorded end is written as before")
        .doesNotContain("holdEndsMs");
  }
}
