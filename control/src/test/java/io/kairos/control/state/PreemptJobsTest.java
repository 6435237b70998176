package io.kairos.control.state;

import static io.kairos.control.state.ControlStateTest.assertRoundTrip;
import static io.kairos.control.state.ControlStateTest.freeMasks;
import static io.kairos.control.state.ControlStateTest.imageJson;
import static io.kairos.control.state.ControlStateTest.index;
import static io.kairos.control.state.ControlStateTest.jobOf;
import static io.kairos.control.state.StateFixtures.T0;
import static io.kairos.control.state.StateFixtures.cancel;
import static io.kairos.control.state.StateFixtures.gang;
import static io.kairos.control.state.StateFixtures.job;
import static io.kairos.control.state.StateFixtures.register;
import static io.kairos.control.state.StateFixtures.start;
import static io.kairos.control.state.StateFixtures.startTasks;
import static io.kairos.control.state.StateFixtures.submit;
import static io.kairos.control.state.StateFixtures.task;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.control.agent.Reconciler;
import io.kairos.control.raft.CommandCodec;
import io.kairos.control.state.ControlCommand.PreemptJobs;
import io.kairos.control.state.ControlCommand.Preemption;
import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.core.model.JobId;
import io.kairos.protocol.JobState;
import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link PreemptJobs} as a table (given, when, then): the victim is told to stop with the command's
 * grace, stays RUNNING holding its GPUs until every task has stopped, then is PENDING again at once
 * (no backoff, no restart used) with the preemption in its history; stale decisions change nothing.
 * Then replay and snapshot determinism over the same sequences.
 */
class PreemptJobsTest {
  static final long PREEMPT_MS = T0 + 3_000;

  record Scenario(
      String name,
      List<ControlCommand> given,
      ControlCommand when,
      List<Long> ids,
      boolean unchanged,
      Consumer<ControlState> then) {
    @Override
    public String toString() {
      return name;
    }
  }

  static PreemptJobs preempt(long victim, long preemptor) {
    return preempt(PREEMPT_MS, victim, preemptor);
  }

  static PreemptJobs preempt(long atMs, long victim, long preemptor) {
    return new PreemptJobs(
        atMs,
        5,
        List.of(
            new Preemption(
                victim, preemptor, "RECLAIM", "reclaim: queue a borrows 4 of b's gpu:H100")));
  }

  static TaskEnded killed(String node, long epoch, long job, int attempt, int task, long atMs) {
    return new TaskEnded(
        atMs, node, epoch, job, attempt, task, 143, ExitReason.KILLED, "preempted");
  }

  /** n1, n2 (8 GPUs each, epochs 1, 2); job 1 (4 GPUs) runs on n1; job 2 (8 GPUs) waits. */
  static List<ControlCommand> victimRunning() {
    return List.of(
        register("n1", 8), register("n2", 8), submit(job(4), job(8)), start(1, "n1", 0, 1, 2, 3));
  }

  static List<ControlCommand> plus(List<ControlCommand> first, ControlCommand... more) {
    var all = new ArrayList<>(first);
    all.addAll(List.of(more));
    return all;
  }

  static Scenario ok(
      String name,
      List<ControlCommand> given,
      ControlCommand when,
      List<Long> ids,
      Consumer<ControlState> then) {
    return new Scenario(name, given, when, ids, false, then);
  }

  static Scenario stale(String name, List<ControlCommand> given, ControlCommand when) {
    return new Scenario(name, given, when, List.of(), true, s -> {});
  }

