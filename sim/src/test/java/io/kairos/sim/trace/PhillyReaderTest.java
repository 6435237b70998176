package io.kairos.sim.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PhillyReaderTest {
  @TempDir Path tmp;

  @Test
  void readsThePhillyJobFile() {
    var trace =
        PhillyReader.read(
            TestTraces.file("philly/pollux_philly_jobs.csv.gz"), EstimateMode.REQUESTED);
    var jobs = trace.jobs();

    assertThat(trace.format()).isEqualTo("philly");
    assertThat(trace.rowsRead()).isEqualTo(82_247);
    assertThat(trace.rowsDropped()).isZero();
    assertThat(jobs).hasSize(82_247);
    assertThat(jobs)
        .isSortedAccordingTo(
            Comparator.comparingLong(TraceJob::submitSec).thenComparingLong(TraceJob::id));
    assertThat(jobs).extracting(TraceJob::id).startsWith(1L, 2L, 3L).endsWith(82_247L);
    assertThat(jobs.getFirst().submitSec()).isZero();
    long span =
        Duration.between(
                LocalDateTime.parse("2017-09-04T10:30:41"),
                LocalDateTime.parse("2017-12-22T08:02:11"))
            .toSeconds();
    assertThat(span).isEqualTo(9_408_690L);
    assertThat(jobs.getLast().submitSec()).isEqualTo(span);
    // earliest row: 2017-09-04 10:30:41,2240194.0,8,17921552.0,7f04ca
    assertThat(jobs.getFirst())
        .isEqualTo(new TraceJob(1, 0, 8, 2_240_194, 2_240_194, "", "7f04ca", 0, 0));
    // latest row: 2017-12-22 08:02:11,64.0,1,64.0,11cb48
    assertThat(jobs.getLast()).isEqualTo(new TraceJob(82_247, span, 1, 64, 64, "", "11cb48", 0, 0));
    // second row by time: 2017-09-07 03:58:57 = 2 days 17:28:16 after the first
    assertThat(jobs.get(1).submitSec()).isEqualTo(2 * 86_400 + 17 * 3_600 + 28 * 60 + 16);

    var byGpus =
        jobs.stream().collect(Collectors.groupingBy(TraceJob::gpus, Collectors.counting()));
    assertThat(byGpus)
        .isEqualTo(
            Map.of(
                1, 76_627L, 2, 1_818L, 4, 1_870L, 8, 1_643L, 12, 7L, 16, 199L, 24, 7L, 32, 67L, 64,
                6L, 128, 3L));
    assertThat(jobs.stream().map(TraceJob::queue).distinct()).hasSize(15);
    assertThat(jobs.stream().mapToLong(TraceJob::durationSec).sum()).isEqualTo(1_080_390_950L);
    assertThat(jobs.stream().mapToLong(j -> j.gpus() * j.durationSec()).sum())
        .isEqualTo(3_521_082_502L);
    assertThat(jobs)
        .allSatisfy(
            j -> {
              assertThat(j.timeLimitSec()).isEqualTo(j.durationSec());
              assertThat(j.user()).isEmpty();
              assertThat(j.gpusPerNode()).isZero();
            });
    assertThat(trace.estimatesFromRuntime()).isTrue();
    assertThat(trace.notes())
        .containsExactly("trace has no estimates: run times used as time limits");
  }

  @Test
  void sortsByTimeKeepingFileOrderForTiesAndToleratesOtherColumnOrders() throws IOException {
    var file =
        write(
            """
            cluster, num_gpus ,duration,timestamp
            vcA,2,10.0,2020-03-01 00:00:10
            vcB,1,0.2,2020-02-29 23:59:50
            vcA,4,59.5,2020-03-01 00:00:10
            ,1,0,2020-02-29 23:59:50

            """);

    var trace = PhillyReader.read(file, EstimateMode.REQUESTED);

    assertThat(trace.jobs())
        .containsExactly(
            new TraceJob(1, 0, 1, 1, 1, "", "vcB", 0, 0),
            new TraceJob(2, 0, 1, 1, 1, "", "default", 0, 0),
            new TraceJob(3, 20, 2, 10, 10, "", "vcA", 0, 0),
            new TraceJob(4, 20, 4, 60, 60, "", "vcA", 0, 0));
    assertThat(trace.rowsRead()).isEqualTo(4);
  }

  @Test
  void missingColumnIsNamed() throws IOException {
    var file = write("timestamp,duration,gpu_time,cluster\n2017-09-04 10:30:41,5.0,5.0,a\n");

    assertThatThrownBy(() -> PhillyReader.read(file, EstimateMode.REQUESTED))
        .isInstanceOfSatisfying(
            TraceFormatException.class,
            e -> {
              assertThat(e.line()).isEqualTo(1);
              assertThat(e.field()).isEqualTo("num_gpus");
              assertThat(e.getMessage()).contains("required column is missing");
            });
  }

  @Test
  void badValuesNameLineAndColumn() throws IOException {
    var header = "timestamp,duration,num_gpus,gpu_time,cluster\n";
    var good = "2017-09-04 10:30:41,5.0,1,5.0,a\n";
    assertError(header + good + "2017-09-31 10:30:41,5.0,1,5.0,a\n", 3, "timestamp");
    assertError(header + good + "2017-09-04T10:30:41,5.0,1,5.0,a\n", 3, "timestamp");
    assertError(header + good + "2017-09-04 24:00:00,5.0,1,5.0,a\n", 3, "timestamp");
    assertError(header + good + good + "2017-09-04 10:30:41,soon,1,5.0,a\n", 4, "duration");
    assertError(header + "2017-09-04 10:30:41,-3,1,5.0,a\n", 2, "duration");
    assertError(header + "2017-09-04 10:30:41,5.0,0,5.0,a\n", 2, "num_gpus");
    assertError(header + "2017-09-04 10:30:41,5.0,1.5,5.0,a\n", 2, "num_gpus");
    assertError(header + "2017-09-04 10:30:41,5.0,1,5.0\n", 2, "");
  }

  @Test
  void emptyFileHasNoHeader() throws IOException {
    var file = write("");

    assertThatThrownBy(() -> PhillyReader.read(file, EstimateMode.REQUESTED))
        .isInstanceOf(TraceFormatException.class)
        .hasMessageContaining("expected a header line");
  }

  @Test
  void headerOnlyGivesAnEmptyTrace() throws IOException {
    var file = write("timestamp,duration,num_gpus,gpu_time,cluster\n");

    assertThat(PhillyReader.read(file, EstimateMode.REQUESTED).jobs()).isEmpty();
  }

  private void assertError(String text, long line, String field) throws IOException {
    var file = write(text);
    assertThatThrownBy(() -> PhillyReader.read(file, EstimateMode.REQUESTED))
        .as(text)
        .isInstanceOfSatisfying(
            TraceFormatException.class,
            e -> {
              assertThat(e.line()).isEqualTo(line);
              assertThat(e.field()).isEqualTo(field);
            });
  }

  private Path write(String text) throws IOException {
    var file = tmp.resolve("philly.csv");
    Files.writeString(file, text, StandardCharsets.US_ASCII);
    return file;
  }
}
