package io.kairos.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kairos.core.model.JobId;
import io.kairos.core.model.Placement;
import io.kairos.core.sched.Decision;
import io.kairos.core.sched.PassResult;
import io.kairos.core.sched.Policy;
import io.kairos.testkit.SchedulerHarness.JobState;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The harness itself: ids, clock, runtimes, arrivals, event loop, failure messages. */
class SchedulerHarnessTest {

  @Test
  void idsAreDenseFromOneInSubmissionOrder() {
    var h = SchedulerHarness.of(Clusters.oneRack(2, 1));

    assertThat(h.submit(Jobs.gpus(1))).isEqualTo(JobId.of(1));
    assertThat(h.submitAt(5, Jobs.gpus(1))).isEqualTo(JobId.of(2));
    assertThat(h.submitAt(5, Jobs.gpus(2))).isEqualTo(JobId.of(3));
  }

  @Test
  void runPassDoesNotCommitAndCommitStarts() {
    var h = SchedulerHarness.of(Clusters.oneRack(2, 1));
    var id = h.submit(Jobs.gpus(2).limit(10));

    var pass = h.runPass();
    assertThat(h.stateOf(id)).isEqualTo(JobState.PENDING);
    assertThat(h.store().freeGpus()).isEqualTo(2);

    h.commit(pass);
    assertThat(h.stateOf(id)).isEqualTo(JobState.RUNNING);
    assertThat(h.startOf(id)).hasValue(0);
    assertThat(h.store().freeGpus()).isZero();
  }

  @Test
  void advanceFinishesJobsWhoseRuntimeElapsed() {
    var h = SchedulerHarness.of(Clusters.oneRack(2, 1));
    var shortJob = h.submit(Jobs.gpus(1).limit(100).runtime(30));
    var longJob = h.submit(Jobs.gpus(1).limit(100));
    h.step();

    h.advance(29);
    assertThat(h.stateOf(shortJob)).isEqualTo(JobState.RUNNING);
    h.advance(1);
    assertThat(h.stateOf(shortJob)).isEqualTo(JobState.FINISHED);
    assertThat(h.job(shortJob).finishSec()).hasValue(30);
    h.advanceTo(100);
    assertThat(h.stateOf(longJob)).isEqualTo(JobState.FINISHED);
    assertThat(h.nowSec()).isEqualTo(100);
  }

  @Test
  void timeLimitRuntimeModelIgnoresExplicitRuntimes() {
    var h = SchedulerHarness.of(Clusters.oneRack(1, 1)).runtimes(RuntimeModel.TIME_LIMIT);
    var id = h.submit(Jobs.gpus(1).limit(100).runtime(5));

    assertThat(h.job(id).runtimeSec()).isEqualTo(100);
  }

  @Test
  void arrivalsJoinTheStoreAtTheirTime() {
    var h = SchedulerHarness.of(Clusters.oneRack(1, 1));
    var later = h.submitAt(50, Jobs.gpus(1));

    assertThat(h.stateOf(later)).isEqualTo(JobState.ARRIVING);
    assertThat(h.store().pendingCount()).isZero();
    h.advanceTo(50);
    assertThat(h.stateOf(later)).isEqualTo(JobState.PENDING);
  }

