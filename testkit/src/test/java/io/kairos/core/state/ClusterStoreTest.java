package io.kairos.core.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.command.Applied;
import io.kairos.core.command.Command;
import io.kairos.core.invariant.InvariantChecker;
import io.kairos.core.model.Cluster;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.NodeSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.model.RunningJob;
import io.kairos.core.model.TaskShape;
import io.kairos.testkit.Clusters;
import io.kairos.testkit.StoreState;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The store through the reducer: every refused command leaves the state unchanged. */
class ClusterStoreTest {
  /** Two nodes of 4 GPUs, one rack. */
  private final ClusterStore store = new ClusterStore(Clusters.oneRack(2, 4));

  private static Job job(long id, GangSpec gang) {
    return new Job(JobId.of(id), JobSpec.of(gang, 100), 0);
  }

  private static Placement on(int node, int tasks, long mask) {
    return Placement.of(new int[] {node}, new int[] {tasks}, new long[] {mask});
  }

  private Applied apply(Command c) {
    var applied = Reducer.apply(store, c);
    InvariantChecker.checkStore(store);
    return applied;
  }

  private void submit(long id, GangSpec gang) {
    assertThat(apply(new Command.SubmitJob(0, job(id, gang))).isAccepted()).isTrue();
  }

  private Applied start(long id, Placement p) {
    return apply(new Command.StartJob(0, JobId.of(id), p));
  }

  /**
   * The store counts its elastic jobs, so a pass skips its elastic stage in O(1) when there are
   * none (issue 16.4): the count follows submission, start, cancel, and agrees with a scan.
   */
  @Test
  void snapshotsKnowWhetherAnyJobIsElastic() {
    submit(1, GangSpec.flexible(2));
    assertThat(store.snapshot().anyElastic()).isFalse();
    submit(2, GangSpec.elastic(4, 8, 4));
    assertThat(store.snapshot().anyElastic()).isTrue();
    assertThat(start(2, on(0, 1, 0b1111))).isEqualTo(Applied.ACCEPTED);
    var running = store.snapshot();
    assertThat(running.anyElastic()).as("elastic and running").isTrue();
    assertThat(rebuilt(running).anyElastic()).as("a scan agrees").isTrue();
    assertThat(apply(new Command.CancelJob(1, JobId.of(2), "test")).isAccepted()).isTrue();
    var none = store.snapshot();
    assertThat(none.anyElastic()).isFalse();
    assertThat(rebuilt(none).anyElastic()).as("a scan agrees").isFalse();
  }

  /** The same snapshot built by hand: whether any job is elastic is found by a scan. */
  private static ClusterSnapshot rebuilt(ClusterSnapshot s) {
    int n = s.cluster().nodeCount();
    long[] masks = new long[n];
    int[] cpus = new int[n];
    long[] memory = new long[n];
    for (int i = 0; i < n; i++) {
      masks[i] = s.freeMask(i);
      cpus[i] = s.freeCpus(i);
      memory[i] = s.freeMemoryBytes(i);
    }
    var running = new RunningJob[s.runningCount()];
    for (int i = 0; i < running.length; i++) {
      running[i] = s.running(i);
    }
    return new ClusterSnapshot(s.cluster(), masks, cpus, memory, s.pendingJobs(), running);
  }

  @Test
  void aCordonedNodeShowsNothingFreeAndRefusesStartsButKeepsItsJobs() {
    submit(1, GangSpec.flexible(2));
    submit(2, GangSpec.flexible(1));
    assertThat(start(1, on(0, 2, 0b0011))).isEqualTo(Applied.ACCEPTED);
    String name = store.cluster().node(0).name();

    assertThat(apply(new Command.CordonNode(0, name, true))).isEqualTo(Applied.ACCEPTED);

    assertThat(store.snapshot().freeMask(0)).isZero();
    assertThat(store.snapshot().freeMask(1)).isEqualTo(0b1111);
    assertThat(start(2, on(0, 1, 0b0100))).isInstanceOf(Applied.Refused.class);
    assertThat(store.running(JobId.of(1))).isPresent();
    assertThat(apply(new Command.FinishJob(0, JobId.of(1), 0))).isEqualTo(Applied.ACCEPTED);
    assertThat(store.freeMask(0)).isEqualTo(0b1111);
    assertThat(store.snapshot().freeMask(0)).isZero();

    assertThat(apply(new Command.CordonNode(0, name, false))).isEqualTo(Applied.ACCEPTED);
    assertThat(store.snapshot().freeMask(0)).isEqualTo(0b1111);
    assertThat(start(2, on(0, 1, 0b0100))).isEqualTo(Applied.ACCEPTED);
    assertThat(apply(new Command.CordonNode(0, "no-such-node", true)))
        .isInstanceOf(Applied.Refused.class);
  }

