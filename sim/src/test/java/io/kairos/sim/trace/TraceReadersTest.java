package io.kairos.sim.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TraceReadersTest {
  @TempDir Path tmp;

  @ParameterizedTest
  @CsvSource({
    "swf/SDSC-SP2-1998-4.2-cln.swf.gz, swf, 54034",
    "swf/KTH-SP2-1996-2.1-cln.swf.gz, swf, 28467",
    "swf/NASA-iPSC-1993-3.1-cln.swf.gz, swf, 18066",
    "swf/lublin_256.swf, swf, 10000",
    "swf/lublin_256_new2.swf, swf, 10000",
    "philly/pollux_philly_jobs.csv.gz, philly, 82247",
  })
  void autoDetectsRealFiles(String name, String format, int jobs) {
    var file = TestTraces.file(name);

    assertThat(TraceReaders.detect(file)).isEqualTo(format);
    var trace = TraceReaders.read(file, "auto", EstimateMode.REQUESTED);
    assertThat(trace.format()).isEqualTo(format);
    assertThat(trace.jobs()).hasSize(jobs);
    assertThat(trace.source()).isEqualTo(file.toString());
  }

  @Test
  void autoDetectsKairosCsvEvenGzipped() throws IOException {
    var text = "# comment\nid,submit_s,gpus,duration_s\n1,0,2,10\n";
    var file = tmp.resolve("trace.bin");
    try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(file))) {
      out.write(text.getBytes(StandardCharsets.UTF_8));
    }

    var trace = TraceReaders.read(file, "auto", EstimateMode.REQUESTED);

    assertThat(trace.format()).isEqualTo("kairos-csv");
    assertThat(trace.jobs()).containsExactly(new TraceJob(1, 0, 2, 10, 10, "", "default", 0, 0));
  }

  @Test
  void autoDetectsSwfWithoutHeader() throws IOException {
    var file = write("jobs.txt", "\n  1 0 -1 10 2 -1 -1 2 20\n");

    assertThat(TraceReaders.detect(file)).isEqualTo("swf");
    assertThat(TraceReaders.read(file, "auto", EstimateMode.REQUESTED).jobs()).hasSize(1);
  }

  @Test
  void explicitFormatSkipsDetection() {
    var file = TestTraces.file("swf/lublin_256.swf");

    var trace = TraceReaders.read(file, "swf", EstimateMode.ACTUAL);

    assertThat(trace.jobs()).hasSize(10_000);
    assertThat(trace.notes()).containsExactly("--estimate actual: run times used as time limits");
  }

  @Test
  void explicitFormatThatDoesNotMatchFailsOnTheFirstLine() {
    var file = TestTraces.file("swf/lublin_256.swf");

    assertThatThrownBy(() -> TraceReaders.read(file, "philly", EstimateMode.REQUESTED))
        .isInstanceOfSatisfying(TraceFormatException.class, e -> assertThat(e.line()).isEqualTo(1));
  }

  @Test
  void unrecognisedContentAsksForFormat() throws IOException {
    var file = write("other.csv", "name,time,model,replicas,batch_size\nx,1,y,2,3\n");

    assertThatThrownBy(() -> TraceReaders.read(file, "auto", EstimateMode.REQUESTED))
        .isInstanceOfSatisfying(
            TraceFormatException.class,
            e -> {
              assertThat(e.file()).isEqualTo(file.toString());
              assertThat(e.line()).isZero();
              assertThat(e.getMessage())
                  .endsWith("use --format swf|philly|kairos-csv|sacct|sia-workload");
            });
  }

  @Test
  void emptyFileCannotBeDetected() throws IOException {
    var file = write("empty", "\n# only a comment\n");

    assertThatThrownBy(() -> TraceReaders.read(file, "auto", EstimateMode.REQUESTED))
        .isInstanceOf(TraceFormatException.class)
        .hasMessageContaining("no data lines")
        .hasMessageEndingWith("use --format swf|philly|kairos-csv|sacct|sia-workload");
  }

  @Test
  void unknownFormatNameIsAnError() {
    var file = TestTraces.file("swf/lublin_256.swf");

    assertThatThrownBy(() -> TraceReaders.read(file, "json", EstimateMode.REQUESTED))
        .isInstanceOf(TraceFormatException.class)
        .hasMessageContaining("unknown format 'json'")
        .hasMessageEndingWith("auto|swf|philly|kairos-csv|sacct|sia-workload");
  }

  @Test
  void missingFileIsATraceFormatException() {
    var missing = tmp.resolve("missing.swf.gz");

    assertThatThrownBy(() -> TraceReaders.read(missing, "auto", EstimateMode.REQUESTED))
        .isInstanceOfSatisfying(
            TraceFormatException.class,
            e -> {
              assertThat(e.file()).isEqualTo(missing.toString());
              assertThat(e.line()).isZero();
              assertThat(e.field()).isEmpty();
              assertThat(e.getMessage()).isEqualTo(missing + ": cannot read file: no such file");
            });
  }

  @Test
  void directoryIsATraceFormatException() {
    assertThatThrownBy(() -> TraceReaders.read(tmp, "swf", EstimateMode.REQUESTED))
        .isInstanceOf(TraceFormatException.class)
        .hasMessage(tmp + ": cannot read file: it is a directory");
  }

  @Test
  void truncatedGzipIsATraceFormatException() throws IOException {
    var full = tmp.resolve("full.gz");
    try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(full))) {
      for (int i = 1; i <= 2_000; i++) {
        out.write((i + " " + i + " -1 10 2 -1 -1 2 20\n").getBytes(StandardCharsets.US_ASCII));
      }
    }
    var bytes = Files.readAllBytes(full);
    var cut = tmp.resolve("cut.gz");
    Files.write(cut, java.util.Arrays.copyOf(bytes, bytes.length / 2));

    assertThatThrownBy(() -> TraceReaders.read(cut, "swf", EstimateMode.REQUESTED))
        .isInstanceOf(TraceFormatException.class)
        .hasMessageStartingWith(cut + ": cannot read file: ");
  }

  private Path write(String name, String text) throws IOException {
    var file = tmp.resolve(name);
    Files.writeString(file, text, StandardCharsets.UTF_8);
    return file;
  }
}