  @Test
  void arrivalsOutOfOrderOrInThePastAreRejected() {
    var h = SchedulerHarness.of(Clusters.oneRack(1, 1));
    h.submitAt(50, Jobs.gpus(1));

    assertThatThrownBy(() -> h.submitAt(40, Jobs.gpus(1)))
        .isInstanceOf(IllegalArgumentException.class);
    h.advanceTo(60);
    assertThatThrownBy(() -> h.submitAt(59, Jobs.gpus(1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void runUntilIdleRunsTheEventLoop() {
    var h = SchedulerHarness.of(Clusters.oneRack(1, 1)).policy(Policy.FCFS);
    var a = h.submit(Jobs.gpus(1).limit(10));
    var b = h.submit(Jobs.gpus(1).limit(20).runtime(5));
    var c = h.submitAt(7, Jobs.gpus(1).limit(3));

    h.runUntilIdle();

    assertThat(h.startOf(a)).hasValue(0);
    assertThat(h.startOf(b)).hasValue(10);
    assertThat(h.startOf(c)).hasValue(15);
    assertThat(h.nowSec()).isEqualTo(18);
    assertThat(h.unfinished()).isEmpty();
    assertThat(h.startTimes())
        .containsExactly(
            java.util.Map.entry(a, 0L), java.util.Map.entry(b, 10L), java.util.Map.entry(c, 15L));
  }

  @Test
  void runUntilStopsAtTheGivenTime() {
    var h = SchedulerHarness.of(Clusters.oneRack(1, 1));
    h.submit(Jobs.gpus(1).limit(10));
    var second = h.submit(Jobs.gpus(1).limit(10));

    h.runUntil(5);
    assertThat(h.nowSec()).isEqualTo(5);
    assertThat(h.stateOf(second)).isEqualTo(JobState.PENDING);
    h.runUntilStarted(second);
    assertThat(h.startOf(second)).hasValue(10);
  }

  @Test
  void reservationsOfCommittedPassesAreRecorded() {
    var h = SchedulerHarness.of(Clusters.oneRack(2, 1)).policy(Policy.EASY);
    h.submit(Jobs.gpus(1).limit(100));
    var wide = h.submit(Jobs.gpus(2).limit(10));

    h.step();
    h.advance(50);
    h.step();

    assertThat(h.job(wide).firstReservation().startSec()).isEqualTo(100);
    assertThat(h.job(wide).firstReservedAtSec()).isZero();
    assertThat(h.job(wide).reservationCount()).isEqualTo(2);
  }

  @Test
  void cancelRemovesPendingAndRunningJobs() {
    var h = SchedulerHarness.of(Clusters.oneRack(1, 1));
    var running = h.submit(Jobs.gpus(1).limit(10));
    var pending = h.submit(Jobs.gpus(1).limit(10));
    h.step();

    h.cancel(pending);
    h.cancel(running);

    assertThat(h.stateOf(pending)).isEqualTo(JobState.CANCELLED);
    assertThat(h.stateOf(running)).isEqualTo(JobState.CANCELLED);
    assertThat(h.store().freeGpus()).isEqualTo(1);
    assertThat(h.nextEventSec()).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void refusedCommitFailsWithSeedPolicyAndTime() {
    var h = SchedulerHarness.of(Clusters.oneRack(1, 2)).seed(99).policy(Policy.SJF);
    var id = h.submit(Jobs.gpus(1));
    var bogus =
        new PassResult(
            List.of(
                new Decision.Start(
                    id, Placement.of(new int[] {0}, new int[] {1}, new long[] {0b11}))),
            List.of(),
            h.runPass().diagnosis());

    assertThatThrownBy(() -> h.commit(bogus))
        .isInstanceOf(AssertionError.class)
        .hasMessageStartingWith("seed=99 policy=sjf t=0");
  }

  @Test
  void occupyHoldsExactlyTheGivenGpus() {
    var h = SchedulerHarness.of(Clusters.oneRack(1, 8));

    h.occupy(0, 0b1010_0001, 30);

    assertThat(h.store().freeMask(0)).isEqualTo(0b0101_1110L);
    h.advance(30);
    assertThat(h.store().freeMask(0)).isEqualTo(0xFFL);
  }

  @Test
  void builderDefaultsAreValidAndBoring() {
    var spec = Jobs.gpus(16).perNode(8).build();

    assertThat(spec.gang()).isEqualTo(io.kairos.core.model.GangSpec.perNode(16, 8));
    assertThat(spec.timeLimitSec()).isEqualTo(Jobs.DEFAULT_LIMIT_SEC);
    assertThat(spec.priority()).isZero();
    assertThat(spec.gpuModel()).isEmpty();
    assertThat(Jobs.tasks(3, 2).priority(4).limit(9).build())
        .satisfies(s -> assertThat(s.gang().totalGpus()).isEqualTo(6))
        .satisfies(s -> assertThat(s.priority()).isEqualTo(4))
        .satisfies(s -> assertThat(s.timeLimitSec()).isEqualTo(9));
  }
}
