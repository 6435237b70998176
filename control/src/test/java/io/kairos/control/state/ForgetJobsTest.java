package io.kairos.control.state;

import static io.kairos.control.state.StateFixtures.T0;
import static io.kairos.control.state.StateFixtures.after;
import static io.kairos.control.state.StateFixtures.cancel;
import static io.kairos.control.state.StateFixtures.register;
import static io.kairos.control.state.StateFixtures.restartable;
import static io.kairos.control.state.StateFixtures.start;
import static io.kairos.control.state.StateFixtures.submit;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.raft.CommandCodec;
import io.kairos.control.state.ControlCommand.ForgetJobs;
import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.protocol.JobState;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Ended jobs leave the replicated state only when named, ended, free of GPUs and unwatched. */
class ForgetJobsTest {

  static ControlState state(ControlCommand... commands) {
    var s = new ControlState();
    for (ControlCommand c : commands) {
      assertThat(s.apply(c).status()).as("%s", c).isLessThan(300);
    }
    return s;
  }

  @Test
  void forgetsOnlyEndedJobsThatHoldNoGpusAndHandsThemOver() {
    var s =
        state(
            register("n1", 8),
            submit(1, 1, 1),
            start(1, "n1", 0),
            cancel(3)); // 1 running, 2 pending, 3 cancelled
    s.takeForgotten();
    var r = s.apply(new ForgetJobs(T0 + 10_000, List.of(1L, 2L, 3L, 99L)));
    assertThat(r.status()).isEqualTo(200);
    assertThat(s.job(3)).isEmpty();
    assertThat(s.job(1)).isPresent();
    assertThat(s.job(2)).isPresent();
    assertThat(s.takeForgotten()).extracting(j -> j.id).containsExactly(3L);
    assertThat(s.takeForgotten()).isEmpty();
    assertThat(s.endedWeight()).isZero();
    assertThat(s.retiredJobs()).isEmpty();
  }

  @Test
  void keepsAnEndedJobThatAWaitingJobsDependencyNames() {
    // Job 3 waits for 1 (cancelled) and 2 (pending): 1 stays while 3 waits.
    var s = state(register("n1", 8), submit(1, 1), cancel(1), submit(after("afterany:1:2")));
    assertThat(s.isWaitingOnDependency(3)).isTrue();
    s.apply(new ForgetJobs(T0 + 10_000, List.of(1L)));
    assertThat(s.job(1)).isPresent();
    assertThat(s.takeForgotten()).isEmpty();
    s.apply(cancel(2));
    assertThat(s.isWaitingOnDependency(3)).isFalse();
    s.apply(new ForgetJobs(T0 + 20_000, List.of(1L, 2L)));
    assertThat(s.job(1)).isEmpty();
    assertThat(s.job(2)).isEmpty();
    assertThat(s.takeForgotten()).extracting(j -> j.id).containsExactly(1L, 2L);
  }

  @Test
  void aRequeuedAttemptIsKeptInTheJobAndSurvivesASnapshot() throws Exception {
    var s =
        state(
            register("n1", 8),
            register("n2", 8),
            submit(restartable(2, 0, 2)),
            start(1, "n1", 0, 1),
            new TaskEnded(T0 + 5_000, "n1", 1, 1, 1, 0, 3, null, null));
    var j = s.job(1).orElseThrow();
    assertThat(j.state).isEqualTo(JobState.PENDING);
    assertThat(j.pastAttempts).hasSize(1);
    AttemptRecord a = j.pastAttempts.getFirst();
    assertThat(a.attempt()).isEqualTo(1);
    assertThat(a.startMs()).isEqualTo(T0 + 1000);
    assertThat(a.endMs()).isEqualTo(T0 + 5_000);
    assertThat(a.exitCode()).isEqualTo(3);
    assertThat(a.placement()).extracting(t -> t.node()).containsExactly("n1");
    assertThat(a.reason()).contains("restart 1 of 2");

    var out = new ByteArrayOutputStream();
    CommandCodec.writeImage(s.image(), out);
    var back = ControlState.of(CommandCodec.readImage(new ByteArrayInputStream(out.toByteArray())));
    assertThat(back.job(1).orElseThrow().pastAttempts).containsExactly(a);
  }

  @Test
  void aForgetEntryRoundTripsThroughTheLogCodec() {
    var c = new ForgetJobs(T0, List.of(3L, 4L));
    assertThat(CommandCodec.decode(CommandCodec.encode(c))).isEqualTo(c);
  }
}
