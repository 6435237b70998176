package io.kairos.core.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.JobId;
import io.kairos.core.model.Placement;
import io.kairos.testkit.Clusters;
import io.kairos.testkit.Jobs;
import io.kairos.testkit.SchedulerHarness;
import io.kairos.testkit.SchedulerHarness.JobState;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The migration stage's policy, one row per rule. Defragmentation rows: two 8-GPU nodes, each
 * half-held by a 4-GPU job (A on node 0, B on node 1), and a whole-node job W waiting; moving A to
 * node 1's free half lets W start on node 0. Consolidation rows: four 8-GPU nodes in two racks, a
 * two-node gang spread over both racks while rack 0 frees up. Settings: 1 h protection, 60 s
 * restart, 30% saved by consolidation; A's checkpoint takes up to 300 s, so one move of A costs
 * (300 + 60) x 4 = 1,440 GPU-seconds.
 */
class MigrationPassTest {
  private static final long H = 3600;
  private static final MigrationSettings SETTINGS = new MigrationSettings(H, 60, 0.30);

  record Row(String name, Consumer<SchedulerHarness> body) {
    @Override
    public String toString() {
      return name;
    }
  }

  /** Fragmented: A (4 GPUs, node 0) and B (4 GPUs, node 1) run {@code limitSec}; W waits. */
  private record Fragmented(SchedulerHarness h, JobId a, JobId b, JobId w) {
    static Fragmented of(long limitSec, boolean checkpointable) {
      var h = SchedulerHarness.of(Clusters.oneRack(2, 8)).policy(Policy.EASY).migration(SETTINGS);
      JobId a = h.occupy(0, 0x0F, limitSec);
      JobId b = h.occupy(1, 0x0F, limitSec);
      if (checkpointable) {
        h.checkpointable(a, 300);
      }
      JobId w = h.submit(Jobs.perNode(8, 8).limit(H));
      return new Fragmented(h, a, b, w);
    }
  }

