package io.kairos.core.sched.order;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.GangSpec;
import io.kairos.core.model.Job;
import io.kairos.core.model.JobId;
import io.kairos.core.model.JobSpec;
import io.kairos.core.state.ClusterSnapshot;
import io.kairos.core.state.PendingJobs;
import io.kairos.testkit.Clusters;
import io.kairos.testkit.Properties;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The pass's order equals a plain sort by (priority descending, key, id), for every order, over
 * random pending sets large enough to exercise the merge sort (more than 24 jobs), with equal keys
 * and equal priorities.
 */
class PassOrderProperties {
  static Stream<Arguments> ordersAndSeeds() {
    var orders =
        List.<JobOrder>of(
            JobOrder.ARRIVAL,
            JobOrder.SHORTEST_LIMIT,
            new ExpansionFactorOrder(60),
            new ExpansionFactorOrder(600),
            new AgedShortestFirstOrder(1.0, 86_400));
    return orders.stream()
        .flatMap(
            o ->
                LongStream.range(0, Math.min(50, Properties.seeds().count()))
                    .mapToObj(s -> Arguments.of(Named.of(o.name(), o), s)));
  }

  @ParameterizedTest(name = "{0} seed {1}")
  @MethodSource("ordersAndSeeds")
  void passOrderIsPriorityThenKeyThenId(JobOrder order, long seed) {
    Properties.check(
        seed,
        () -> {
          var random = new SplittableRandom(seed);
          int n = random.nextInt(200);
          long now = 10_000;
          // Shapes: random; already in arrival order (the sorted shortcut); reversed.
          int shape = (int) (seed % 3);
          var jobs = new ArrayList<Job>();
          for (int i = 0; i < n; i++) {
            var spec =
                new JobSpec(
                    "u",
                    "q",
                    shape == 1 || random.nextInt(100) < 70 ? 0 : random.nextInt(-2, 3),
                    GangSpec.flexible(1 + random.nextInt(8)),
                    new long[] {1, 60, 100, 3600}[random.nextInt(4)],
                    "");
            long id = shape == 0 ? 1 + random.nextInt(1_000_000) : shape == 1 ? i + 1 : n - i;
            long submit = shape == 0 ? random.nextInt(4) * 1000L : shape == 1 ? i : n - i;
            // Some jobs are held (a begin time or a requeue backoff): keys count from then.
            // (Not in shape 1, which keeps the input sorted for the shortcut.)
            long eligible =
                shape != 1 && random.nextInt(100) < 20 ? submit + random.nextInt(5_000) : submit;
            jobs.add(new Job(JobId.of(id), spec, submit, eligible));
          }
          // Ids must be unique; keep the first of each.
          var unique = jobs.stream().filter(distinctById()).toList();
          var snapshot =
              new ClusterSnapshot(
                  Clusters.oneRack(1, 8),
                  new long[] {0xFF},
                  new int[] {1},
                  new long[] {1},
                  pendingJobs(unique),
                  new io.kairos.core.model.RunningJob[0]);

          int[] sorted = PassOrder.sort(snapshot, order, now);

          var expected =
              unique.stream()
                  .sorted(
                      Comparator.comparingInt((Job j) -> -j.spec().priority())
                          .thenComparingLong(
                              j -> order.key(j.eligibleSec(), j.timeLimitSec(), j.totalGpus(), now))
                          .thenComparing(Job::id))
                  .map(Job::id)
                  .toList();
          var actual = new ArrayList<JobId>();
          for (int index : sorted) {
            actual.add(unique.get(index).id());
          }
          assertThat(actual).isEqualTo(expected);
        });
  }

  static PendingJobs pendingJobs(List<Job> jobs) {
    int n = jobs.size();
    var p =
        new PendingJobs(
            jobs.toArray(Job[]::new),
            new long[n],
            new long[n],
            new long[n],
            new int[n],
            new int[n],
            new int[n],
            new int[n],
            1);
    for (int i = 0; i < n; i++) {
      var j = jobs.get(i);
      p.ids()[i] = j.id().value();
      p.eligibleSec()[i] = j.eligibleSec();
      p.limitSec()[i] = j.timeLimitSec();
      p.gpus()[i] = j.totalGpus();
      p.priority()[i] = j.spec().priority();
      p.tasks()[i] = j.spec().gang().tasks();
    }
    return p;
  }

  private static java.util.function.Predicate<Job> distinctById() {
    var seen = new java.util.HashSet<JobId>();
    return j -> seen.add(j.id());
  }
}
