package io.kairos.control.state;

import static io.kairos.control.state.StateFixtures.T0;
import static io.kairos.control.state.StateFixtures.gang;
import static io.kairos.control.state.StateFixtures.register;
import static io.kairos.control.state.StateFixtures.startTasks;
import static io.kairos.control.state.StateFixtures.submit;
import static io.kairos.control.state.StateFixtures.task;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.control.raft.CommandCodec;
import io.kairos.control.state.ControlCommand.ResizeJob;
import io.kairos.control.state.ControlCommand.TaskEnded;
import io.kairos.protocol.JobState;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.agent.ExitReason;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Resizes of an elastic job in the replicated state: a grow starts new ranks on new nodes, a shrink
 * marks ranks leaving and lets their GPUs go only once each has ended (an end that is no failure of
 * the job), each resize is in the job's history, and stale or out-of-range resizes change nothing.
 */
class ElasticStateTest {
  private ControlState s;

  /** 16 to 32 GPUs, 8 per node: 2 to 4 nodes. */
  static JobRequest elastic(CheckpointPolicy checkpoint) {
    JobRequest g = gang(16, 8);
    return new JobRequest(
        "elastic",
        g.command(),
        g.env(),
        g.workdir(),
        g.gpus(),
        g.gpusPerNode(),
        g.cpus(),
        g.memoryMb(),
        g.timeLimitSec(),
        g.queue(),
        g.priority(),
        g.gpuModel(),
        g.user(),
        g.killSignal(),
        g.graceSec(),
        g.warnSignal(),
        g.warnBeforeSec(),
        g.checkpointDir(),
        g.maxRestarts(),
        g.excludeNodes(),
        g.array(),
        g.dependency(),
        g.output(),
        g.error(),
        g.account(),
        g.priorityClass(),
        g.runAs(),
        null,
        null,
        0,
        checkpoint,
        32);
  }

  @BeforeEach
  void twoNodesRunning() {
    s = new ControlState();
    for (String n : List.of("n1", "n2", "n3", "n4")) {
      s.apply(register(n, 8));
    }
    ok(s.apply(submit(elastic(null))));
    ok(s.apply(startTasks(1, all8(0, "n1"), all8(1, "n2"))));
    assertThat(s.job(1).orElseThrow().state).isEqualTo(JobState.RUNNING);
  }

  @Test
  void aGrowStartsTheNextRanksAndHoldsTheirGpus() {
    ok(s.apply(grow(2, all8(2, "n3"))));
    JobRecord job = s.job(1).orElseThrow();
    assertThat(job.placement).extracting(TaskPlacement::node).containsExactly("n1", "n2", "n3");
    assertThat(job.resizes).singleElement().satisfies(e -> assertThat(e.toNodes()).isEqualTo(3));
    assertThat(s.store().freeMask(index("n3"))).isZero();
    assertThat(StateInvariants.violations(s)).isEmpty();
    ControlStateTest.assertRoundTrip(s, "grown");
  }

  @Test
  void aShrinkLetsTheNodeGoOnlyWhenItsTaskHasEnded() {
    ok(s.apply(grow(2, all8(2, "n3"))));
    ok(s.apply(new ResizeJob(T0 + 20, 1, 1, 3, List.of(), List.of(2), 7)));
    JobRecord job = s.job(1).orElseThrow();
    assertThat(job.leaving).containsExactly(2);
    assertThat(s.store().freeMask(index("n3"))).as("n3's task may still run").isZero();
    assertThat(StateInvariants.violations(s)).isEmpty();
    ControlStateTest.assertRoundTrip(s, "shrinking");

    long epoch = s.node("n3").orElseThrow().epoch;
    ok(
        s.apply(
            new TaskEnded(
                T0 + 30, "n3", epoch, 1, 1, 2, 143, ExitReason.KILLED, "the job shrinks")));
    assertThat(job.state).as("leaving is no failure").isEqualTo(JobState.RUNNING);
    assertThat(job.leaving).isEmpty();
    assertThat(job.left).containsExactly(2);
    assertThat(s.store().freeMask(index("n3"))).isEqualTo(0xFFL);
    assertThat(ElasticResizes.liveTasks(job))
        .extracting(TaskPlacement::node)
        .containsExactly("n1", "n2");
    assertThat(job.resizes).extracting(ResizeEntry::toNodes).containsExactly(3, 2);
    assertThat(StateInvariants.violations(s)).isEmpty();
    ControlStateTest.assertRoundTrip(s, "shrunk");

    // It may grow again: the next rank is 3.
    ok(s.apply(grow(2, all8(3, "n4"))));
    assertThat(ElasticResizes.liveTasks(job))
        .extracting(TaskPlacement::task)
        .containsExactly(0, 1, 3);
  }

  @Test
  void aShrinkOfACheckpointingJobAsksForACheckpointFirst() {
    var state = new ControlState();
    state.apply(register("n1", 8));
    state.apply(register("n2", 8));
    state.apply(register("n3", 8));
    ok(state.apply(submit(elastic(new CheckpointPolicy("USR1", 60, 0, 3)))));
    ok(state.apply(startTasks(1, all8(0, "n1"), all8(1, "n2"), all8(2, "n3"))));
    ok(state.apply(new ResizeJob(T0 + 20, 1, 1, 3, List.of(), List.of(2), 0)));
    JobRecord job = state.job(1).orElseThrow();
    assertThat(ElasticResizes.awaitsCheckpoint(job, T0 + 30)).isTrue();
    assertThat(ElasticResizes.awaitsCheckpoint(job, T0 + 20 + 61_000)).as("timed out").isFalse();
  }

