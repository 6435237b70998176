package io.kairos.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.sim.trace.EstimateMode;
import io.kairos.sim.trace.Trace;
import io.kairos.sim.trace.TraceJob;
import io.kairos.testkit.Properties;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What a scheduling pass keeps between passes ({@code sched.ScheduleCache}, the free count it
 * carries) changes no decision: with invariant checks on, the simulator runs a fresh pass beside
 * every pass and fails on the first pass that decides otherwise (starts, reservations, preemptions,
 * the diagnosis' order and reasons). So a whole run is byte-identical to one without the cache.
 * Conservative on long queues of one-GPU jobs is where the cache is used most.
 */
class PassCacheTest {
  private static final SimOptions CHECKED = new SimOptions(true, Optional.empty(), true, 1, false);

  static LongStream seeds() {
    return Properties.seeds();
  }

  /**
   * Generated workloads on small machines of 1-GPU or 4-GPU nodes, loaded past capacity so that
   * queues grow: mostly one-GPU jobs (floating reservations), some wider ones (pinned), bursts at
   * one instant, estimates exact or larger than the run time (jobs end early, off the plan).
   */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void everyPassDecidesAsAFreshPass(long seed) {
    var random = new SplittableRandom(seed);
    int nodes = 1 + random.nextInt(16);
    int gpusPerNode = random.nextBoolean() ? 1 : 4;
    int total = nodes * gpusPerNode;
    int count = 50 + random.nextInt(250);
    var jobs = new ArrayList<TraceJob>();
    long at = 0;
    for (int i = 0; i < count; i++) {
      at += random.nextInt(3) == 0 ? 0 : random.nextInt(60);
      int gpus = random.nextInt(4) == 0 ? 1 + random.nextInt(total) : 1;
      long run = 1 + random.nextInt(random.nextBoolean() ? 100 : 1_000);
      long limit = random.nextInt(3) == 0 ? run : run * (1 + random.nextInt(5));
      jobs.add(new TraceJob(i + 1, at, gpus, run, limit, "", "default", 0, 0));
    }
    var trace = new Trace("seed " + seed, "test", jobs, count, 0, false, List.of());
    var cluster = Cluster.uniform(nodes, gpusPerNode, 16, 64);
    String name = nodes + "x" + gpusPerNode;
    Properties.check(
        seed,
        () -> {
          for (Policy policy : List.of(Policy.CONSERVATIVE, Policy.EASY, Policy.KAIROS)) {
            var report = new Simulator(cluster, name, policy, CHECKED).run(trace);
            assertThat(report.perJob().orElseThrow().size()).isEqualTo(count);
          }
        });
  }

  /** The first jobs of real traces, where queues are thousands of jobs long. */
  @ParameterizedTest(name = "{0} {1} {2}")
  @CsvSource({
    "swf/SDSC-SP2-1998-4.2-cln.swf.gz, 128, 1, 4000, conservative",
    "swf/lublin_256.swf, 256, 1, 3000, conservative",
    "philly/pollux_philly_jobs.csv.gz, 8, 8, 3000, conservative",
    "philly/pollux_philly_jobs.csv.gz, 8, 8, 3000, easy"
  })
  void realTracesDecideAsFreshPasses(
      String file, int nodes, int gpusPerNode, int jobs, String policy) {
    var trace = SimTestTraces.prefix(SimTestTraces.read(file, EstimateMode.REQUESTED), jobs);
    var report =
        new Simulator(
                Cluster.uniform(nodes, gpusPerNode, 16, 64),
                nodes + "x" + gpusPerNode,
                Policy.byName(policy).orElseThrow(),
                CHECKED)
            .run(trace);
    assertThat(report.perJob().orElseThrow().size()).isEqualTo(trace.jobs().size());
  }
}