  @Test
  void aStoppingGangLetsGoNodeByNodeAndTheNextJobMayUseOnlyTheReleasedNode() {
    submit(1, GangSpec.perNode(4, 2));
    submit(2, GangSpec.flexible(2));
    var both = Placement.of(new int[] {0, 1}, new int[] {1, 1}, new long[] {0b0011, 0b0011});
    assertThat(start(1, both)).isEqualTo(Applied.ACCEPTED);
    String n0 = store.cluster().node(0).name();
    String n1 = store.cluster().node(1).name();

    assertThat(apply(new Command.ReleaseTasks(0, JobId.of(1), n0))).isEqualTo(Applied.ACCEPTED);

    assertThat(store.freeMask(0)).isEqualTo(0b1111);
    assertThat(store.freeMask(1)).isEqualTo(0b1100);
    assertThat(store.running(JobId.of(1)).orElseThrow().releasedTasks()).isEqualTo(1);
    assertThat(store.freeGpus()).isEqualTo(6);
    assertThat(start(2, on(1, 2, 0b0011))).isInstanceOf(Applied.Refused.class);
    // Its last node, and a node it no longer holds, are refused: the job's end frees the rest.
    assertThat(apply(new Command.ReleaseTasks(0, JobId.of(1), n1)))
        .isInstanceOf(Applied.Refused.class);
    assertThat(apply(new Command.ReleaseTasks(0, JobId.of(1), n0)))
        .isInstanceOf(Applied.Refused.class);
    assertThat(start(2, on(0, 2, 0b0011))).isEqualTo(Applied.ACCEPTED);
    assertThat(apply(new Command.FinishJob(0, JobId.of(1), 0))).isEqualTo(Applied.ACCEPTED);
    assertThat(store.freeMask(1)).isEqualTo(0b1111);
    assertThat(store.freeGpus()).isEqualTo(6);
  }

  @Test
  void aStoppingPartIsResumedOnlyOnFreeGpusAndOnlyAsAPart() {
    var gang = job(1, GangSpec.perNode(4, 2));
    var part = on(1, 1, 0b0011);
    assertThat(apply(new Command.ResumeStopping(5, gang, on(1, 2, 0b1111))))
        .isInstanceOf(Applied.Refused.class);
    assertThat(apply(new Command.ResumeStopping(5, gang, part))).isEqualTo(Applied.ACCEPTED);
    assertThat(apply(new Command.ResumeStopping(5, gang, on(0, 1, 0b0011))))
        .as("known already")
        .isInstanceOf(Applied.Refused.class);
    var held = store.running(JobId.of(1)).orElseThrow();
    assertThat(held.releasedTasks()).isEqualTo(1);
    assertThat(held.startSec()).isEqualTo(5);
    assertThat(store.freeMask(1)).isEqualTo(0b1100);
  }

  @Test
  void anOutOfServiceGpuIsNeverOfferedNorStartedOnButItsJobKeepsIt() {
    submit(1, GangSpec.flexible(2));
    submit(2, GangSpec.flexible(1));
    assertThat(start(1, on(0, 2, 0b0011))).isEqualTo(Applied.ACCEPTED);
    String name = store.cluster().node(0).name();

    assertThat(apply(new Command.GpuService(0, name, 1, false))).isEqualTo(Applied.ACCEPTED);
    assertThat(apply(new Command.GpuService(0, name, 2, false))).isEqualTo(Applied.ACCEPTED);

    assertThat(store.outOfServiceMask(0)).isEqualTo(0b0110);
    assertThat(store.running(JobId.of(1))).isPresent();
    assertThat(store.snapshot().freeMask(0)).isEqualTo(0b1000);
    assertThat(start(2, on(0, 1, 0b0100))).isInstanceOf(Applied.Refused.class);
    assertThat(apply(new Command.FinishJob(0, JobId.of(1), 0))).isEqualTo(Applied.ACCEPTED);
    assertThat(store.snapshot().freeMask(0)).isEqualTo(0b1001);
    assertThat(apply(new Command.GpuService(0, name, 2, true))).isEqualTo(Applied.ACCEPTED);
    assertThat(store.snapshot().freeMask(0)).isEqualTo(0b1101);
    assertThat(start(2, on(0, 1, 0b0100))).isEqualTo(Applied.ACCEPTED);
    assertThat(apply(new Command.GpuService(0, name, 4, false)))
        .isInstanceOf(Applied.Refused.class);
    assertThat(apply(new Command.GpuService(0, "nope", 0, false)))
        .isInstanceOf(Applied.Refused.class);
  }

