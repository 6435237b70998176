package io.kairos.core.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.GangSpec;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.model.Placement;
import io.kairos.core.model.RunningJob;
import io.kairos.testkit.Generators;
import io.kairos.testkit.Properties;
import io.kairos.testkit.SchedulerHarness;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The elastic stage's invariants over generated clusters and workloads in which about half of the
 * per-node gangs are elastic (random maximum up to the cluster, random priorities), under every
 * policy: every resize keeps the job between its minimum and maximum, adds or removes whole nodes
 * (one task each) while the nodes it keeps keep their GPUs and its first node, decides from the
 * size the job has, and a shrink names a waiting job while a grow names none. The harness commits
 * every decision through the reducer and checks the store after each (no GPU held twice, each
 * gang's size within its range).
 */
class ElasticProperties {
  static Stream<Arguments> cases() {
    return Properties.policiesAndSeeds(Policy.ALL)
        .filter(a -> (long) a.get()[1] < Math.max(1, Properties.DEFAULT_SEEDS / 2));
  }

  @ParameterizedTest(name = "{0} seed {1}")
  @MethodSource("cases")
  void resizesKeepTheGangWithinItsRange(Policy policy, long seed) {
    run(policy, seed);
  }

  /** The generated workloads do exercise the stage: it grows and it shrinks. */
  @org.junit.jupiter.api.Test
  void theWorkloadsGrowAndShrinkElasticJobs() {
    int[] total = new int[2];
    for (long seed = 0; seed < 40; seed++) {
      int[] counts = run(Policy.EASY, seed);
      total[0] += counts[0];
      total[1] += counts[1];
    }
    assertThat(total[0]).as("grows").isPositive();
    assertThat(total[1]).as("shrinks").isPositive();
  }

  /** Runs one generated case to the end, checking every pass; returns {grows, shrinks}. */
  private static int[] run(Policy policy, long seed) {
    var gen = Generators.seeded(seed);
    var cluster = gen.cluster(1, 24);
    var random = new SplittableRandom(seed);
    var arrivals = new ArrayList<Generators.Arrival>();
    for (var a : gen.workload(cluster, 40)) {
      arrivals.add(elastic(a, cluster.nodeCount(), random));
    }
    var h = SchedulerHarness.of(cluster).policy(policy).seed(seed);
    var resizes = new int[2];
    h.onPass(
        (in, result) -> {
          var running = new HashMap<JobId, RunningJob>();
          for (int i = 0; i < in.snapshot().runningCount(); i++) {
            running.put(in.snapshot().running(i).id(), in.snapshot().running(i));
          }
          for (var s : result.starts()) {
            var gang = h.job(s.job()).spec().gang();
            assertThat(s.placement().totalTasks()).isBetween(gang.tasks(), gang.maxTasks());
          }
          for (var z : result.resizes()) {
            resizes[z.grows() ? 0 : 1]++;
            RunningJob before = running.get(z.job());
            assertThat(before).as("resized job %s is running", z.job()).isNotNull();
            var gang = before.job().spec().gang();
            assertThat(gang.isElastic()).isTrue();
            assertThat(z.fromTasks()).isEqualTo(before.placement().totalTasks());
            Placement to = z.placement();
            assertThat(to.totalTasks()).isBetween(gang.tasks(), gang.maxTasks());
            assertThat(to.totalTasks()).isNotEqualTo(z.fromTasks());
            assertThat(to.slotOf(before.anchorNode()))
                .as("first node (the rendezvous) kept")
                .isNotNegative();
            for (int i = 0; i < to.nodeCount(); i++) {
              assertThat(to.tasksOn(i)).isEqualTo(1);
              int slot = before.placement().slotOf(to.node(i));
              if (slot >= 0) {
                assertThat(to.gpuMask(i)).isEqualTo(before.placement().gpuMask(slot));
              } else {
                assertThat(z.grows()).as("a shrink adds no node").isTrue();
              }
            }
            assertThat(z.beneficiary() == null).isEqualTo(z.grows());
          }
        });
    h.submitAll(arrivals);
    Properties.check(seed, () -> h.runUntilIdle());
    // Every job that fits the cluster at its minimum ran.
    assertThat(h.unfinished()).as("seed %d: jobs left", seed).isEmpty();
    return resizes;
  }

  static java.util.stream.LongStream tenancySeeds() {
    return Properties.seeds().limit(100);
  }

  /**
   * With two queues of half the cluster's GPUs each (no cohort, so no borrowing), no queue ever
   * holds more than its nominal quota, however its elastic jobs start and grow: every pass sees
   * each queue's running jobs, at their current sizes, within it.
   */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("tenancySeeds")
  void elasticJobsGrowOnlyWithinTheirQueuesNominalQuota(long seed) {
    var gen = Generators.seeded(seed);
    var cluster = gen.cluster(2, 16);
    long half = cluster.totalGpus() / 2;
    var gpu = io.kairos.core.tenancy.Resource.gpu(cluster.gpuModel(0));
    var quota = new io.kairos.core.tenancy.ResourceQuota(half, null, null);
    var config =
        io.kairos.core.tenancy.TenancyConfig.ofQueues(
            List.of(
                io.kairos.core.tenancy.QueueSpec.of("a", null, java.util.Map.of(gpu, quota)),
                io.kairos.core.tenancy.QueueSpec.of("b", null, java.util.Map.of(gpu, quota))));
    var random = new SplittableRandom(seed);
    var arrivals = new ArrayList<Generators.Arrival>();
    int k = 0;
    for (var a : gen.workload(cluster, 30)) {
      var e = elastic(a, cluster.nodeCount(), random);
      var spec = e.spec();
      var queued =
          new JobSpec(
              spec.user(),
              k++ % 2 == 0 ? "a" : "b",
              spec.priority(),
              spec.gang(),
              spec.timeLimitSec(),
              spec.gpuModel(),
              spec.excludedNodes(),
              spec.account(),
              spec.priorityClass());
      arrivals.add(new Generators.Arrival(e.atSec(), queued, e.runtimeSec(), e.eligibleSec()));
    }
    var h =
        SchedulerHarness.of(cluster)
            .policy(Policy.EASY)
            .seed(seed)
            .tenants(io.kairos.core.tenancy.Tenants.of(config));
    h.onPass(
        (in, result) -> {
          var used = new HashMap<String, Long>();
          for (int i = 0; i < in.snapshot().runningCount(); i++) {
            var r = in.snapshot().running(i);
            long gpus = 0;
            for (int n = 0; n < r.placement().nodeCount(); n++) {
              gpus += Long.bitCount(r.placement().gpuMask(n));
            }
            used.merge(r.job().spec().queue(), gpus, Long::sum);
          }
          used.forEach(
              (queue, gpus) ->
                  assertThat(gpus)
                      .as("seed %d: queue %s holds", seed, queue)
                      .isLessThanOrEqualTo(half));
        });
    h.submitAll(arrivals);
    Properties.check(seed, () -> h.runUntilIdle());
  }

  /** About half of the per-node gangs made elastic, up to the cluster's node count. */
  private static Generators.Arrival elastic(Generators.Arrival a, int nodes, SplittableRandom r) {
    var spec = a.spec();
    var gang = spec.gang();
    if (!gang.distinctNodes() || gang.tasks() >= nodes || r.nextBoolean()) {
      return a;
    }
    int max = gang.tasks() + 1 + r.nextInt(nodes - gang.tasks());
    var elastic = new GangSpec(gang.tasks(), gang.shape(), true, max);
    var changed =
        new JobSpec(
            spec.user(),
            spec.queue(),
            r.nextInt(3),
            elastic,
            spec.timeLimitSec(),
            spec.gpuModel(),
            spec.excludedNodes(),
            spec.account(),
            spec.priorityClass());
    return new Generators.Arrival(a.atSec(), changed, a.runtimeSec(), a.eligibleSec());
  }
}
