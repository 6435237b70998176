package io.kairos.core.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.command.Command;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.state.ClusterStore;
import io.kairos.core.state.Reducer;
import io.kairos.testkit.Clusters;
import org.junit.jupiter.api.Test;

/**
 * Predicted starts on two nodes of 4 GPUs, checked by hand: what the controller shows ({@link
 * StartForecast#after}) and what the simulator measures ({@link SchedulingPass#forecast}).
 */
class StartForecastTest {
  private final ClusterStore store = new ClusterStore(Clusters.oneRack(2, 4));

  private void submit(long id, int gpus, long limitSec, long atSec) {
    var spec = new JobSpec("alice", "default", 0, GangSpec.flexible(gpus), limitSec, "");
    assertThat(
            Reducer.apply(store, new Command.SubmitJob(atSec, new Job(JobId.of(id), spec, atSec)))
                .isAccepted())
        .isTrue();
  }

  private void start(long id, long mask, long atSec) {
    var placement = Placement.of(new int[] {0}, new int[] {Long.bitCount(mask)}, new long[] {mask});
    assertThat(
            Reducer.apply(store, new Command.StartJob(atSec, JobId.of(id), placement)).isAccepted())
        .isTrue();
  }

  private long predicted(long[] bySlot, long id) {
    var pending = store.snapshot().pendingJobs();
    long[] ids = pending.ids();
    for (int slot = 0; slot < pending.size(); slot++) {
      if (ids[slot] == id) {
        return bySlot[slot];
      }
    }
    throw new AssertionError("job " + id + " is not pending");
  }

  /**
   * Job 1 (4 GPUs, limit 1,000) runs from 0. At 10, job 2 (8 GPUs) waits for it: predicted at
   * 1,000. Job 3 (2 GPUs, limit 50) starts in the pass (it ends before job 2's reservation), so it
   * gets no prediction; job 4 (4 GPUs, limit 100) fits beside job 1 once job 3 ends and ends before
   * job 2 needs every GPU: 60 (as EASY will backfill it then).
   */
  @Test
  void waitingJobsAreToldWhenTheGpusTheyNeedAreFreeBesideTheJobsAheadOfThem() {
    submit(1, 4, 1_000, 0);
    start(1, 0b1111, 0);
    submit(2, 8, 100, 5);
    submit(3, 2, 50, 6);
    submit(4, 4, 100, 7);
    var pass = new SchedulingPass(Policy.EASY);
    var in = new PassInput(store.snapshot(), 10, 0);
    var result = pass.run(in);
    assertThat(result.starts()).extracting(s -> s.job().value()).containsExactly(3L);
    long[] after = StartForecast.after(in, result, true);
    assertThat(predicted(after, 2)).isEqualTo(1_000);
    assertThat(predicted(after, 3)).isEqualTo(-1);
    assertThat(predicted(after, 4)).isEqualTo(60);
  }

  /**
   * Alice's last job ran a tenth of its limit, so job 2, running with a limit of 1,000 from 100, is
   * expected to end at 200, not 1,100: job 3, which needs every GPU, is told 200.
   */
  @Test
  void aUsersRecentShareOfTheLimitShortensTheRunsAhead() {
    submit(1, 4, 1_000, 0);
    start(1, 0b1111, 0);
    assertThat(Reducer.apply(store, new Command.FinishJob(100, JobId.of(1), 0)).isAccepted())
        .isTrue();
    submit(2, 4, 1_000, 100);
    start(2, 0b1111, 100);
    submit(3, 8, 100, 110);
    var snapshot = store.snapshot();
    assertThat(snapshot.expectedEndSec(0)).isEqualTo(200);
    long[] forecast = new SchedulingPass(Policy.EASY).forecast(new PassInput(snapshot, 120, 0));
    assertThat(predicted(forecast, 3)).isEqualTo(200);
  }

  /**
   * Without backfill (fcfs) job 3 (2 GPUs, limit 50), which would fit now, is not predicted before
   * job 2, ahead of it, which holds every GPU from 1,000 to 1,100; with backfill (easy) it is
   * predicted now, as it ends long before job 2 starts.
   */
  @Test
  void withoutBackfillNoJobIsPredictedBeforeTheOneAheadOfIt() {
    submit(1, 4, 1_000, 0);
    start(1, 0b1111, 0);
    submit(2, 8, 100, 5);
    submit(3, 2, 50, 6);
    var in = new PassInput(store.snapshot(), 10, 0);
    assertThat(predicted(new SchedulingPass(Policy.FCFS).forecast(in), 2)).isEqualTo(1_000);
    assertThat(predicted(new SchedulingPass(Policy.FCFS).forecast(in), 3)).isEqualTo(1_100);
    assertThat(predicted(new SchedulingPass(Policy.EASY).forecast(in), 3)).isEqualTo(10);
  }
}
