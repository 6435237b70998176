package io.kairos.sim.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Pollux/Sia workload reader: run times from the application's GPU-hours, errors, detection.
 */
class SiaWorkloadReaderTest {
  @TempDir Path dir;

  private static Trace read(String text) throws IOException {
    return SiaWorkloadReader.read(new BufferedReader(new StringReader(text)), "w.csv");
  }

  @Test
  void runTimesAreTheApplicationsGpuHoursOverItsGpus() throws IOException {
    var trace =
        read(
            """
            name,time,application,num_replicas,batch_size
            bert-1,500.0,bert,4,12
            cifar10-0,107,cifar10,6,2048
            imagenet-2,107,imagenet,64,4096
            """);

    assertThat(trace.format()).isEqualTo("sia-workload");
    assertThat(trace.estimatesFromRuntime()).isTrue();
    var jobs = trace.jobs();
    // Sorted by time, ties in file order, numbered in that order.
    assertThat(jobs).extracting(TraceJob::id).containsExactly(1L, 2L, 3L);
    assertThat(jobs).extracting(TraceJob::submitSec).containsExactly(107L, 107L, 500L);
    assertThat(jobs).extracting(TraceJob::gpus).containsExactly(6, 64, 4);
    // 0.5 GPU-h over 6 GPUs = 300 s; 316 over 64 = 17,775 s; 3.16 over 4 = 2,844 s.
    assertThat(jobs).extracting(TraceJob::durationSec).containsExactly(300L, 17_775L, 2_844L);
    assertThat(jobs).allMatch(j -> j.timeLimitSec() == j.durationSec() && j.gpusPerNode() == 0);
  }

  @Test
  void badValuesNameTheLineAndTheColumn() {
    assertThatThrownBy(
            () ->
                read(
                    """
                    name,time,application,num_replicas,batch_size
                    x-0,1,resnet,4,12
                    """))
        .isInstanceOf(TraceFormatException.class)
        .hasMessageContaining("w.csv:2")
        .hasMessageContaining("application")
        .hasMessageContaining("'resnet'")
        .hasMessageContaining("cifar10");
    assertThatThrownBy(
            () ->
                read(
                    """
                    name,time,application,num_replicas,batch_size
                    x-0,1,bert,0,12
                    """))
        .hasMessageContaining("num_replicas");
    assertThatThrownBy(
            () ->
                read(
                    """
                    name,time,application,num_replicas,batch_size
                    x-0,-4,bert,2,12
                    """))
        .hasMessageContaining("time");
    assertThatThrownBy(() -> read("name,time,num_replicas\n")).hasMessageContaining("application");
  }

  @Test
  void theFormatIsDetectedFromTheHeader() throws IOException {
    var file = dir.resolve("workload-1.csv");
    Files.writeString(file, "name,time,application,num_replicas,batch_size\nc-0,0,cifar10,1,8\n");
    assertThat(TraceReaders.detect(file)).isEqualTo("sia-workload");
    assertThat(TraceReaders.read(file, "auto", EstimateMode.REQUESTED).jobs()).hasSize(1);
  }

  @Test
  void theSharedWorkloadsReadWhole() {
    for (String name :
        new String[] {
          "helios/sia_saturn_workloads/workload-1.csv",
          "philly/sia_philly_workloads/workload-1.csv",
          "philly/pollux_workloads/workload-1.csv"
        }) {
      var trace = TraceReaders.read(TestTraces.file(name), "auto", EstimateMode.REQUESTED);
      assertThat(trace.jobs()).as(name).hasSize(160);
    }
  }
}
