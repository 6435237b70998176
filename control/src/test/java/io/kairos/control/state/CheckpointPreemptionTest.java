package io.kairos.control.state;

import static io.kairos.control.state.ControlStateTest.assertRoundTrip;
import static io.kairos.control.state.ControlStateTest.imageJson;
import static io.kairos.control.state.ControlStateTest.jobOf;
import static io.kairos.control.state.StateFixtures.T0;
import static io.kairos.control.state.StateFixtures.checkpointing;
import static io.kairos.control.state.StateFixtures.job;
import static io.kairos.control.state.StateFixtures.register;
import static io.kairos.control.state.StateFixtures.start;
import static io.kairos.control.state.StateFixtures.submit;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.agent.Reconciler;
import io.kairos.control.raft.CommandCodec;
import io.kairos.control.state.ControlCommand.RecordCheckpoint;
import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.protocol.JobState;
import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.TaskKill;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Recorded checkpoints and preemption by checkpoint in the replicated state and the reconciler: the
 * policy's keep, refusals, the checkpoint signal in place of the stop until a new checkpoint (or
 * the timeout), then the stop, and what the job's message says happened. Replays and snapshots
 * reach the same state.
 */
class CheckpointPreemptionTest {
  static final CheckpointPolicy POLICY = new CheckpointPolicy("USR1", 20, 0, 2);
  static final long PREEMPT_MS = T0 + 3_000;

  final List<ControlCommand> log = new ArrayList<>();
  final ControlState state = new ControlState();

  ControlResult apply(ControlCommand c) {
    log.add(c);
    return state.apply(c);
  }

  /** n1 (8 GPUs); job 1 checkpoints (4 GPUs) and runs on n1; job 2 (8 GPUs) waits. */
  void victimRunning() {
    apply(register("n1", 8));
    apply(submit(checkpointing(4, POLICY), job(8)));
    apply(start(1, "n1", 0, 1, 2, 3));
  }

  static RecordCheckpoint checkpoint(long job, int attempt, long step, long atMs) {
    return new RecordCheckpoint(
        atMs,
        job,
        new CheckpointEntry(
            step, attempt, atMs, 1000 + step, "step-" + step + "/MANIFEST.json", 1));
  }

  List<TaskKill> kills(long nowMs) {
    var running = new TaskReport(1, 1, 0, TaskStatus.RUNNING, null, null, null, T0, null);
    return Reconciler.plan(state, new Heartbeat("n1", 1, List.of(running), 0), j -> null, nowMs)
        .kill();
  }

  @Test
  void keepsTheNewestCheckpointsAndNamesThosePruned() {
    victimRunning();
    assertThat(apply(checkpoint(1, 1, 10, T0 + 1)).ids()).isEmpty();
    assertThat(apply(checkpoint(1, 1, 20, T0 + 2)).ids()).isEmpty();
    assertThat(apply(checkpoint(1, 1, 30, T0 + 3)).ids()).containsExactly(10L);
    assertThat(apply(checkpoint(1, 1, 30, T0 + 4)).ids()).as("the same step again").isEmpty();
    var job = jobOf(state, 1);
    assertThat(job.checkpoints).extracting(CheckpointEntry::step).containsExactly(20L, 30L);
    assertThat(job.checkpoints.getLast().atMs()).isEqualTo(T0 + 4);
    assertThat(job.checkpointCount).isEqualTo(4);
  }

  @Test
  void refusesAJobWithoutCheckpointsAnotherAttemptOrNoJob() {
    victimRunning();
    assertThat(apply(checkpoint(2, 0, 1, T0)).status()).as("job 2 declares none").isEqualTo(409);
    assertThat(apply(checkpoint(1, 2, 1, T0)).status()).as("not its attempt").isEqualTo(409);
    assertThat(apply(checkpoint(9, 1, 1, T0)).status()).isEqualTo(404);
    assertThat(jobOf(state, 1).checkpoints).isEmpty();
  }