  @Test
  void startTakesExactlyThePlacedGpus() {
    submit(1, GangSpec.flexible(3));

    assertThat(start(1, on(1, 3, 0b1011))).isEqualTo(Applied.ACCEPTED);

    assertThat(store.freeMask(0)).isEqualTo(0b1111);
    assertThat(store.freeMask(1)).isEqualTo(0b0100);
    assertThat(store.freeGpus()).isEqualTo(5);
    assertThat(store.pendingCount()).isZero();
    assertThat(store.running(JobId.of(1)))
        .hasValueSatisfying(r -> assertThat(r.startSec()).isZero());
  }

  /** Starts that must be refused, each on a store with job 1 (2 one-GPU tasks) pending. */
  static Stream<Arguments> refusedStarts() {
    return Stream.of(
        refused("job is not pending", 9, on(0, 2, 0b0011)),
        refused("too few tasks", 1, on(0, 1, 0b0001)),
        refused("too many tasks", 1, on(0, 3, 0b0111)),
        refused("mask has more GPUs than the tasks", 1, on(0, 2, 0b0111)),
        refused("mask has fewer GPUs than the tasks", 1, on(0, 2, 0b0001)),
        refused("node index out of range", 1, on(2, 2, 0b0011)),
        refused("GPU index beyond the node", 1, on(0, 2, 0b1_0001)),
        refused("GPUs no longer free (held by job 2 on node 1, GPUs 0-1)", 1, on(1, 2, 0b0110)),
        refused(
            "split over two nodes, one of them busy",
            1,
            Placement.of(new int[] {0, 1}, new int[] {1, 1}, new long[] {0b0001, 0b0001})));
  }

