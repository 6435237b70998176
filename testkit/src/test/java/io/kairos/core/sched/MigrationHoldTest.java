package io.kairos.core.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.JobId;
import io.kairos.core.tenancy.PreemptionPolicy;
import io.kairos.core.tenancy.PreemptionPolicy.BorrowWithinCohort;
import io.kairos.core.tenancy.PreemptionPolicy.ReclaimWithinCohort;
import io.kairos.core.tenancy.PreemptionPolicy.WithinQueue;
import io.kairos.core.tenancy.QueueDefaults;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.core.tenancy.Resource;
import io.kairos.core.tenancy.ResourceQuota;
import io.kairos.core.tenancy.TenancyConfig;
import io.kairos.core.tenancy.Tenants;
import io.kairos.testkit.Clusters;
import io.kairos.testkit.Jobs;
import io.kairos.testkit.SchedulerHarness;
import io.kairos.testkit.SchedulerHarness.JobState;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The hold on a moved job's target nodes ({@link Migrations#held}), one row per rule: while it is
 * live no other job is started, grown or planned for preemption onto a held node, and it ends by
 * itself at its end ({@link Migrations#holdEndSec}: the move plus the job's checkpoint timeout plus
 * the restart cost). The holder is job {@link #MOVED}, a job the rows never submit (it is being
 * moved elsewhere). Settings: 1 h protection, 60 s restart.
 */
class MigrationHoldTest {
  private static final MigrationSettings SETTINGS = new MigrationSettings(3600, 60, 0.30);
  private static final JobId MOVED = JobId.of(999);
  private static final Resource GPU = Resource.gpu("gpu");
  private static final PreemptionPolicy WITHIN_QUEUE =
      new PreemptionPolicy(
          WithinQueue.LOWER_PRIORITY, ReclaimWithinCohort.NEVER, BorrowWithinCohort.NEVER);

  record Row(String name, Consumer<SchedulerHarness> body) {
    @Override
    public String toString() {
      return name;
    }
  }

  private static SchedulerHarness twoNodes() {
    return SchedulerHarness.of(Clusters.oneRack(2, 8)).policy(Policy.EASY).migration(SETTINGS);
  }

  private static Tenants queueA() {
    return Tenants.of(
        TenancyConfig.ofQueues(
            List.of(
                new QueueSpec(
                    "a",
                    null,
                    Map.of(GPU, ResourceQuota.of(16)),
                    WITHIN_QUEUE,
                    QueueDefaults.NONE))));
  }

  static Stream<Row> rows() {
    return Stream.of(
        new Row(
            "a waiting job is not started on a held node, and is once the hold has ended",
            h0 -> {
              var h = twoNodes();
              h.occupy(0, 0xFF, 10_000);
              h.hold(1, MOVED, 300);
              JobId w = h.submit(Jobs.perNode(8, 8).limit(3600));
              assertThat(h.step().starts()).isEmpty();
              h.advance(299);
              assertThat(h.step().starts()).as("1 s before the hold ends").isEmpty();
              h.advance(1);
              assertThat(h.step().starts())
                  .singleElement()
                  .satisfies(s -> assertThat(s.placement().nodes()).containsExactly(1));
              assertThat(h.stateOf(w)).isEqualTo(JobState.RUNNING);
            }),
        new Row(
            "the holder itself starts on its held node",
            h0 -> {
              var h = twoNodes();
              h.occupy(0, 0xFF, 10_000);
              JobId w = h.submit(Jobs.perNode(8, 8).limit(3600));
              h.hold(1, w, 300);
              assertThat(h.step().starts())
                  .singleElement()
                  .satisfies(s -> assertThat(s.job()).isEqualTo(w));
              assertThat(h.migrations().held()).as("its start ends the hold").isEmpty();
            }),
        new Row(
            "an elastic job does not grow onto a held node, and does once the hold has ended",
            h0 -> {
              var h = twoNodes();
              JobId filler = h.occupy(1, 0xFF, 100);
              JobId e = h.submit(Jobs.elastic(8, 16, 8).limit(10_000));
              assertThat(h.step().starts())
                  .singleElement()
                  .satisfies(s -> assertThat(s.placement().nodes()).containsExactly(0));
              h.advance(100); // the filler ends: node 1 is idle, but held
              assertThat(h.stateOf(filler)).isEqualTo(JobState.FINISHED);
              h.hold(1, MOVED, 400);
              assertThat(h.step().resizes()).as("node 1 is held").isEmpty();
              h.advance(300);
              assertThat(h.step().resizes())
                  .singleElement()
                  .satisfies(
                      z -> {
                        assertThat(z.job()).isEqualTo(e);
                        assertThat(z.placement().nodes()).containsExactly(0, 1);
                      });
            }),
        new Row(
            "preemption frees room off the held GPUs: the victim is on the node not held",
            h0 -> {
              var h = twoNodes().tenants(queueA());
              // low0 (priority 0) holds half of node 0, whose other half is held; low1 (priority
              // 1) half of node 1. Preempting low0 would put the preemptor on held GPUs.
              JobId low0 = h.occupy(0, 0x0F, Jobs.gpus(4).queue("a").priority(0).limit(10_000));
              JobId low1 = h.occupy(1, 0x0F, Jobs.gpus(4).queue("a").priority(1).limit(10_000));
              h.hold(0, MOVED, 10_000);
              h.advance(100); // out of their protection
              h.submit(Jobs.perNode(8, 8).queue("a").priority(10).limit(3600));
              PassResult pass = h.runPass();
              assertThat(pass.preemptions())
                  .extracting(Decision.Preempt::job)
                  .containsExactly(low1)
                  .doesNotContain(low0);
            }),
        new Row(
            "a move does not take a held node as its target",
            h0 -> {
              // As MigrationPassTest's defragmentation, but node 1's free half is held: A has
              // nowhere to go, so nothing moves.
              var h = twoNodes();
              JobId a = h.occupy(0, 0x0F, 10 * 3600);
              h.occupy(1, 0x0F, 10 * 3600);
              h.checkpointable(a, 300);
              h.submit(Jobs.perNode(8, 8).limit(3600));
              h.hold(1, MOVED, 10 * 3600);
              assertThat(h.runPass().migrations()).isEmpty();
            }));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void rule(Row row) {
    row.body().accept(null);
  }

  @Test
  void aHoldEndsAtTheMovePlusTheCheckpointTimeoutPlusTheRestartCost() {
    var m =
        new Migrations(
            true,
            SETTINGS,
            Map.of(),
            Map.of(0, JobId.of(1), 1, JobId.of(1), 2, JobId.of(2)),
            Map.of(JobId.of(1), 1_000L, JobId.of(2), 2_000L));
    assertThat(m.holdEndSec(500, 300)).isEqualTo(500 + 300 + 60);
    assertThat(m.expiredAt(999)).isEmpty();
    assertThat(m.liveAt(999)).isSameAs(m);
    assertThat(m.expiredAt(1_000)).containsExactly(JobId.of(1));
    assertThat(m.liveAt(1_000).held()).containsOnlyKeys(2);
    assertThat(m.expiredAt(5_000)).containsExactly(JobId.of(1), JobId.of(2));
    assertThat(m.liveAt(5_000).held()).isEmpty();
    // A pass at a time sees the holds live then, whatever its driver passed in.
    var snapshot = twoNodes().store().snapshot();
    assertThat(new PassInput(snapshot, 1_500, 0, Tenants.none(), m).migrations().held())
        .containsOnlyKeys(2);
  }

  @Test
  void aHoldWithoutAnEndLastsUntilTheDriverEndsIt() {
    var m = new Migrations(true, SETTINGS, Map.of(), Map.of(0, JobId.of(1)));
    assertThat(m.expiredAt(Long.MAX_VALUE)).isEmpty();
    assertThat(m.liveAt(Long.MAX_VALUE).held()).containsOnlyKeys(0);
  }
}