  @Test
  void aPreemptionAsksForACheckpointThenStopsOnceItArrives() {
    victimRunning();
    apply(checkpoint(1, 1, 5, T0 + 1_000));
    assertThat(kills(PREEMPT_MS)).isEmpty();
    apply(PreemptJobsTest.preempt(PREEMPT_MS, 1, 2));

    assertThat(kills(PREEMPT_MS + 1_000))
        .as("the checkpoint signal, no stop, while it waits")
        .singleElement()
        .satisfies(
            k -> {
              assertThat(k.checkpointSignal()).isEqualTo("USR1");
              assertThat(k.graceSec()).isNull();
            });
    assertThat(jobOf(state, 1).state).isEqualTo(JobState.RUNNING);

    apply(checkpoint(1, 1, 7, PREEMPT_MS + 2_000));
    assertThat(kills(PREEMPT_MS + 2_100))
        .as("the stop, with the preemption's grace")
        .singleElement()
        .satisfies(
            k -> {
              assertThat(k.checkpointSignal()).isNull();
              assertThat(k.graceSec()).isEqualTo(5L);
            });

    apply(new TaskEnded(PREEMPT_MS + 2_500, "n1", 1, 1, 1, 0, 143, ExitReason.KILLED, "preempted"));
    var v = jobOf(state, 1);
    assertThat(v.state).isEqualTo(JobState.PENDING);
    assertThat(v.message).startsWith("preempted by job 2").endsWith("after checkpoint at step 7");
    assertThat(v.checkpointAskedMs).isZero();
    assertReplays();
  }

  @Test
  void aCheckpointThatDoesNotComeInTimeIsStoppedAnyway() {
    victimRunning();
    apply(checkpoint(1, 1, 5, T0 + 1_000));
    apply(PreemptJobsTest.preempt(PREEMPT_MS, 1, 2));
    assertThat(kills(PREEMPT_MS + 19_999))
        .singleElement()
        .satisfies(k -> assertThat(k.checkpointSignal()).isEqualTo("USR1"));
    assertThat(kills(PREEMPT_MS + 20_000))
        .as("the timeout has passed: the stop")
        .singleElement()
        .satisfies(k -> assertThat(k.checkpointSignal()).isNull());

    apply(
        new TaskEnded(PREEMPT_MS + 21_000, "n1", 1, 1, 1, 0, 137, ExitReason.KILLED, "preempted"));
    var v = jobOf(state, 1);
    assertThat(v.state).isEqualTo(JobState.PENDING);
    assertThat(v.message)
        .contains("checkpoint timed out after 20s, stopped")
        .endsWith("resumes from step 5");
    assertReplays();
  }

  @Test
  void aJobWithoutCheckpointsIsStoppedAtOnce() {
    apply(register("n1", 8));
    apply(submit(job(4), job(8)));
    apply(start(1, "n1", 0, 1, 2, 3));
    apply(PreemptJobsTest.preempt(PREEMPT_MS, 1, 2));
    assertThat(kills(PREEMPT_MS + 1))
        .singleElement()
        .satisfies(k -> assertThat(k.checkpointSignal()).isNull());
  }

  @Test
  void theNextAttemptIsToldTheNewestStep() {
    victimRunning();
    apply(checkpoint(1, 1, 42, T0 + 1_000));
    var launch =
        Reconciler.plan(state, new Heartbeat("n1", 1, List.of(), 0), j -> null, T0).launch();
    assertThat(launch)
        .singleElement()
        .satisfies(
            a -> {
              assertThat(a.checkpoint().restoreStep()).isEqualTo(42L);
              assertThat(a.checkpoint().signal()).isEqualTo("USR1");
              assertThat(a.checkpoint().keep()).isEqualTo(2);
            });
  }

  void assertReplays() {
    var replayed = new ControlState();
    for (ControlCommand c : log) {
      replayed.apply(CommandCodec.decode(CommandCodec.encode(c)));
    }
    assertThat(imageJson(replayed)).isEqualTo(imageJson(state));
    assertRoundTrip(state, "checkpoints");
  }
}
