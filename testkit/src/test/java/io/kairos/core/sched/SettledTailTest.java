package io.kairos.core.sched;

import static io.kairos.testkit.Scenario.reserved;
import static io.kairos.testkit.Scenario.starts;
import static io.kairos.testkit.Scenario.waits;
import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.GangSpec;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.model.RunningJob;
import io.kairos.core.state.ClusterSnapshot;
import io.kairos.core.state.PendingJobs;
import io.kairos.testkit.Clusters;
import io.kairos.testkit.Jobs;
import io.kairos.testkit.Passes;
import io.kairos.testkit.Scenario;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The ranks a pass settles in one go once no later job can use the free GPUs (issue 16.4): each
 * gets the reason the rank-by-rank loop gives it. The scenarios run in the harness, which also
 * compares every pass with a fresh pass that visits every rank ({@link
 * SchedulingPass#visitingEveryRank}).
 */
class SettledTailTest {

  static Stream<Scenario> tails() {
    return Stream.of(Policy.EASY, Policy.CONSERVATIVE, Policy.SJF, Policy.KAIROS)
        .flatMap(
            policy ->
                Stream.of(
                    Scenario.named(
                            policy.name()
                                + ": after a reservation and a job that cannot"
                                + " fit, the held job waits with BEGIN_TIME and the rest for GPUs")
                        .cluster(Clusters.oneRack(4, 1))
                        .policy(policy)
                        .running("r", Jobs.gpus(4).limit(100))
                        .pending("a", Jobs.gpus(4).limit(50))
                        .pending("b", Jobs.gpus(2).limit(50))
                        .pending("held", Jobs.gpus(1).limit(50).eligibleAt(10))
                        .pending("c", Jobs.gpus(3).limit(50))
                        .expect(
                            reserved("a", 100),
                            waits("held", Reason.BEGIN_TIME),
                            waits("c", Reason.INSUFFICIENT_GPUS)),
                    Scenario.named(
                            policy.name()
                                + ": one GPU free, a later one-GPU job still"
                                + " starts past the wide ones")
                        .cluster(Clusters.oneRack(4, 1))
                        .policy(policy)
                        .running("r", Jobs.gpus(3).limit(100))
                        .pending("a", Jobs.gpus(4).limit(500))
                        .pending("b", Jobs.gpus(2).limit(500))
                        .pending("c", Jobs.gpus(3).limit(500))
                        .pending("d", Jobs.gpus(1).limit(50))
                        .expect(reserved("a", 100), starts("d"))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("tails")
  void theSettledRanksWaitAsTheLoopSays(Scenario s) {
    s.check();
  }

  /**
   * A job whose excluded nodes leave too few (only a snapshot built by hand has one; the store
   * refuses it) is NEVER_FITS in the settled ranks too, and the whole diagnosis equals the one of a
   * pass that visits every rank, for every policy.
   */
  @Test
  void neverFittingJobsInTheSettledRanks() {
    var cluster = Clusters.oneRack(2, 8);
    var wide = new Job(JobId.of(1), JobSpec.of(GangSpec.perNode(16, 8), 100), 0);
    var half = new Job(JobId.of(2), JobSpec.of(GangSpec.flexible(4), 100), 0);
    var never =
        new Job(
            JobId.of(3),
            JobSpec.of(GangSpec.perNode(16, 8), 100).withExcludedNodes(Set.of("n1")),
            0);
    var held = new Job(JobId.of(4), JobSpec.of(GangSpec.flexible(1), 100), 500);
    var last = new Job(JobId.of(5), JobSpec.of(GangSpec.flexible(8), 100), 0);
    var pending =
        new PendingJobs(
            new Job[] {wide, half, never, held, last},
            new long[] {1, 2, 3, 4, 5},
            new long[] {0, 0, 0, 500, 0},
            new long[] {100, 100, 100, 100, 100},
            new int[] {16, 4, 16, 1, 8},
            new int[] {0, 0, 0, 0, 0},
            new int[] {2, 4, 2, 1, 8},
            new int[] {0, 1, 2, 1, 1},
            3);
    // n0 runs one job on all 8 GPUs until 1000; n1 has 2 GPUs free.
    var runningJob = new Job(JobId.of(9), JobSpec.of(GangSpec.flexible(14), 1000), 0);
    var placement = Placement.of(new int[] {0, 1}, new int[] {8, 6}, new long[] {0xFF, 0x3F});
    var snapshot =
        new ClusterSnapshot(
            cluster,
            new long[] {0, 0xC0},
            new int[] {1 << 20, 1 << 20},
            new long[] {Long.MAX_VALUE / 4, Long.MAX_VALUE / 4},
            pending,
            new RunningJob[] {new RunningJob(runningJob, placement, 0)});
    for (var policy : Policy.ALL) {
      var settled = new SchedulingPass(policy).run(new PassInput(snapshot, 0, 0));
      var visited =
          new SchedulingPass(policy).visitingEveryRank().run(new PassInput(snapshot, 0, 0));
      assertThat(settled.sameAs(visited)).as(policy.name()).isTrue();
      assertThat(Passes.reason(settled, never.id())).as(policy.name()).contains(Reason.NEVER_FITS);
      if (policy.backfill()) {
        assertThat(Passes.reason(settled, held.id())).as(policy.name()).contains(Reason.BEGIN_TIME);
        assertThat(Passes.reason(settled, last.id()))
            .as(policy.name())
            .contains(Reason.INSUFFICIENT_GPUS);
      }
    }
  }
}
