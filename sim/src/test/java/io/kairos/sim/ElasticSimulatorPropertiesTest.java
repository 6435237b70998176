package io.kairos.sim;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kairos.config.TenancyYaml;
import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.sim.trace.Trace;
import io.kairos.sim.trace.TraceJob;
import io.kairos.testkit.Properties;
import java.util.ArrayList;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Seeded properties of runs with elastic jobs and checkpoint costs, with and without a tenancy
 * (preemption): the invariant checker passes after every event batch (never more GPUs than the
 * cluster, every elastic job within its range), every job finishes, GPU-seconds of work are
 * conserved (what a job held is its work plus what it lost, up to the rounding of its last second
 * at each size), two runs are identical, and a pass after every event batch changes nothing.
 */
class ElasticSimulatorPropertiesTest {
  private static final Policy[] POLICIES = {
    Policy.byName("fcfs").orElseThrow(),
    Policy.byName("easy").orElseThrow(),
    Policy.byName("kairos").orElseThrow()
  };

  /** Resizes and requeues over all seeds: the property is not checked on trivial runs only. */
  private static int resizes;

  private static int requeues;

  @org.junit.jupiter.api.AfterAll
  static void theRunsResizedAndPreempted() {
    assertThat(resizes).as("resizes over all seeds").isGreaterThan(100);
    assertThat(requeues).as("requeues over all seeds").isPositive();
  }

  static LongStream seeds() {
    return Properties.seeds().limit(40);
  }

  /** Jobs of 1 to 16 GPUs, some in whole nodes of 4, a few queues, arriving over a few hours. */
  static Trace randomTrace(long seed, int n) {
    var random = new SplittableRandom(seed);
    var jobs = new ArrayList<TraceJob>();
    String[] queues = {"a", "b", "c"};
    long t = 0;
    for (int i = 1; i <= n; i++) {
      t += random.nextInt(200);
      int gpus = new int[] {1, 2, 3, 4, 6, 8, 12, 16}[random.nextInt(8)];
      int perNode = gpus % 4 == 0 && random.nextBoolean() ? 4 : 0;
      long duration = 1 + random.nextInt(3600);
      jobs.add(
          new TraceJob(
              i,
              t,
              gpus,
              duration,
              duration + random.nextInt(600),
              "",
              queues[random.nextInt(3)],
              random.nextInt(3),
              perNode));
    }
    return SimTestTraces.of(jobs.toArray(TraceJob[]::new));
  }

  private static Optional<SimTenancy> tenancy(boolean on) {
    if (!on) {
      return Optional.empty();
    }
    var file =
        TenancyYaml.parse(
            """
            priorityClasses: [{name: low, value: 0, preemptible: true}, {name: high, value: 10}]
            cohorts: [all]
            queues:
              - {name: a, cohort: all, quotas: {gpu:gpu: {nominal: 8}}, defaults: {priorityClass: low}}
              - name: b
                cohort: all
                quotas: {gpu:gpu: {nominal: 12}}
                preemption: {reclaimWithinCohort: ANY, fairShare: OVER_SERVED}
              - name: c
                cohort: all
                quotas: {gpu:gpu: {nominal: 12}}
                preemption: {reclaimWithinCohort: LOWER_PRIORITY, withinQueue: LOWER_PRIORITY}
                defaults: {priorityClass: high}
            scheduling: {preemptionGrace: 45s, protection: {minRuntime: 2m}}
            """,
            "test.yaml");
    return Optional.of(SimTenancy.scheduling(file).withCheckpointEverySec(300));
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void workIsConservedWithinTheClusterAndRunsRepeat(long seed) throws Exception {
    var random = new SplittableRandom(seed);
    Policy policy = POLICIES[random.nextInt(POLICIES.length)];
    boolean tenancy = random.nextInt(3) == 0;
    var model = new ElasticModel(0.25 + 0.75 * random.nextDouble(), random.nextInt(4) * 20L);
    var trace = randomTrace(seed, 120);
    var options =
        new SimOptions(true, Optional.empty(), true, seed, false)
            .withTenancy(tenancy(tenancy))
            .withElastic(model);
    var cluster = Cluster.uniform(8, 4, 4, 2);
    String what = "seed " + seed + ", " + policy.name() + ", " + model + ", tenancy " + tenancy;

    SimReport r = new Simulator(cluster, "8x4", policy, options).run(trace);
    SimReport again = new Simulator(cluster, "8x4", policy, options).run(trace);

    var json = new ObjectMapper();
    assertThat(json.writeValueAsString(again.toMap(false)))
        .as(what)
        .isEqualTo(json.writeValueAsString(r.toMap(false)));
    var jobs = r.perJob().orElseThrow();
    assertThat(again.perJob().orElseThrow().endSec()).as(what).containsExactly(jobs.endSec());
    // A pass after every event batch decides the same: the passes skipped start, grow and
    // shrink nothing.
    var everyPass =
        new SimOptions(true, Optional.empty(), true, seed, true)
            .withTenancy(tenancy(tenancy))
            .withElastic(model);
    var all = new Simulator(cluster, "8x4", policy, everyPass).run(trace).perJob().orElseThrow();
    assertThat(all.startSec()).as(what + ", every pass").containsExactly(jobs.startSec());
    assertThat(all.endSec()).as(what + ", every pass").containsExactly(jobs.endSec());
    var perJob = jobs.elastic().orElseThrow();
    assertThat(r.utilization()).as(what).isBetween(0.0, 1.0);
    var e = r.elastic().orElseThrow();
    int requeued = r.tenancy().map(TenancyReport::requeued).orElse(0);
    synchronized (ElasticSimulatorPropertiesTest.class) {
      resizes += e.resizes();
      requeues += requeued;
    }
    double lostSum = 0;
    for (int i = 0; i < jobs.size(); i++) {
      TraceJob job = trace.jobs().get(i);
      String which = what + ", job " + job.id();
      assertThat(jobs.endSec()[i]).as(which + " finished").isGreaterThan(jobs.startSec()[i]);
      assertThat(perJob.minGpus()[i]).as(which).isLessThanOrEqualTo(perJob.maxGpus()[i]);
      assertThat((long) perJob.maxGpus()[i]).as(which).isLessThanOrEqualTo(cluster.totalGpus());
      double work = (double) job.durationSec() * job.gpus();
      double slack = perJob.gpuSeconds()[i] - work - perJob.lostGpuSeconds()[i];
      lostSum += perJob.lostGpuSeconds()[i];
      if (perJob.minGpus()[i] == perJob.maxGpus()[i]) {
        assertThat(perJob.resizes()[i]).as(which).isZero();
        if (requeued == 0) {
          assertThat(slack).as(which + ": GPU time of a fixed job").isEqualTo(0.0);
        }
      } else {
        // Each time the job runs at a size, its last second may be partly idle.
        long segments = 1 + perJob.resizes()[i] + requeued;
        assertThat(slack)
            .as(which + ": GPU time held - work - lost")
            .isGreaterThanOrEqualTo(-1e-6)
            .isLessThan((double) perJob.maxGpus()[i] * segments);
      }
    }
    assertThat(lostSum * 1.0 / 3600)
        .as(what)
        .isCloseTo(
            e.gpuHoursLostToPreemption() + e.gpuHoursLostToResizes(),
            org.assertj.core.api.Assertions.within(1e-6));
  }
}
