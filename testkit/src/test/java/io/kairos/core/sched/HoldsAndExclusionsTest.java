package io.kairos.core.sched;

import static io.kairos.testkit.Scenario.reservations;
import static io.kairos.testkit.Scenario.reserved;
import static io.kairos.testkit.Scenario.starts;
import static io.kairos.testkit.Scenario.startsAt;
import static io.kairos.testkit.Scenario.startsOn;
import static io.kairos.testkit.Scenario.waits;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kairos.core.command.Applied;
import io.kairos.core.command.Command;
import io.kairos.core.model.GangSpec;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.model.RunningJob;
import io.kairos.core.state.ClusterSnapshot;
import io.kairos.core.state.ClusterStore;
import io.kairos.core.state.PendingJobs;
import io.kairos.core.state.Reducer;
import io.kairos.testkit.Clusters;
import io.kairos.testkit.Jobs;
import io.kairos.testkit.Passes;
import io.kairos.testkit.Scenario;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Eligible times (Slurm's --begin, a requeue backoff) and excluded nodes (Slurm's --exclude), the
 * two things a controller sets when it requeues a job after a node failure.
 *
 * <p>Node names: {@code Clusters.oneRack(n, g)} names its nodes {@code n0, n1, ...} (index i is
 * {@code n<i>}) when n is at most 10.
 */
class HoldsAndExclusionsTest {