  @Test
  void staleOrOutOfRangeResizesChangeNothing() {
    // The wrong size before, the wrong attempt, below the minimum, past the maximum, a rank that
    // is not next, a node the job already has, the first rank leaving.
    for (ResizeJob bad :
        List.of(
            new ResizeJob(T0 + 20, 1, 1, 3, List.of(all8(2, "n3")), List.of(), 0),
            new ResizeJob(T0 + 20, 1, 2, 2, List.of(all8(2, "n3")), List.of(), 0),
            new ResizeJob(T0 + 20, 1, 1, 2, List.of(), List.of(1), 0),
            new ResizeJob(
                T0 + 20,
                1,
                1,
                2,
                List.of(all8(2, "n3"), all8(3, "n4"), all8(4, "n5")),
                List.of(),
                0),
            new ResizeJob(T0 + 20, 1, 1, 2, List.of(all8(5, "n3")), List.of(), 0),
            new ResizeJob(T0 + 20, 1, 1, 2, List.of(all8(2, "n2")), List.of(), 0))) {
      assertThat(s.apply(bad).status()).as("%s", bad).isEqualTo(409);
      assertThat(s.job(1).orElseThrow().placement).hasSize(2);
    }
    ok(s.apply(grow(2, all8(2, "n3"))));
    assertThat(s.apply(new ResizeJob(T0 + 20, 1, 1, 3, List.of(), List.of(0), 0)).status())
        .as("the first rank hosts the rendezvous")
        .isEqualTo(409);
    assertThat(StateInvariants.violations(s)).isEmpty();
  }

  @Test
  void aGrowBelowTheFirstRanksNodeKeepsThatNodeTheAnchorAlsoAfterARebuild() {
    var t = new ControlState();
    for (String n : List.of("n1", "n2", "n3", "n4")) {
      t.apply(register(n, 8));
    }
    ok(t.apply(submit(elastic(null))));
    ok(t.apply(startTasks(1, all8(0, "n2"), all8(1, "n3"))));
    ok(t.apply(new ResizeJob(T0 + 10, 1, 1, 2, List.of(all8(2, "n1")), List.of(), 0)));
    int n2 = t.store().cluster().indexOf("n2").orElseThrow();
    var running = t.store().running(io.kairos.core.model.JobId.of(1)).orElseThrow();
    assertThat(running.placement().totalTasks()).isEqualTo(3);
    assertThat(running.anchorNode()).as("rank 0's node, not the lowest").isEqualTo(n2);

    var rebuilt = ControlState.of(t.image());
    assertThat(rebuilt.store().running(io.kairos.core.model.JobId.of(1)).orElseThrow().anchorNode())
        .as("named again when the store is rebuilt from the records")
        .isEqualTo(n2);
    // Rank 0's node may not leave; the lowest node, which the job grew onto, may.
    assertThat(rebuilt.apply(new ResizeJob(T0 + 20, 1, 1, 3, List.of(), List.of(0), 0)).status())
        .isEqualTo(409);
    ok(rebuilt.apply(new ResizeJob(T0 + 20, 1, 1, 3, List.of(), List.of(2), 0)));
    assertThat(StateInvariants.violations(rebuilt)).isEmpty();
  }

  @Test
  void aJobMidShrinkIsNotResizableUntilItsLeavingRanksHaveEnded() {
    ok(s.apply(grow(2, all8(2, "n3"))));
    JobRecord job = s.job(1).orElseThrow();
    assertThat(ElasticResizes.resizable(job)).isTrue();
    ok(s.apply(new ResizeJob(T0 + 20, 1, 1, 3, List.of(), List.of(2), 7)));
    assertThat(ElasticResizes.resizable(job)).as("shrink under way").isFalse();
    assertThat(s.apply(new ResizeJob(T0 + 21, 1, 1, 3, List.of(), List.of(2), 7)).status())
        .isEqualTo(409);
    long epoch = s.node("n3").orElseThrow().epoch;
    ok(
        s.apply(
            new TaskEnded(
                T0 + 30, "n3", epoch, 1, 1, 2, 143, ExitReason.KILLED, "the job shrinks")));
    assertThat(ElasticResizes.resizable(job)).as("its leaving rank ended").isTrue();
  }

  @Test
  void theResizeCommandRoundTripsThroughTheLogCodec() {
    var c = new ResizeJob(T0 + 20, 1, 1, 2, List.of(all8(2, "n3")), List.of(), 0);
    assertThat(CommandCodec.decode(CommandCodec.encode(c))).isEqualTo(c);
    var shrink = new ResizeJob(T0 + 20, 1, 1, 3, List.of(), List.of(2), 7);
    assertThat(CommandCodec.decode(CommandCodec.encode(shrink))).isEqualTo(shrink);
  }

  private static ResizeJob grow(int from, TaskPlacement... add) {
    return new ResizeJob(T0 + 10, 1, 1, from, List.of(add), List.of(), 0);
  }

  private static TaskPlacement all8(int rank, String node) {
    return task(rank, node, 0, 1, 2, 3, 4, 5, 6, 7);
  }

  private int index(String node) {
    return s.store().cluster().indexOf(node).orElseThrow();
  }

  private static void ok(ControlResult r) {
    assertThat(r.status()).as("%s", r).isEqualTo(200);
  }
}
