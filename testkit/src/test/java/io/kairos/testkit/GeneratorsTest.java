package io.kairos.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.TopologyLevel;
import java.util.HashSet;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** The generators produce valid cases and cover the edge shapes they promise. */
class GeneratorsTest {
  private static final int SEEDS = 300;

  @Test
  void generatedCasesAreValid() {
    for (long seed = 0; seed < SEEDS; seed++) {
      var c = Generators.seeded(seed).randomCase(40);
      long s = seed;
      Properties.check(
          seed,
          () -> {
            var cluster = c.cluster();
            assertThat(cluster.nodeCount()).isBetween(1, 64);
            for (int i = 0; i < cluster.nodeCount(); i++) {
              assertThat(cluster.gpuCount(i)).isIn(1, 2, 4, 8);
              assertThat(cluster.gpuCount(i) % cluster.nvlinkDomainSize(i)).isZero();
            }
            for (int r = 0; r < cluster.domainCount(TopologyLevel.RACK); r++) {
              int size =
                  cluster.domainEnd(TopologyLevel.RACK, r)
                      - cluster.domainStart(TopologyLevel.RACK, r);
              assertThat(size).isBetween(1, 8);
            }
            long previous = 0;
            for (var a : c.jobs()) {
              assertThat(a.atSec()).isGreaterThanOrEqualTo(previous);
              previous = a.atSec();
              assertThat(a.spec().timeLimitSec()).isBetween(1L, 10_000L);
              assertThat(a.runtimeSec()).isBetween(1L, a.spec().timeLimitSec());
              assertThat(a.spec().priority()).isZero();
              assertThat(cluster.canEverHold(a.spec().gang(), a.spec().gpuModel()))
                  .as("seed %d: %s fits the cluster", s, a)
                  .isTrue();
            }
          });
    }
  }

  @Test
  void backlogsRunExactlyToTheirLimits() {
    for (long seed = 0; seed < SEEDS; seed++) {
      var c = Generators.seeded(seed).backlogCase(40, false);
      for (var a : c.jobs()) {
        assertThat(a.atSec()).isZero();
        assertThat(a.runtimeSec()).isEqualTo(a.spec().timeLimitSec());
      }
    }
  }

  @Test
  void edgeShapesAppear() {
    var seen = new HashSet<String>();
    LongStream.range(0, SEEDS)
        .forEach(
            seed -> {
              var c = Generators.seeded(seed).randomCase(40);
              var cluster = c.cluster();
              if (cluster.nodeCount() == 1 && cluster.totalGpus() == 1) {
                seen.add("single node, one GPU");
              }
              if (cluster.nodeCount() == 1 && cluster.totalGpus() == 8) {
                seen.add("single node, 8 GPUs");
              }
              if (cluster.nodeCount() >= 48) {
                seen.add("large cluster");
              }
              if (cluster.domainCount(TopologyLevel.ZONE) > 1) {
                seen.add("two zones");
              }
              if (cluster.domainCount(TopologyLevel.BLOCK) > 1) {
                seen.add("several blocks");
              }
              for (int i = 0; i < cluster.nodeCount(); i++) {
                if (cluster.nvlinkDomainSize(i) < cluster.gpuCount(i)) {
                  seen.add("NVLink domains smaller than the node");
                }
              }
              for (var a : c.jobs()) {
                var g = a.spec().gang();
                if (g.totalGpus() == cluster.totalGpus()) {
                  seen.add("gang as large as the cluster");
                }
                if (g.distinctNodes() && g.tasks() > 1) {
                  seen.add("per-node gang");
                }
                if (!g.distinctNodes() && g.shape().gpus() > 1) {
                  seen.add("multi-GPU tasks sharing nodes");
                }
                if (a.runtimeSec() < a.spec().timeLimitSec()) {
                  seen.add("runtime below the limit");
                }
                if (a.atSec() > 0) {
                  seen.add("later arrival");
                }
              }
              if (c.jobs().size() == 1) {
                seen.add("single job");
              }
            });

    assertThat(seen)
        .contains(
            "single node, one GPU",
            "single node, 8 GPUs",
            "large cluster",
            "two zones",
            "several blocks",
            "NVLink domains smaller than the node",
            "gang as large as the cluster",
            "per-node gang",
            "multi-GPU tasks sharing nodes",
            "runtime below the limit",
            "later arrival",
            "single job");
  }

  @Test
  void failureMessagesNameTheSeedAndTheShrunkCase() {
    var c = Generators.seeded(5).randomCase(40);
    int jobs = c.jobs().size();
    try {
      Properties.check(
          c,
          x -> {
            if (x.jobs().size() >= 2) {
              throw new AssertionError("too many jobs: " + x.jobs().size());
            }
          });
      assertThat(jobs).isLessThan(2);
    } catch (AssertionError e) {
      assertThat(e.getMessage()).startsWith("seed=5: ").contains("to 2 jobs");
    }
  }

  /** The workloads exercise holds and exclusions: some jobs are held, some exclude nodes. */
  @Test
  void someJobsAreHeldAndSomeExcludeNodes() {
    int held = 0;
    int excluding = 0;
    for (long seed = 0; seed < SEEDS; seed++) {
      var c = Generators.seeded(seed).randomCase(30);
      for (var a : c.jobs()) {
        assertThat(a.eligibleSec()).isGreaterThanOrEqualTo(a.atSec());
        held += a.eligibleSec() > a.atSec() ? 1 : 0;
        excluding += a.spec().hasExclusions() ? 1 : 0;
        assertThat(
                c.cluster()
                    .canEverHold(a.spec().gang(), a.spec().gpuModel(), a.spec().excludedNodes()))
            .isTrue();
      }
    }
    assertThat(held).isPositive();
    assertThat(excluding).isPositive();
  }
}
