package io.kairos.core.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.command.Command;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.sched.order.PassOrder;
import io.kairos.core.state.ClusterStore;
import io.kairos.core.state.Reducer;
import io.kairos.testkit.Clusters;
import org.junit.jupiter.api.Test;

/**
 * {@code kairos-predicted}: the expansion factor with the user's expected run time (limit times the
 * share of their limits their last finished jobs ran) in place of the limit; reservations keep to
 * the limits. One node of one GPU.
 */
class KairosPredictedTest {
  private final ClusterStore store = new ClusterStore(Clusters.oneRack(1, 1));

  private void submit(long id, String user, long limitSec, long atSec) {
    var spec = new JobSpec(user, "default", 0, GangSpec.flexible(1), limitSec, "");
    assertThat(
            Reducer.apply(store, new Command.SubmitJob(atSec, new Job(JobId.of(id), spec, atSec)))
                .isAccepted())
        .isTrue();
  }

  private void start(long id, long atSec) {
    var placement = Placement.of(new int[] {0}, new int[] {1}, new long[] {1});
    assertThat(
            Reducer.apply(store, new Command.StartJob(atSec, JobId.of(id), placement)).isAccepted())
        .isTrue();
  }

  private void finish(long id, long atSec) {
    assertThat(Reducer.apply(store, new Command.FinishJob(atSec, JobId.of(id), 0)).isAccepted())
        .isTrue();
  }

  private static long started(PassResult result) {
    assertThat(result.starts()).hasSize(1);
    return result.starts().getFirst().job().value();
  }

  /**
   * Alice's job 1 (limit 1,000) ran 100 s, a tenth of its limit. Bob's job 2 holds the GPU from 100
   * to 1,100. Bob's job 3 (limit 1,000) waits from 200, Alice's job 4 (limit 1,000) from 300. At
   * 1,100: by limits job 3's factor is (900 + 1000) / 1000 = 1.9 and job 4's (800 + 1000) / 1000 =
   * 1.8, so {@code kairos} starts job 3; by expected runs job 4's is (800 + 100) / 100 = 9 (Bob's
   * job 2 ran its whole limit: job 3 stays at 1.9), so {@code kairos-predicted} starts job 4. The
   * other is reserved at the started job's limit, 2,100, not at its expected end.
   */
  @Test
  void aUserWhoseJobsEndEarlyRisesFaster() {
    submit(1, "alice", 1_000, 0);
    start(1, 0);
    finish(1, 100);
    submit(2, "bob", 1_000, 100);
    start(2, 100);
    submit(3, "bob", 1_000, 200);
    submit(4, "alice", 1_000, 300);
    finish(2, 1_100);
    var in = new PassInput(store.snapshot(), 1_100, 0);
    assertThat(in.snapshot().expectedRunSec(1)).isEqualTo(100);

    var byLimit = new SchedulingPass(Policy.KAIROS).run(in);
    assertThat(started(byLimit)).isEqualTo(3);
    var predicted = new SchedulingPass(Policy.KAIROS_PREDICTED).run(in);
    assertThat(started(predicted)).isEqualTo(4);
    assertThat(predicted.reservations())
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.job().value()).isEqualTo(3);
              assertThat(r.startSec()).isEqualTo(2_100);
            });
  }

  /** With no finished job of any user, the expected run is the limit: the same order as kairos. */
  @Test
  void withoutHistoryItOrdersAsKairos() {
    submit(1, "bob", 1_000, 0);
    start(1, 0);
    submit(2, "bob", 5_000, 10);
    submit(3, "alice", 100, 500);
    var snapshot = store.snapshot();
    int[] byLimit = PassOrder.sort(snapshot, Policy.KAIROS.order(), 1_000);
    // Job 3 (factor (500 + 100) / 100 = 6) before job 2 ((990 + 5000) / 5000 = 1.2).
    assertThat(snapshot.pendingJobs().ids()[byLimit[0]]).isEqualTo(3);
    assertThat(PassOrder.sort(snapshot, Policy.KAIROS_PREDICTED.order(), 1_000))
        .containsExactly(byLimit);
  }
}
