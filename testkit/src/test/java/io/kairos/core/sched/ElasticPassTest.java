package io.kairos.core.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.JobId;
import io.kairos.core.model.Placement;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.core.tenancy.Resource;
import io.kairos.core.tenancy.ResourceQuota;
import io.kairos.core.tenancy.TenancyConfig;
import io.kairos.core.tenancy.Tenants;
import io.kairos.testkit.Clusters;
import io.kairos.testkit.Jobs;
import io.kairos.testkit.SchedulerHarness;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The elastic stage's policy, one row per rule: start size, growth, shrinking before preempting,
 * its bounds. Clusters of 8-GPU nodes; elastic jobs of 8 GPUs per node. Every row runs under every
 * policy, since the stage follows the pass whatever its order and backfill.
 */
class ElasticPassTest {
  private static final long H = 3600;

  record Row(String name, Consumer<SchedulerHarness> body) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Row> rows() {
    return Stream.of(
        new Row(
            "starts at its maximum on an idle cluster",
            h -> {
              JobId e = h.submit(Jobs.elastic(8, 32, 8).limit(H));
              PassResult pass = h.runPass();
              assertThat(sizeOfStart(pass, e)).isEqualTo(4);
              assertThat(pass.resizes()).isEmpty();
            }),
        new Row(
            "starts between min and max: a fixed job of the same pass keeps its nodes",
            h -> {
              JobId e = h.submit(Jobs.elastic(8, 32, 8).limit(H));
              JobId fixed = h.submit(Jobs.perNode(16, 8).limit(H));
              PassResult pass = h.runPass();
              assertThat(sizeOfStart(pass, fixed)).isEqualTo(2);
              assertThat(sizeOfStart(pass, e)).isEqualTo(2);
            }),
        new Row(
            "shrinks for a job, then grows back into the nodes it frees when it ends",
            h -> {
              JobId e = h.submit(Jobs.elastic(8, 32, 8).limit(H));
              h.step();
              assertThat(size(h, e)).isEqualTo(4);
              JobId w = h.submit(Jobs.perNode(24, 8).limit(100).runtime(100));
              h.step();
              assertThat(size(h, e)).isEqualTo(1);
              h.step();
              assertThat(h.stateOf(w)).isEqualTo(SchedulerHarness.JobState.RUNNING);
              h.advance(100);
              assertThat(h.stateOf(w)).isEqualTo(SchedulerHarness.JobState.FINISHED);
              PassResult pass = h.step();
              assertThat(pass.resizes()).singleElement().satisfies(z -> assertGrowth(z, e, 1, 4));
              assertThat(size(h, e)).isEqualTo(4);
            }),
        new Row(
            "shrinks toward its minimum to start a waiting job, which starts next pass",
            h -> {
              JobId e = h.submit(Jobs.elastic(8, 32, 8).limit(H));
              h.step();
              assertThat(size(h, e)).isEqualTo(4);
              JobId w = h.submit(Jobs.perNode(16, 8).limit(H));
              PassResult pass = h.step();
              assertThat(pass.starts()).isEmpty();
              assertThat(pass.resizes())
                  .singleElement()
                  .satisfies(
                      z -> {
                        assertThat(z.job()).isEqualTo(e);
                        assertThat(z.grows()).isFalse();
                        assertThat(z.beneficiary()).isEqualTo(w);
                        assertThat(z.placement().totalTasks()).isEqualTo(2);
                      });
              PassResult next = h.step();
              assertThat(next.starts()).extracting(Decision.Start::job).containsExactly(w);
              assertThat(next.resizes()).isEmpty();
              assertThat(size(h, e)).isEqualTo(2);
            }),
        new Row(
            "keeps its first node (the rendezvous) when it shrinks",
            h -> {
              JobId e = h.submit(Jobs.elastic(8, 32, 8).limit(H));
              h.step();
              int first = h.job(e).placement().node(0);
              h.submit(Jobs.perNode(24, 8).limit(H));
              h.step();
              assertThat(size(h, e)).isEqualTo(1);
              assertThat(h.job(e).placement().node(0)).isEqualTo(first);
            }),
        new Row(
            "grows onto an idle node below its first node, and a shrink still keeps the first",
            h -> {
              JobId x = h.submit(Jobs.perNode(8, 8).limit(100).runtime(100));
              JobId e = h.submit(Jobs.elastic(8, 32, 8).limit(H));
              h.step();
              int held = h.store().running(x).orElseThrow().placement().node(0);
              int first = placement(h, e).node(0);
              assertThat(held).as("the fixed job took the lowest node").isLessThan(first);
              assertThat(size(h, e)).isEqualTo(3);
              h.advance(100);
              assertThat(h.stateOf(x)).isEqualTo(SchedulerHarness.JobState.FINISHED);
              PassResult grow = h.step();
              assertThat(grow.resizes()).singleElement().satisfies(z -> assertGrowth(z, e, 3, 4));
              assertThat(placement(h, e).slotOf(held)).as("grew onto it").isNotNegative();
              h.submit(Jobs.perNode(24, 8).limit(H));
              h.step();
              assertThat(size(h, e)).isEqualTo(1);
              assertThat(placement(h, e).node(0))
                  .as("kept its first node, not the lower one it grew onto")
                  .isEqualTo(first);
            }),
        new Row(
            "never shrinks below its minimum: a job that would need it waits",
            h -> {
              JobId e = h.submit(Jobs.elastic(24, 32, 8).limit(H));
              h.step();
              assertThat(size(h, e)).isEqualTo(4);
              h.submit(Jobs.perNode(16, 8).limit(H));
              PassResult pass = h.step();
              assertThat(pass.resizes()).isEmpty();
              assertThat(pass.starts()).isEmpty();
              assertThat(size(h, e)).isEqualTo(4);
            }),
        new Row(
            "does not grow while a job waits for GPUs",
            h -> {
              JobId x = h.submit(Jobs.perNode(8, 8).limit(100).runtime(100));
              JobId e = h.submit(Jobs.elastic(8, 32, 8).limit(H));
              h.step();
              assertThat(size(h, e)).isEqualTo(3);
              h.advance(100);
              assertThat(h.stateOf(x)).isEqualTo(SchedulerHarness.JobState.FINISHED);
              // One node is idle, but the waiting job needs all 4: shrinking e to its minimum
              // frees 2, too few, and growing would take the GPUs it waits for.
              h.submit(Jobs.perNode(32, 8).limit(H));
              PassResult pass = h.step();
              assertThat(pass.resizes()).isEmpty();
              assertThat(size(h, e)).isEqualTo(3);
            }),
        new Row(
            "shrinks the lower-priority elastic job first, and only as much as needed",
            h -> {
              JobId high = h.submit(Jobs.elastic(8, 16, 8).limit(H).priority(5));
              JobId low = h.submit(Jobs.elastic(8, 16, 8).limit(H).priority(1));
              h.step();
              assertThat(size(h, high)).isEqualTo(2);
              assertThat(size(h, low)).isEqualTo(2);
              h.submit(Jobs.perNode(8, 8).limit(H));
              PassResult pass = h.step();
              assertThat(pass.resizes())
                  .singleElement()
                  .satisfies(z -> assertThat(z.job()).isEqualTo(low));
              assertThat(size(h, low)).isEqualTo(1);
              assertThat(size(h, high)).isEqualTo(2);
            }));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void elasticPolicy(Row row) {
    for (Policy policy : Policy.ALL) {
      var h = SchedulerHarness.of(Clusters.oneRack(4, 8)).policy(policy);
      row.body().accept(h);
    }
  }