  static Stream<Row> rows() {
    return Stream.of(
        new Row(
            "defragments when the wait saved outweighs the move: W starts on A's node",
            h0 -> {
              var f = Fragmented.of(10 * H, true);
              PassResult pass = f.h().step();
              assertThat(pass.starts()).isEmpty();
              assertThat(pass.migrations())
                  .singleElement()
                  .satisfies(
                      m -> {
                        assertThat(m.job()).isEqualTo(f.a());
                        assertThat(m.beneficiary()).isEqualTo(f.w());
                        assertThat(m.consolidates()).isFalse();
                        assertThat(m.target().nodes()).containsExactly(1);
                        assertThat(m.target().gpuMask(0)).isEqualTo(0xF0);
                        // wait saved: until W's reservation at 10 h, x 8 GPUs
                        assertThat(m.gainGpuSec()).isEqualTo(10 * H * 8);
                        assertThat(m.costGpuSec()).isEqualTo(1_440);
                      });
              PassResult next = f.h().step();
              assertThat(next.starts())
                  .singleElement()
                  .satisfies(
                      s -> {
                        assertThat(s.job()).isEqualTo(f.w());
                        assertThat(s.placement().nodes()).containsExactly(0);
                      });
              assertThat(f.h().stateOf(f.w())).isEqualTo(JobState.RUNNING);
              assertThat(next.migrations()).as("A is protected now").isEmpty();
            }),
        new Row(
            "makes room for several waiting jobs in one pass, one move each, in order",
            h0 -> {
              // Four nodes, each half-held; A (node 0) and C (node 2) may move. W1 and W2 each
              // need a whole node: A moves beside B (node 1) for W1, C beside D (node 3) for W2.
              var h =
                  SchedulerHarness.of(Clusters.oneRack(4, 8))
                      .policy(Policy.EASY)
                      .migration(SETTINGS);
              JobId a = h.occupy(0, 0x0F, 10 * H);
              h.occupy(1, 0x0F, 10 * H);
              JobId c = h.occupy(2, 0x0F, 10 * H);
              h.occupy(3, 0x0F, 10 * H);
              h.checkpointable(a, 300);
              h.checkpointable(c, 300);
              JobId w1 = h.submit(Jobs.perNode(8, 8).limit(H));
              JobId w2 = h.submit(Jobs.perNode(8, 8).limit(H));
              PassResult pass = h.step();
              assertThat(pass.migrations())
                  .extracting(Decision.Migrate::job, Decision.Migrate::beneficiary)
                  .containsExactly(
                      org.assertj.core.groups.Tuple.tuple(a, w1),
                      org.assertj.core.groups.Tuple.tuple(c, w2));
              PassResult next = h.step();
              assertThat(next.starts())
                  .extracting(Decision.Start::job)
                  .containsExactlyInAnyOrder(w1, w2);
            }),
        new Row(
            "does not move when the move costs more than the wait it saves",
            h0 -> {
              // W would wait 100 s: 800 GPU-seconds saved < 1,440 spent.
              var f = Fragmented.of(100, true);
              PassResult pass = f.h().step();
              assertThat(pass.migrations()).isEmpty();
              assertThat(f.h().stateOf(f.w())).isEqualTo(JobState.PENDING);
            }),
        new Row(
            "does not move a job inside its protection window, and does after it",
            h0 -> {
              var f = Fragmented.of(10 * H, true);
              f.h().movedAt(f.a(), 0);
              f.h().advance(H - 1);
              assertThat(f.h().step().migrations()).isEmpty();
              f.h().advance(1);
              assertThat(f.h().step().migrations())
                  .singleElement()
                  .satisfies(m -> assertThat(m.job()).isEqualTo(f.a()));
            }),
        new Row(
            "never moves a job that does not declare checkpoints",
            h0 -> {
              var f = Fragmented.of(10 * H, false);
              assertThat(f.h().step().migrations()).isEmpty();
              assertThat(f.h().stateOf(f.w())).isEqualTo(JobState.PENDING);
            }),
        new Row(
            "moves nothing with migration off, however much it would gain",
            h0 -> {
              var h = SchedulerHarness.of(Clusters.oneRack(2, 8)).policy(Policy.EASY);
              JobId a = h.occupy(0, 0x0F, 10 * H);
              h.occupy(1, 0x0F, 10 * H);
              h.checkpointable(a, 300);
              h.submit(Jobs.perNode(8, 8).limit(H));
              assertThat(h.step().migrations()).isEmpty();
            }),
        new Row(
            "consolidates a gang spread over two racks into one when rack 0 frees up",
            h0 -> {
              var h = spread();
              JobId s =
                  h.jobs().stream()
                      .filter(r -> r.spec().totalGpus() == 16)
                      .findFirst()
                      .orElseThrow()
                      .id();
              h.checkpointable(s, 300);
              assertThat(spanOf(h, s)).isEqualTo(io.kairos.core.model.TopologyLevel.BLOCK);
              h.advance(100); // the filler on node 0 ends: rack 0 has room for the whole gang
              PassResult pass = h.step();
              assertThat(pass.migrations())
                  .singleElement()
                  .satisfies(
                      m -> {
                        assertThat(m.job()).isEqualTo(s);
                        assertThat(m.consolidates()).isTrue();
                        assertThat(m.target().nodes()).containsExactly(0, 1);
                        // 30% of the remaining 10 h - 100 s, x 16 GPUs; (300 + 60) x 16 spent
                        assertThat(m.gainGpuSec()).isEqualTo((long) (0.3 * (10 * H - 100) * 16));
                        assertThat(m.costGpuSec()).isEqualTo(360 * 16);
                      });
              assertThat(spanOf(h, s)).isEqualTo(io.kairos.core.model.TopologyLevel.RACK);
            }),
        new Row(
            "does not consolidate a gang whose remaining time is too short to pay",
            h0 -> {
              var h = spread(1_000);
              JobId s =
                  h.jobs().stream()
                      .filter(r -> r.spec().totalGpus() == 16)
                      .findFirst()
                      .orElseThrow()
                      .id();
              h.checkpointable(s, 300);
              h.advance(100);
              // 0.3 x 900 s < 360 s
              assertThat(h.step().migrations()).isEmpty();
              assertThat(spanOf(h, s)).isEqualTo(io.kairos.core.model.TopologyLevel.BLOCK);
            }));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void migration(Row row) {
    row.body().accept(null);
  }

  @Test
  void settingsRejectOutOfRangeValuesNamingTheField() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new MigrationSettings(-1, 60, 0.3))
        .hasMessageContaining("migration.protectionWindowSec");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new MigrationSettings(0, -5, 0.3))
        .hasMessageContaining("migration.restartCostSec");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new MigrationSettings(0, 60, 1.5))
        .hasMessageContaining("migration.consolidationGain");
  }

  private static SchedulerHarness spread() {
    return spread(10 * H);
  }

  /**
   * Four 8-GPU nodes, two per rack (racks 0: nodes 0-1, 1: nodes 2-3); fillers hold node 0 (for 100
   * s) and node 3, so a two-node gang of {@code limitSec} starts on nodes 1 and 2, over both.
   */
  private static SchedulerHarness spread(long limitSec) {
    var h =
        SchedulerHarness.of(Clusters.uniform(4, 8, 2, 2)).policy(Policy.EASY).migration(SETTINGS);
    h.occupy(0, 0xFF, 100);
    h.occupy(3, 0xFF, 100 * H);
    JobId s = h.submit(Jobs.perNode(16, 8).limit(limitSec));
    assertThat(h.step().starts()).singleElement().satisfies(x -> assertThat(x.job()).isEqualTo(s));
    return h;
  }

  private static io.kairos.core.model.TopologyLevel spanOf(SchedulerHarness h, JobId id) {
    Placement p = h.job(id).placement();
    return h.cluster().spanOf(p.nodes(), p.nodeCount());
  }
}
