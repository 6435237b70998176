package io.kairos.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.core.model.Cluster;
import io.kairos.core.sched.Policy;
import io.kairos.sim.trace.EstimateMode;
import io.kairos.sim.trace.Trace;
import io.kairos.sim.trace.TraceJob;
import io.kairos.sim.trace.TraceReaders;
import io.kairos.testkit.Properties;
import io.kairos.testkit.TextbookEasy;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Kairos' {@code easy} policy against {@link TextbookEasy}, an oracle written apart from it, on
 * machines of single-GPU nodes (where textbook EASY is defined): the same start time for every job,
 * on generated workloads and on the HPC traces.
 */
class TextbookEasyTest {

  static LongStream seeds() {
    return Properties.seeds();
  }

  /**
   * Generated workloads: 1 to 64 nodes, bursts of arrivals (several at one instant), jobs from one
   * node to the whole machine, estimates exact or up to 10 times the run time.
   */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void kairosEasyStartsEveryJobWhenTextbookEasyDoes(long seed) {
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
    long[] textbook = TextbookEasy.startTimes(oracleJobs(trace), nodes);
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

  /**
   * The case of issue 16 in small, on 4 nodes. At t=0: a (1 node, 1 s) on node 0, b (2 nodes, 100
   * s) on nodes 1 and 2, c (1 node, 50 s) on node 3. At t=1 a has ended and h (3 nodes) arrives: it
   * can start at 100 (shadow), when all 4 nodes are free, so 1 node is extra. x (1 node, 1,000 s)
   * fits the free node and the extra count: textbook EASY starts it at 1. A reservation pinned to
   * the lowest nodes free at 100 (0, 1 and 2) would leave node 3 spare, which is busy now, and x
   * would wait until 100.
   */
  @Test
  void backfillsIntoProcessorsThatAreExtraAtTheShadowTimeWhereverTheyAre() {
    var trace =
        new Trace(
            "example",
            "test",
            List.of(
                new TraceJob(1, 0, 1, 1, 1, "", "default", 0, 0),
                new TraceJob(2, 0, 2, 100, 100, "", "default", 0, 0),
                new TraceJob(3, 0, 1, 50, 50, "", "default", 0, 0),
                new TraceJob(4, 1, 3, 10, 10, "", "default", 0, 0),
                new TraceJob(5, 1, 1, 1_000, 1_000, "", "default", 0, 0)),
            5,
            0,
            false,
            List.of());
    assertThat(TextbookEasy.startTimes(oracleJobs(trace), 4)).containsExactly(0, 0, 0, 100, 1);
    assertThat(kairosStarts(trace, 4)).containsExactly(0, 0, 0, 100, 1);
  }

  /**
   * The HPC traces of docs/policy-results.md on their machines: the same start for every job (the
   * issue's bar was mean bounded slowdown within 0.5%; it is exact). SDSC-SP2: 54,034 jobs, mean
   * bounded slowdown 92.63.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "swf/SDSC-SP2-1998-4.2-cln.swf.gz, 128",
    "swf/KTH-SP2-1996-2.1-cln.swf.gz, 100",
    "swf/lublin_256.swf, 256",
    "swf/lublin_256_new2.swf, 256"
  })
  void kairosEasyIsTextbookEasyOnTheHpcTraces(String file, int nodes) {
    var trace = TraceReaders.read(SimTestTraces.file(file), "auto", EstimateMode.REQUESTED);
    long[] kairos = kairosStarts(trace, nodes);
    var jobs = oracleJobs(trace);
    long[] textbook = TextbookEasy.startTimes(jobs, nodes);
    int differ = 0;
    int first = -1;
    for (int i = 0; i < kairos.length; i++) {
      if (kairos[i] != textbook[i]) {
        differ++;
        first = first < 0 ? i : first;
      }
    }
    double ours = TextbookEasy.meanBoundedSlowdown(jobs, kairos);
    double theirs = TextbookEasy.meanBoundedSlowdown(jobs, textbook);
    assertThat(ours).as("%s: mean bounded slowdown", file).isCloseTo(theirs, within(theirs));
    assertThat(differ)
        .as(
            "%s: jobs starting at another time than textbook EASY (first: job %d of %d)",
            file, first + 1, kairos.length)
        .isZero();
  }

  private static org.assertj.core.data.Offset<Double> within(double value) {
    return org.assertj.core.data.Offset.offset(value * 0.005);
  }

  /** Kairos' start of every job, by position in the trace, under {@code easy} on n x 1 GPU. */
  private static long[] kairosStarts(Trace trace, int nodes) {
    for (TraceJob job : trace.jobs()) {
      assertThat(job.precedingJobId()).as("the oracle knows no dependencies").isZero();
      assertThat(job.gpus())
          .as("the oracle runs no job larger than the machine")
          .isLessThanOrEqualTo(nodes);
    }
    var options = new SimOptions(false, Optional.empty(), true, 1, false);
    var report =
        new Simulator(Cluster.uniform(nodes, 1, 16, 8), nodes + "x1", Policy.EASY, options)
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