  @org.junit.jupiter.api.Test
  void growsOnlyWithinItsQueuesNominalQuota() {
    var cluster = Clusters.oneRack(4, 8);
    var gpu = Resource.gpu(cluster.gpuModel(0));
    var config =
        TenancyConfig.ofQueues(
            List.of(QueueSpec.of("q", null, Map.of(gpu, new ResourceQuota(24, null, null)))));
    var h = SchedulerHarness.of(cluster).tenants(Tenants.of(config));
    JobId e = h.submit(Jobs.elastic(8, 32, 8).queue("q").limit(H));
    h.step();
    assertThat(size(h, e)).isEqualTo(3);
  }

  @org.junit.jupiter.api.Test
  void aFixedJobIsNeverResized() {
    var h = SchedulerHarness.of(Clusters.oneRack(4, 8));
    JobId fixed = h.submit(Jobs.perNode(8, 8).limit(H));
    PassResult pass = h.step();
    assertThat(sizeOfStart(pass, fixed)).isEqualTo(1);
    h.advance(10);
    assertThat(h.step().resizes()).isEmpty();
  }

  private static void assertGrowth(Decision.Resize z, JobId job, int from, int to) {
    assertThat(z.job()).isEqualTo(job);
    assertThat(z.fromTasks()).isEqualTo(from);
    assertThat(z.placement().totalTasks()).isEqualTo(to);
    assertThat(z.grows()).isTrue();
    assertThat(z.beneficiary()).isNull();
  }

  private static int sizeOfStart(PassResult pass, JobId job) {
    return pass.starts().stream()
        .filter(s -> s.job().equals(job))
        .findFirst()
        .map(s -> s.placement().totalTasks())
        .orElseThrow(() -> new AssertionError(job + " did not start: " + pass));
  }

  private static Placement placement(SchedulerHarness h, JobId job) {
    return h.store().running(job).orElseThrow().placement();
  }

  private static int size(SchedulerHarness h, JobId job) {
    Placement p = h.store().running(job).orElseThrow().placement();
    assertThat(Arrays.stream(p.nodes()).map(p::slotOf).map(p::tasksOn)).allMatch(t -> t == 1);
    return p.totalTasks();
  }
}
