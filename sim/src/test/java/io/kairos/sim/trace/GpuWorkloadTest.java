package io.kairos.sim.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The generated GPU workload: reproducible, shaped as documented, at the load asked. */
class GpuWorkloadTest {
  @Test
  void sameParametersGiveTheSameTraceAndAnotherSeedAnother() {
    var a = GpuWorkload.parse("jobs=2000,seed=7").generate(1024, 8);
    var b = GpuWorkload.parse("seed=7, jobs=2000").generate(1024, 8);
    var c = GpuWorkload.parse("jobs=2000,seed=8").generate(1024, 8);
    assertThat(a.jobs()).isEqualTo(b.jobs());
    assertThat(a.jobs()).isNotEqualTo(c.jobs());
    assertThat(a.source()).isEqualTo("generated(jobs=2000,load=0.95,max-gpus=256,seed=7)");
  }

  @ParameterizedTest
  @CsvSource({"1, 0.5", "2, 0.95", "3, 1.2"})
  void jobsAreShapedAsDocumentedAtTheOfferedLoad(long seed, double load) {
    int totalGpus = 512;
    var trace = new GpuWorkload(20_000, load, 128, seed).generate(totalGpus, 8);
    assertThat(trace.jobs()).hasSize(20_000);
    double gpuSeconds = 0;
    long lastSubmit = 0;
    int oneGpu = 0;
    for (var job : trace.jobs()) {
      assertThat(job.submitSec()).isGreaterThanOrEqualTo(lastSubmit);
      lastSubmit = job.submitSec();
      assertThat(job.gpus()).isBetween(1, 128);
      assertThat(job.durationSec()).isBetween(10L, 7 * 86_400L);
      assertThat(job.timeLimitSec()).isGreaterThanOrEqualTo(job.durationSec());
      if (job.gpus() > 8) {
        assertThat(job.gpus() % 8).isZero();
        assertThat(job.gpusPerNode()).isEqualTo(8); // whole nodes
      } else {
        assertThat(job.gpusPerNode()).isEqualTo(job.gpus()); // on one node
      }
      oneGpu += job.gpus() == 1 ? 1 : 0;
      gpuSeconds += (double) job.gpus() * job.durationSec();
    }
    assertThat(oneGpu / 20_000.0).isBetween(0.67, 0.73);
    double offered = gpuSeconds / ((double) lastSubmit * totalGpus);
    assertThat(offered).isBetween(load * 0.95, load * 1.05);
  }

  @Test
  void gangsLargerThanTheClusterAreNotDrawn() {
    var trace = new GpuWorkload(5_000, 0.9, 256, 1).generate(32, 8);
    assertThat(trace.jobs()).allSatisfy(j -> assertThat(j.gpus()).isLessThanOrEqualTo(32));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "jobs=abc | jobs: not a number: 'abc'",
        "jobs=0 | jobs must be between 1 and 10,000,000, got 0",
        "load=-1 | load must be above 0 and at most 10, got -1.0",
        "max-gpus=0 | max-gpus must be >= 1, got 0",
        "colour=red | unknown key 'colour': use jobs, load, max-gpus, seed",
        "jobs | expected key=value, got 'jobs'"
      })
  void badSpecsNameTheKeyAndTheFix(String spec, String message) {
    assertThatThrownBy(() -> GpuWorkload.parse(spec))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(message);
  }
}