  static Stream<Scenario> preemptions() {
    return Stream.of(
        ok(
            "a preempted job keeps running and its GPUs until its tasks stop",
            victimRunning(),
            preempt(1, 2),
            List.of(1L),
            s -> {
              var v = jobOf(s, 1);
              assertThat(v.state).isEqualTo(JobState.RUNNING);
              assertThat(v.requeueing).isTrue();
              assertThat(v.isBeingPreempted()).isTrue();
              assertThat(v.preemptedBy).isEqualTo(2);
              assertThat(v.stopGraceSec).isEqualTo(5);
              assertThat(v.message)
                  .isEqualTo("preempted by job 2 (reclaim: queue a borrows 4 of b's gpu:H100)");
              assertThat(v.preemptedAtSec).containsExactly(PREEMPT_MS / 1000);
              assertThat(s.store().freeMask(index(s, "n1"))).isEqualTo(0xF0L);
            }),
        ok(
            "once its task stops it is pending again at once, its restarts untouched",
            plus(victimRunning(), preempt(1, 2)),
            killed("n1", 1, 1, 1, 0, T0 + 4_000),
            List.of(),
            s -> {
              var v = jobOf(s, 1);
              assertThat(v.state).isEqualTo(JobState.PENDING);
              assertThat(v.requeueing).isFalse();
              assertThat(v.requeues).isEqualTo(1);
              assertThat(v.restarts).isZero();
              assertThat(v.eligibleMs).as("no backoff").isEqualTo(PREEMPT_MS);
              assertThat(v.preemptedBy).isZero();
              assertThat(v.lastPreemptedBy).isEqualTo(2);
              assertThat(v.preemptedAtSec).containsExactly(PREEMPT_MS / 1000);
              assertThat(v.avoidNodes).as("the node did nothing wrong").isEmpty();
              assertThat(s.store().pending(JobId.of(1))).isPresent();
              assertThat(s.store().freeMask(index(s, "n1"))).isEqualTo(0xFFL);
            }),
        ok(
            "a gang is requeued only when its last task has stopped",
            List.of(
                register("n1", 8),
                register("n2", 8),
                submit(gang(8, 4)),
                submit(job(8)),
                startTasks(1, task(0, "n1", 0, 1, 2, 3), task(1, "n2", 0, 1, 2, 3)),
                preempt(1, 2)),
            killed("n1", 1, 1, 1, 0, T0 + 4_000),
            List.of(),
            s -> {
              assertThat(jobOf(s, 1).state).isEqualTo(JobState.RUNNING);
              assertThat(jobOf(s, 1).isBeingPreempted()).isTrue();
              assertThat(s.store().freeMask(index(s, "n2"))).isEqualTo(0xF0L);
            }),
        ok(
            "a second preemption adds to the history",
            plus(
                victimRunning(),
                preempt(1, 2),
                killed("n1", 1, 1, 1, 0, T0 + 4_000),
                new ControlCommand.StartJobs(
                    T0 + 10_000,
                    List.of(new ControlCommand.Start(1, List.of(task(0, "n2", 0, 1, 2, 3)))))),
            preempt(T0 + 70_000, 1, 2),
            List.of(1L),
            s -> {
              assertThat(jobOf(s, 1).attempt).isEqualTo(2);
              assertThat(jobOf(s, 1).preemptedAtSec)
                  .containsExactly(PREEMPT_MS / 1000, (T0 + 70_000) / 1000);
            }),
        ok(
            "a job cancelled while it is being preempted ends cancelled",
            plus(victimRunning(), preempt(1, 2)),
            cancel(1),
            List.of(),
            s -> {
              assertThat(jobOf(s, 1).state).isEqualTo(JobState.CANCELLED);
              assertThat(jobOf(s, 1).preemptedBy).isZero();
              assertThat(jobOf(s, 1).releasing).isTrue();
            }),
        stale(
            "a victim that is not running is left alone",
            List.of(register("n1", 8), submit(job(4), job(8))),
            preempt(1, 2)),
        stale(
            "a victim already being stopped is left alone",
            plus(victimRunning(), preempt(1, 2)),
            preempt(T0 + 3_500, 1, 2)),
        stale(
            "a victim requeueing after its node was lost is left alone",
            plus(victimRunning(), new ControlCommand.DrainNode(T0 + 2_000, "n1", "bad", true)),
            preempt(1, 2)),
        stale(
            "a preemptor that no longer waits preempts nothing",
            plus(victimRunning(), cancel(2)),
            preempt(1, 2)),
        stale("an unknown victim changes nothing", victimRunning(), preempt(9, 2)),
        stale("a job does not preempt itself", victimRunning(), preempt(1, 1)),
        stale(
            "a finished victim is left alone",
            plus(victimRunning(), new TaskEnded(T0 + 2_000, "n1", 1, 1, 1, 0, 0, null, null)),
            preempt(1, 2)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("preemptions")
  void preemption(Scenario sc) {
    var state = new ControlState();
    sc.given().forEach(state::apply);
    assertThat(StateInvariants.violations(state)).as("invariants before").isEmpty();
    JsonNode before = imageJson(state);
    var masks = freeMasks(state);

    ControlResult result = state.apply(sc.when());

    assertThat(result.status()).isEqualTo(200);
    assertThat(result.ids()).isEqualTo(sc.ids());
    if (sc.unchanged()) {
      assertThat(imageJson(state)).as("records").isEqualTo(before);
      assertThat(freeMasks(state)).as("store").isEqualTo(masks);
    }
    sc.then().accept(state);
    assertThat(StateInvariants.violations(state)).as("invariants after").isEmpty();
  }

  @Test
  void everySequenceReplaysAndRestoresToTheSameState() {
    preemptions()
        .forEach(
            sc -> {
              var log = new ArrayList<>(sc.given());
              log.add(sc.when());
              // Through the codec, as the log stores them.
              var live = new ControlState();
              var replayed = new ControlState();
              for (ControlCommand c : log) {
                live.apply(c);
                replayed.apply(CommandCodec.decode(CommandCodec.encode(c)));
              }
              assertThat(imageJson(replayed))
                  .as("replay of %s", sc.name())
                  .isEqualTo(imageJson(live));
              assertRoundTrip(live, sc.name());
            });
  }

  @Test
  void theKillOfAPreemptedTaskCarriesThePreemptionGrace() {
    var state = new ControlState();
    victimRunning().forEach(state::apply);
    var running = new TaskReport(1, 1, 0, TaskStatus.RUNNING, null, null, null, T0, null);
    var beat = new Heartbeat("n1", 1, List.of(running), 0);
    assertThat(Reconciler.plan(state, beat).kill()).isEmpty();

    state.apply(preempt(1, 2));

    var kill = Reconciler.plan(state, beat).kill();
    assertThat(kill)
        .singleElement()
        .satisfies(
            k -> {
              assertThat(k.graceSec()).isEqualTo(5L);
              assertThat(k.reason()).contains("preempted by job 2");
            });
  }

  @Test
  void aCancelKillUsesTheJobsOwnGrace() {
    var state = new ControlState();
    victimRunning().forEach(state::apply);
    state.apply(cancel(1));
    var running = new TaskReport(1, 1, 0, TaskStatus.RUNNING, null, null, null, T0, null);
    var kill = Reconciler.plan(state, new Heartbeat("n1", 1, List.of(running), 0)).kill();
    assertThat(kill).singleElement().satisfies(k -> assertThat(k.graceSec()).isNull());
  }
}
