package io.kairos.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.sim.trace.EstimateMode;
import io.kairos.sim.trace.Trace;
import io.kairos.sim.trace.TraceJob;
import io.kairos.testkit.Properties;
import io.kairos.testkit.TextbookConservative;
import io.kairos.testkit.TextbookEasy;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Kairos' {@code conservative} policy against {@link TextbookConservative}, an oracle written apart
 * from it, on machines of single-GPU nodes: the same start time for every job, on generated
 * workloads and on the first jobs of the HPC traces (the oracle rebuilds its whole plan at every
 * event, too slow for whole traces).
 */
class TextbookConservativeTest {

  static LongStream seeds() {
    return Properties.seeds();
  }

  /**
   * Generated workloads: 1 to 64 nodes, bursts of arrivals, jobs from one node to the whole
   * machine, estimates exact or up to 10 times the run time (so jobs end before the plan).
   */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void kairosConservativeStartsEveryJobWhenTextbookConservativeDoes(long seed) {
    var random = new SplittableRandom(seed);
    int nodes = 1 + random.nextInt(random.nextBoolean() ? 8 : 64);
    int count = 1 + random.nextInt(150);
    var jobs = new ArrayList<TraceJob>();
    long at = 0;
    for (int i = 0; i < count; i++) {
      at += random.nextInt(4) == 0 ? 0 : random.nextInt(200);
      int procs =
          random.nextInt(5) == 0 ? 1 + random.nextInt(nodes) : 1 + random.nextInt(1 + nodes / 4);
      long run = 1 + random.nextInt(random.nextBoolean() ? 100 : 2_000);
      long estimate = random.nextInt(3) == 0 ? run : run * (1 + random.nextInt(10));
      jobs.add(new TraceJob(i + 1, at, procs, run, estimate, "", "default", 0, 0));
    }
    var trace = new Trace("seed " + seed, "test", jobs, count, 0, false, List.of());
    long[] kairos = kairosStarts(trace, nodes);
    long[] textbook = TextbookConservative.startTimes(oracleJobs(trace), nodes);
    Properties.check(
        seed,
        () -> {
          for (int i = 0; i < count; i++) {
            assertThat(kairos[i])
                .as("%d nodes, job %d of %s: start", nodes, i + 1, jobs)
                .isEqualTo(textbook[i]);
          }
        });
  }

  /** The first jobs of the HPC traces of docs/policy-results.md on their machines. */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "swf/SDSC-SP2-1998-4.2-cln.swf.gz, 128, 5000",
    "swf/KTH-SP2-1996-2.1-cln.swf.gz, 100, 5000",
    "swf/lublin_256.swf, 256, 3000",
    "swf/lublin_256_new2.swf, 256, 3000"
  })
  void kairosConservativeIsTextbookConservativeOnTheHpcTraces(String file, int nodes, int first) {
    var trace = SimTestTraces.prefix(SimTestTraces.read(file, EstimateMode.REQUESTED), first);
    long[] kairos = kairosStarts(trace, nodes);
    long[] textbook = TextbookConservative.startTimes(oracleJobs(trace), nodes);
    int differ = 0;
    int firstDiffering = -1;
    for (int i = 0; i < kairos.length; i++) {
      if (kairos[i] != textbook[i]) {
        differ++;
        firstDiffering = firstDiffering < 0 ? i : firstDiffering;
      }
    }
    assertThat(differ)
        .as(
            "%s: jobs starting at another time than textbook conservative (first: job %d of %d)",
            file, firstDiffering + 1, kairos.length)
        .isZero();
  }

  /** Kairos' start of every job, by position in the trace, under conservative on n x 1 GPU. */
  private static long[] kairosStarts(Trace trace, int nodes) {
    var options = new SimOptions(false, Optional.empty(), true, 1, false);
    var report =
        new Simulator(Cluster.uniform(nodes, 1, 16, 8), nodes + "x1", Policy.CONSERVATIVE, options)
            .run(trace);
    SimJobs perJob = report.perJob().orElseThrow();
    assertThat(perJob.size()).isEqualTo(trace.jobs().size());
    return perJob.startSec();
  }

  private static List<TextbookEasy.Job> oracleJobs(Trace trace) {
    return trace.jobs().stream()
        .map(j -> new TextbookEasy.Job(j.submitSec(), j.gpus(), j.durationSec(), j.timeLimitSec()))
        .toList();
  }
}