  static Stream<Scenario> holds() {
    return Stream.of(
        Scenario.named("a held job waits with BEGIN_TIME; a later job starts past it")
            .cluster(Clusters.oneRack(4, 1))
            .pending("held", Jobs.gpus(2).eligibleAt(100))
            .pending("b", Jobs.gpus(2))
            .expect(waits("held", Reason.BEGIN_TIME), starts("b"), reservations(0)),
        Scenario.named("a held job does not stop FCFS")
            .cluster(Clusters.oneRack(4, 1))
            .policy(Policy.FCFS)
            .pending("held", Jobs.gpus(1).eligibleAt(100))
            .pending("b", Jobs.gpus(4))
            .expect(waits("held", Reason.BEGIN_TIME), starts("b")),
        Scenario.named("a held head gets no reservation; the next blocked job does")
            .cluster(Clusters.oneRack(4, 1))
            .running("r", Jobs.gpus(3).limit(100))
            .pending("held", Jobs.gpus(4).eligibleAt(50))
            .pending("c", Jobs.gpus(4).limit(10))
            .pending("d", Jobs.gpus(1).limit(10))
            .expect(
                waits("held", Reason.BEGIN_TIME), reserved("c", 100), starts("d"), reservations(1)),
        Scenario.named("conservative: held jobs get no reservation")
            .cluster(Clusters.oneRack(4, 1))
            .policy(Policy.CONSERVATIVE)
            .running("r", Jobs.gpus(4).limit(100))
            .pending("held", Jobs.gpus(2).eligibleAt(50))
            .pending("c", Jobs.gpus(2))
            .expect(waits("held", Reason.BEGIN_TIME), reserved("c", 100), reservations(1)),
        Scenario.named("kairos: a held job is not the head and gets no reservation")
            .cluster(Clusters.oneRack(4, 1))
            .policy(Policy.KAIROS)
            .running("r", Jobs.gpus(4).limit(100))
            .pending("held", Jobs.gpus(4).limit(10).eligibleAt(50))
            .pending("c", Jobs.gpus(4).limit(1000))
            .expect(waits("held", Reason.BEGIN_TIME), reserved("c", 100), reservations(1)),
        Scenario.named("one second before its eligible time it still waits")
            .cluster(Clusters.oneRack(4, 1))
            .pending("held", Jobs.gpus(1).eligibleAt(100))
            .passAt(99)
            .expect(waits("held", Reason.BEGIN_TIME)),
        Scenario.named("at exactly its eligible time it starts")
            .cluster(Clusters.oneRack(4, 1))
            .pending("held", Jobs.gpus(1).eligibleAt(100))
            .passAt(100)
            .expect(starts("held")),
        Scenario.named("the event loop starts it at its eligible time, not later")
            .cluster(Clusters.oneRack(4, 1))
            .pending("held", Jobs.gpus(1).eligibleAt(100))
            .pending("b", Jobs.gpus(1).limit(30))
            .expect(waits("held", Reason.BEGIN_TIME), startsAt("held", 100), startsAt("b", 0)),
        Scenario.named("once eligible it queues from its eligible time (arrival order)")
            .cluster(Clusters.oneRack(4, 1))
            .running("r", Jobs.gpus(4).limit(1000))
            .pendingAt(0, "held", Jobs.gpus(4).limit(100).eligibleAt(500))
            .pendingAt(400, "b", Jobs.gpus(4).limit(100))
            .passAt(500)
            .expect(reserved("b", 1000), waits("held", Reason.INSUFFICIENT_GPUS)),
        Scenario.named("kairos: the expansion factor counts the wait from the eligible time")
            .cluster(Clusters.oneRack(4, 1))
            .policy(Policy.KAIROS)
            .running("r", Jobs.gpus(4).limit(5000))
            .pendingAt(0, "held", Jobs.gpus(4).limit(100).eligibleAt(1000))
            .pendingAt(900, "b", Jobs.gpus(4).limit(100))
            .passAt(1000)
            .expect(reserved("b", 5000), waits("held", Reason.INSUFFICIENT_GPUS)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("holds")
  void holds(Scenario s) {
    s.check();
  }

  static Stream<Scenario> exclusions() {
    return Stream.of(
        Scenario.named("single node: the best fit is excluded, the next node is used")
            .cluster(Clusters.oneRack(4, 8))
            .pending("a", Jobs.gpus(8).exclude("n0", "n1"))
            .expect(startsOn("a", 2)),
        Scenario.named("single node: a name the cluster lacks excludes nothing")
            .cluster(Clusters.oneRack(1, 8))
            .pending("a", Jobs.gpus(8).exclude("no-such-node"))
            .expect(startsOn("a", 0)),
        Scenario.named("gang per node: no task on the excluded node")
            .cluster(Clusters.oneRack(4, 8))
            .pending("a", Jobs.perNode(24, 8).exclude("n1"))
            .expect(startsOn("a", 0, 2, 3)),
        Scenario.named("flexible gang: no task on the excluded node")
            .cluster(Clusters.oneRack(4, 2))
            .pending("a", Jobs.gpus(6).exclude("n2"))
            .expect(startsOn("a", 0, 1, 3)),
        Scenario.named("multi-GPU tasks sharing nodes: no task on the excluded node")
            .cluster(Clusters.oneRack(3, 4))
            .pending("a", Jobs.tasks(4, 2).exclude("n0"))
            .expect(startsOn("a", 1, 2)),
        Scenario.named("the only free node is excluded: it waits and reserves a node it may use")
            .cluster(Clusters.oneRack(2, 8))
            .running("r", Jobs.gpus(8).limit(100))
            .pending("a", Jobs.gpus(8).exclude("n1"))
            .pending("b", Jobs.gpus(8).limit(50))
            .expect(reserved("a", 100), startsOn("b", 1), startsAt("a", 100)),
        Scenario.named("the reservation skips the node that frees first when it is excluded")
            .cluster(Clusters.oneRack(2, 8))
            .running("r1", Jobs.gpus(8).limit(100))
            .running("r2", Jobs.gpus(8).limit(200))
            .pending("a", Jobs.gpus(8).exclude("n0"))
            .pending("b", Jobs.gpus(8).limit(50))
            .passAt(10)
            .expect(reserved("a", 200), startsAt("a", 200), startsAt("b", 100)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("exclusions")
  void exclusions(Scenario s) {
    var run = s.check();
    // Whatever the scenario says, no decision of the pass uses a node the job excludes.
    var pass = run.pass();
    var cluster = run.harness().cluster();
    for (var label : run.ids().keySet()) {
      var id = run.id(label);
      var excluded = run.harness().job(id).spec().excludedNodes();
      if (excluded.isEmpty()) {
        continue;
      }
      Passes.start(pass, id)
          .ifPresent(
              st ->
                  assertThat(names(cluster, st.placement())).doesNotContainAnyElementsOf(excluded));
      Passes.reservation(pass, id)
          .ifPresent(
              r -> assertThat(names(cluster, r.placement())).doesNotContainAnyElementsOf(excluded));
    }
  }

  private static List<String> names(io.kairos.core.model.Cluster cluster, Placement p) {
    return java.util.Arrays.stream(p.nodes()).mapToObj(i -> cluster.node(i).name()).toList();
  }

  // ---------------------------------------------------------------- never fits

  @Test
  void aJobWhoseExclusionsLeaveTooFewNodesIsRefusedAtSubmission() {
    var store = new ClusterStore(Clusters.oneRack(2, 8));
    var gang = GangSpec.perNode(16, 8);
    var spec = JobSpec.of(gang, 100).withExcludedNodes(Set.of("n1"));
    var applied = Reducer.apply(store, new Command.SubmitJob(0, new Job(JobId.of(1), spec, 0)));
    assertThat(applied).isInstanceOf(Applied.Refused.class);
    assertThat(((Applied.Refused) applied).reason()).contains("excluded");
    assertThat(store.pendingCount()).isZero();
    // Excluding a node it does not need is fine.
    var fine = JobSpec.of(GangSpec.perNode(8, 8), 100).withExcludedNodes(Set.of("n1"));
    assertThat(Reducer.apply(store, new Command.SubmitJob(0, new Job(JobId.of(2), fine, 0))))
        .isEqualTo(Applied.ACCEPTED);
  }

  /**
   * A job that cannot fit without its excluded nodes never reaches a pass through the store; a
   * snapshot built another way gets NEVER_FITS for it, and it holds back no one, not even under
   * FCFS.
   */
  @Test
  void aPassReportsNeverFitsAndIsNotBlockedByIt() {
    var cluster = Clusters.oneRack(2, 8);
    var tooBig = JobSpec.of(GangSpec.perNode(16, 8), 100).withExcludedNodes(Set.of("n1"));
    var never = new Job(JobId.of(1), tooBig, 0);
    var small = new Job(JobId.of(2), JobSpec.of(GangSpec.flexible(1), 100), 0);
    var pending =
        new PendingJobs(
            new Job[] {never, small},
            new long[] {1, 2},
            new long[] {0, 0},
            new long[] {100, 100},
            new int[] {16, 1},
            new int[] {0, 0},
            new int[] {2, 1},
            new int[] {0, 1},
            2);
    var snapshot =
        new ClusterSnapshot(
            cluster,
            new long[] {0xFF, 0xFF},
            new int[] {1 << 20, 1 << 20},
            new long[] {Long.MAX_VALUE / 4, Long.MAX_VALUE / 4},
            pending,
            new RunningJob[0]);
    for (var policy : Policy.ALL) {
      var r = new SchedulingPass(policy).run(new PassInput(snapshot, 0, 0));
      assertThat(Passes.reason(r, never.id())).as(policy.name()).contains(Reason.NEVER_FITS);
      assertThat(Passes.started(r)).as(policy.name()).containsExactly(small.id());
      assertThat(r.reservations()).as(policy.name()).isEmpty();
    }
  }

  // ---------------------------------------------------------------- the store re-checks

  @Test
  void theStoreRefusesAStartBeforeTheEligibleTime() {
    var store = new ClusterStore(Clusters.oneRack(1, 8));
    var job = new Job(JobId.of(1), JobSpec.of(GangSpec.flexible(1), 100), 0).withEligibleSec(50);
    assertThat(Reducer.apply(store, new Command.SubmitJob(0, job))).isEqualTo(Applied.ACCEPTED);
    var placement = Placement.of(new int[] {0}, new int[] {1}, new long[] {1});
    assertThat(Reducer.apply(store, new Command.StartJob(49, job.id(), placement)))
        .isInstanceOf(Applied.Refused.class);
    assertThat(Reducer.apply(store, new Command.StartJob(50, job.id(), placement)))
        .isEqualTo(Applied.ACCEPTED);
  }

  @Test
  void theStoreRefusesAStartOnAnExcludedNode() {
    var store = new ClusterStore(Clusters.oneRack(2, 8));
    var spec = JobSpec.of(GangSpec.flexible(1), 100).withExcludedNodes(Set.of("n0"));
    var job = new Job(JobId.of(1), spec, 0);
    assertThat(Reducer.apply(store, new Command.SubmitJob(0, job))).isEqualTo(Applied.ACCEPTED);
    var onExcluded = Placement.of(new int[] {0}, new int[] {1}, new long[] {1});
    assertThat(Reducer.apply(store, new Command.StartJob(0, job.id(), onExcluded)))
        .isInstanceOf(Applied.Refused.class);
    var onOther = Placement.of(new int[] {1}, new int[] {1}, new long[] {1});
    assertThat(Reducer.apply(store, new Command.StartJob(0, job.id(), onOther)))
        .isEqualTo(Applied.ACCEPTED);
  }

  // ---------------------------------------------------------------- the model

  @Test
  void jobsAreEligibleAtSubmissionUnlessHeld() {
    var spec = JobSpec.of(GangSpec.flexible(1), 100);
    var job = new Job(JobId.of(1), spec, 10);
    assertThat(job.eligibleSec()).isEqualTo(10);
    assertThat(job.withEligibleSec(70)).isEqualTo(new Job(JobId.of(1), spec, 10, 70));
    assertThat(job.withEligibleSec(5).eligibleSec()).as("a begin time in the past").isEqualTo(10);
    assertThat(job.withEligibleSec(70).isEligibleAt(69)).isFalse();
    assertThat(job.withEligibleSec(70).isEligibleAt(70)).isTrue();
    assertThat(job.withEligibleSec(70)).isNotEqualTo(job);
    assertThatThrownBy(() -> new Job(JobId.of(1), spec, 10, 9))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("eligibleSec");
  }

  @Test
  void excludedNodesAreSortedImmutableAndEmptyByDefault() {
    var spec = new JobSpec("u", "q", 0, GangSpec.flexible(1), 100, "");
    assertThat(spec.excludedNodes()).isEmpty();
    assertThat(spec.hasExclusions()).isFalse();
    assertThat(JobSpec.of(GangSpec.flexible(1), 100).excludedNodes()).isEmpty();
    var excluding = spec.withExcludedNodes(Set.of("n9", "n1", "n5"));
    assertThat(excluding.excludedNodes()).containsExactly("n1", "n5", "n9");
    assertThatThrownBy(() -> excluding.excludedNodes().add("n2"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(excluding)
        .isEqualTo(
            new JobSpec("u", "q", 0, GangSpec.flexible(1), 100, "", Set.of("n5", "n9", "n1")));
    assertThat(excluding.withExcludedNodes(Set.of())).isEqualTo(spec);
    assertThatThrownBy(() -> spec.withExcludedNodes(Set.of(" ")))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