  private static Arguments refused(String name, long job, Placement p) {
    return Arguments.of(Named.of(name, job), p);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refusedStarts")
  void refusedStartChangesNothing(long job, Placement placement) {
    submit(1, GangSpec.flexible(2));
    submit(2, GangSpec.flexible(2));
    assertThat(start(2, on(1, 2, 0b0011)).isAccepted()).isTrue();
    var before = StoreState.of(store);

    var applied = start(job, placement);

    assertThat(applied).isInstanceOf(Applied.Refused.class);
    assertThat(StoreState.of(store)).isEqualTo(before);
  }

  @Test
  void secondStartOfTheSameJobIsRefused() {
    submit(1, GangSpec.flexible(1));
    assertThat(start(1, on(0, 1, 0b0001)).isAccepted()).isTrue();
    var before = StoreState.of(store);

    assertThat(start(1, on(0, 1, 0b0010))).isInstanceOf(Applied.Refused.class);
    assertThat(StoreState.of(store)).isEqualTo(before);
  }

  @Test
  void distinctGangWithTwoTasksOnOneNodeIsRefused() {
    submit(1, GangSpec.perNode(4, 2));
    var before = StoreState.of(store);

    assertThat(start(1, on(0, 2, 0b1111))).isInstanceOf(Applied.Refused.class);
    assertThat(StoreState.of(store)).isEqualTo(before);
    assertThat(
            start(1, Placement.of(new int[] {0, 1}, new int[] {1, 1}, new long[] {0b11, 0b1100}))
                .isAccepted())
        .isTrue();
  }

  @Test
  void startOnAnotherGpuModelIsRefused() {
    var mixed =
        new ClusterStore(
            Cluster.of(
                List.of(
                    new NodeSpec("a", "A100", 4, 0, 8, 1L << 30, Map.of(), "z", "b", "r", 4),
                    new NodeSpec("h", "H100", 4, 0, 8, 1L << 30, Map.of(), "z", "b", "r", 4))));
    var spec = new JobSpec("u", "q", 0, GangSpec.flexible(1), 100, "H100");
    Reducer.apply(mixed, new Command.SubmitJob(0, new Job(JobId.of(1), spec, 0)));
    var before = StoreState.of(mixed);

    var onA100 = Reducer.apply(mixed, new Command.StartJob(0, JobId.of(1), on(0, 1, 1)));

    assertThat(onA100).isInstanceOf(Applied.Refused.class);
    assertThat(StoreState.of(mixed)).isEqualTo(before);
    assertThat(Reducer.apply(mixed, new Command.StartJob(0, JobId.of(1), on(1, 1, 1))).isAccepted())
        .isTrue();
  }

  @Test
  void startWithoutEnoughCpusIsRefused() {
    var small =
        new ClusterStore(
            Cluster.of(
                List.of(new NodeSpec("n", "gpu", 4, 0, 4, 1L << 30, Map.of(), "z", "b", "r", 4))));
    var gang = new GangSpec(2, new TaskShape(1, 3, 0), false);
    Reducer.apply(small, new Command.SubmitJob(0, new Job(JobId.of(1), JobSpec.of(gang, 10), 0)));
    var before = StoreState.of(small);

    var applied = Reducer.apply(small, new Command.StartJob(0, JobId.of(1), on(0, 2, 0b11)));

    assertThat(applied).isInstanceOf(Applied.Refused.class);
    assertThat(StoreState.of(small)).isEqualTo(before);
  }

  @Test
  void finishReleasesExactlyTheJobsGpus() {
    submit(1, GangSpec.flexible(2));
    submit(2, GangSpec.flexible(3));
    start(1, on(0, 2, 0b0110));
    start(2, Placement.of(new int[] {0, 1}, new int[] {1, 2}, new long[] {0b1000, 0b0011}));

    assertThat(apply(new Command.FinishJob(5, JobId.of(2), 0)).isAccepted()).isTrue();

    assertThat(store.freeMask(0)).isEqualTo(0b1001);
    assertThat(store.freeMask(1)).isEqualTo(0b1111);
    assertThat(store.freeGpus()).isEqualTo(6);
    assertThat(store.runningJobs()).extracting(r -> r.id().value()).containsExactly(1L);
  }

  @Test
  void finishOfAJobThatIsNotRunningIsRefused() {
    submit(1, GangSpec.flexible(1));
    var before = StoreState.of(store);

    assertThat(apply(new Command.FinishJob(0, JobId.of(1), 0))).isInstanceOf(Applied.Refused.class);
    assertThat(apply(new Command.FinishJob(0, JobId.of(7), 0))).isInstanceOf(Applied.Refused.class);
    assertThat(StoreState.of(store)).isEqualTo(before);
  }

  @Test
  void requeueFreesTheGpusAndMakesTheJobPendingFromThatTime() {
    submit(1, GangSpec.flexible(2));
    submit(2, GangSpec.flexible(1));
    assertThat(apply(new Command.StartJob(10, JobId.of(1), on(0, 2, 0b0110))).isAccepted())
        .isTrue();

    assertThat(apply(new Command.RequeueJob(50, JobId.of(1))).isAccepted()).isTrue();

    assertThat(store.runningCount()).isZero();
    assertThat(store.freeMask(0)).isEqualTo(0b1111);
    assertThat(store.freeGpus()).isEqualTo(8);
    Job requeued = store.pending(JobId.of(1)).orElseThrow();
    assertThat(requeued.submitSec()).isZero();
    assertThat(requeued.eligibleSec()).isEqualTo(50);
    assertThat(requeued.spec()).isEqualTo(job(1, GangSpec.flexible(2)).spec());
    // Back among the pending jobs after those that waited all along.
    assertThat(StoreState.of(store).pendingIds()).containsExactly(JobId.of(2), JobId.of(1));
    // Not startable before its eligible time; startable from it, on other GPUs.
    assertThat(apply(new Command.StartJob(49, JobId.of(1), on(1, 2, 0b0011))))
        .isInstanceOf(Applied.Refused.class);
    assertThat(apply(new Command.StartJob(50, JobId.of(1), on(1, 2, 0b0011))).isAccepted())
        .isTrue();
    assertThat(store.running(JobId.of(1)).orElseThrow().startSec()).isEqualTo(50);
  }

  @Test
  void requeueOfAJobThatIsNotRunningOrBeforeItsStartIsRefused() {
    submit(1, GangSpec.flexible(1));
    submit(2, GangSpec.flexible(1));
    apply(new Command.StartJob(20, JobId.of(2), on(0, 1, 0b0001)));
    var before = StoreState.of(store);

    assertThat(apply(new Command.RequeueJob(30, JobId.of(1)))).isInstanceOf(Applied.Refused.class);
    assertThat(apply(new Command.RequeueJob(30, JobId.of(9)))).isInstanceOf(Applied.Refused.class);
    assertThat(apply(new Command.RequeueJob(19, JobId.of(2)))).isInstanceOf(Applied.Refused.class);
    assertThat(StoreState.of(store)).isEqualTo(before);
  }

  @Test
  void cancelRemovesAPendingJob() {
    submit(1, GangSpec.flexible(1));
    submit(2, GangSpec.flexible(1));

    assertThat(apply(new Command.CancelJob(0, JobId.of(1), "user")).isAccepted()).isTrue();

    assertThat(StoreState.of(store).pendingIds()).containsExactly(JobId.of(2));
    assertThat(store.freeGpus()).isEqualTo(8);
  }

  @Test
  void cancelReleasesARunningJob() {
    submit(1, GangSpec.flexible(4));
    start(1, on(0, 4, 0b1111));

    assertThat(apply(new Command.CancelJob(0, JobId.of(1), "user")).isAccepted()).isTrue();

    assertThat(store.runningCount()).isZero();
    assertThat(store.freeMask(0)).isEqualTo(0b1111);
    assertThat(store.freeGpus()).isEqualTo(8);
  }

  @Test
  void cancelOfAnUnknownOrGoneJobIsRefused() {
    submit(1, GangSpec.flexible(1));
    apply(new Command.CancelJob(0, JobId.of(1), "user"));
    var before = StoreState.of(store);

    assertThat(apply(new Command.CancelJob(0, JobId.of(1), "again")))
        .isInstanceOf(Applied.Refused.class);
    assertThat(apply(new Command.CancelJob(0, JobId.of(5), "never")))
        .isInstanceOf(Applied.Refused.class);
    assertThat(StoreState.of(store)).isEqualTo(before);
  }

  @Test
  void submitOfADuplicateOrOversizedJobIsRefused() {
    submit(1, GangSpec.flexible(1));
    var before = StoreState.of(store);

    assertThat(apply(new Command.SubmitJob(0, job(1, GangSpec.flexible(2)))))
        .isInstanceOf(Applied.Refused.class);
    assertThat(apply(new Command.SubmitJob(0, job(2, GangSpec.flexible(9)))))
        .isInstanceOf(Applied.Refused.class);
    assertThat(apply(new Command.SubmitJob(0, job(3, GangSpec.perNode(3, 1)))))
        .isInstanceOf(Applied.Refused.class);
    assertThat(apply(new Command.SubmitJob(0, job(4, GangSpec.perNode(5, 5)))))
        .isInstanceOf(Applied.Refused.class);
    assertThat(StoreState.of(store)).isEqualTo(before);
  }

  @Test
  void submitOfARunningJobIdIsRefused() {
    submit(1, GangSpec.flexible(1));
    start(1, on(0, 1, 1));
    var before = StoreState.of(store);

    assertThat(apply(new Command.SubmitJob(0, job(1, GangSpec.flexible(1)))))
        .isInstanceOf(Applied.Refused.class);
    assertThat(StoreState.of(store)).isEqualTo(before);
  }

  @Test
  void pendingJobsKeepArrivalOrderAndRunningJobsStartOrder() {
    submit(3, GangSpec.flexible(1));
    submit(1, GangSpec.flexible(1));
    submit(2, GangSpec.flexible(1));
    start(2, on(0, 1, 0b0001));
    start(3, on(0, 1, 0b0010));

    assertThat(StoreState.of(store).pendingIds()).containsExactly(JobId.of(1));
    assertThat(StoreState.of(store).runningIds()).containsExactly(JobId.of(2), JobId.of(3));
  }

  @Test
  void snapshotIsACopy() {
    submit(1, GangSpec.flexible(1));
    var snapshot = store.snapshot();

    start(1, on(0, 1, 0b0001));
    apply(new Command.SubmitJob(0, job(2, GangSpec.flexible(1))));

    assertThat(snapshot.freeMask(0)).isEqualTo(0b1111);
    assertThat(snapshot.pendingCount()).isEqualTo(1);
    assertThat(snapshot.runningCount()).isZero();
  }

  @Test
  void startsComputedFromOneSnapshotRaceAndTheSecondIsRefused() {
    // Two passes over the same snapshot choose the same GPUs for different jobs; the store
    // accepts the first start and refuses the second (optimistic scheduler, strict store).
    submit(1, GangSpec.flexible(4));
    submit(2, GangSpec.flexible(4));

    assertThat(start(1, on(0, 4, 0b1111)).isAccepted()).isTrue();
    var before = StoreState.of(store);

    assertThat(start(2, on(0, 4, 0b1111))).isInstanceOf(Applied.Refused.class);
    assertThat(StoreState.of(store)).isEqualTo(before);
  }
}
