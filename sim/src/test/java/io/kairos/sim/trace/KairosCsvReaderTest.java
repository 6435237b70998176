package io.kairos.sim.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KairosCsvReaderTest {
  private static final String HEADER =
      "id,submit_s,gpus,duration_s,time_limit_s,user,queue,priority,gpus_per_node\n";

  @TempDir Path tmp;

  @Test
  void emptyOptionalValuesTakeDefaults() throws IOException {
    var file =
        write(
            """
            # a Kairos trace
            id,submit_s,gpus,duration_s,time_limit_s,user,queue,priority,gpus_per_node
            1,0,4,100,,,,,
             2 , 5 , 8 , 60 , 120 , alice , prod , 3 , 4\s
            """);

    var trace = KairosCsvReader.read(file, EstimateMode.REQUESTED);

    assertThat(trace.format()).isEqualTo("kairos-csv");
    assertThat(trace.source()).isEqualTo(file.toString());
    assertThat(trace.jobs())
        .containsExactly(
            new TraceJob(1, 0, 4, 100, 100, "", "default", 0, 0),
            new TraceJob(2, 5, 8, 60, 120, "alice", "prod", 3, 4));
    assertThat(trace.rowsRead()).isEqualTo(2);
    assertThat(trace.rowsDropped()).isZero();
    assertThat(trace.estimatesFromRuntime()).isFalse();
    assertThat(trace.notes())
        .containsExactly("1 jobs have no time limit: run time used as time limit");
  }

  @Test
  void optionalColumnsMayBeAbsentAndColumnsInAnyOrder() throws IOException {
    var file = write("duration_s,gpus,id,submit_s\n10,1,1,0\n20,2,2,3\n");

    var trace = KairosCsvReader.read(file, EstimateMode.REQUESTED);

    assertThat(trace.jobs())
        .containsExactly(
            new TraceJob(1, 0, 1, 10, 10, "", "default", 0, 0),
            new TraceJob(2, 3, 2, 20, 20, "", "default", 0, 0));
    assertThat(trace.estimatesFromRuntime()).isTrue();
    assertThat(trace.notes())
        .containsExactly("trace has no time limits: run times used as time limits");
  }

  @Test
  void gpusPerNodeMustDivideGpus() throws IOException {
    var ok = write(HEADER + "1,0,16,10,20,u,q,0,8\n");
    assertThat(KairosCsvReader.read(ok, EstimateMode.REQUESTED).jobs().getFirst().gpusPerNode())
        .isEqualTo(8);

    var bad = write(HEADER + "1,0,16,10,20,u,q,0,8\n2,0,6,10,20,u,q,0,4\n");
    assertThatThrownBy(() -> KairosCsvReader.read(bad, EstimateMode.REQUESTED))
        .isInstanceOfSatisfying(
            TraceFormatException.class,
            e -> {
              assertThat(e.line()).isEqualTo(3);
              assertThat(e.field()).isEqualTo("gpus_per_node");
              assertThat(e.getMessage()).endsWith("gpus must be a multiple of gpus_per_node");
            });
  }

  @Test
  void unsortedRowsAreSortedBySubmitThenId() throws IOException {
    var file = write(HEADER + "5,30,1,10,,,,,\n3,10,1,10,,,,,\n9,10,1,10,,,,,\n1,20,1,10,,,,,\n");

    var trace = KairosCsvReader.read(file, EstimateMode.REQUESTED);

    assertThat(trace.jobs()).extracting(TraceJob::id).containsExactly(3L, 9L, 1L, 5L);
    assertThat(trace.jobs()).extracting(TraceJob::submitSec).containsExactly(10L, 10L, 20L, 30L);
  }

  @Test
  void duplicateIdNamesBothLines() throws IOException {
    var file = write(HEADER + "1,0,1,10,,,,,\n# comment\n2,0,1,10,,,,,\n1,5,1,10,,,,,\n");

    assertThatThrownBy(() -> KairosCsvReader.read(file, EstimateMode.REQUESTED))
        .isInstanceOfSatisfying(
            TraceFormatException.class,
            e -> {
              assertThat(e.line()).isEqualTo(5);
              assertThat(e.field()).isEqualTo("id");
              assertThat(e.getMessage()).endsWith("id 1 was already used on line 2");
            });
  }

  @Test
  void badNumberNamesLineAndField() throws IOException {
    var file = write(HEADER + "1,0,1,10,,,,,\n2,0,two,10,,,,,\n");

    assertThatThrownBy(() -> KairosCsvReader.read(file, EstimateMode.REQUESTED))
        .isInstanceOfSatisfying(
            TraceFormatException.class,
            e -> {
              assertThat(e.line()).isEqualTo(3);
              assertThat(e.field()).isEqualTo("gpus");
              assertThat(e.getMessage())
                  .isEqualTo(file + ":3: field 'gpus': expected a whole number, got 'two'");
            });
  }

  @Test
  void valuesOutOfRangeAreErrors() throws IOException {
    assertError(HEADER + "0,0,1,10,,,,,\n", "id", "expected a whole number >= 1, got 0");
    assertError(HEADER + "1,-1,1,10,,,,,\n", "submit_s", "expected a whole number >= 0, got -1");
    assertError(HEADER + "1,0,0,10,,,,,\n", "gpus", "expected a whole number >= 1, got 0");
    assertError(HEADER + "1,0,1,0,,,,,\n", "duration_s", "expected a whole number >= 1, got 0");
    assertError(HEADER + "1,0,1,5,0,,,,\n", "time_limit_s", "expected a whole number >= 1, got 0");
    assertError(
        HEADER + "1,0,1,5,,,,,-2\n", "gpus_per_node", "expected a whole number >= 0, got -2");
    assertError(HEADER + "1,,1,5,,,,,\n", "submit_s", "a value is required");
    assertError(HEADER + "1,0,1.5,5,,,,,\n", "gpus", "expected a whole number, got '1.5'");
    assertError(
        HEADER + "1,0,1,5\n", "", "expected 9 comma-separated values (as in the header), got 4");
  }

  @Test
  void headerProblemsNameTheColumn() throws IOException {
    assertHeaderError("id,submit_s,gpus\n1,0,1\n", "duration_s", "required column is missing");
    assertHeaderError("id,submit_s,gpus,duration_s,color\n", "color", "unknown column");
    assertHeaderError("id,submit_s,gpus,duration_s,gpus\n", "gpus", "appears twice");
  }

  @Test
  void limitBelowDurationIsRaisedAndNotedOnce() throws IOException {
    var file = write(HEADER + "1,0,1,100,50,,,,\n2,0,1,100,99,,,,\n3,0,1,100,200,,,,\n");

    var trace = KairosCsvReader.read(file, EstimateMode.REQUESTED);

    assertThat(trace.jobs()).extracting(TraceJob::timeLimitSec).containsExactly(100L, 100L, 200L);
    assertThat(trace.estimatesFromRuntime()).isFalse();
    assertThat(trace.notes())
        .containsExactly("2 jobs ran longer than their time limit: limit raised to run time");
  }

  @Test
  void actualModeUsesDurations() throws IOException {
    var file = write(HEADER + "1,0,1,100,50,,,,\n3,0,1,100,200,,,,\n");

    var trace = KairosCsvReader.read(file, EstimateMode.ACTUAL);

    assertThat(trace.jobs()).extracting(TraceJob::timeLimitSec).containsExactly(100L, 100L);
    assertThat(trace.estimatesFromRuntime()).isTrue();
    assertThat(trace.notes()).containsExactly("--estimate actual: run times used as time limits");
  }

  @Test
  void writerOutputReadsBackTheSame() throws IOException {
    var original =
        new Trace(
            "x.swf",
            "swf",
            List.of(
                new TraceJob(1, 0, 4, 100, 150, "u1", "default", 0, 0),
                new TraceJob(2, 7, 16, 10, 10, "", "q2", -3, 8)),
            2,
            0,
            false,
            List.of());
    var out = new StringWriter();

    KairosCsvWriter.write(original, out);

    assertThat(out.toString())
        .isEqualTo(
            """
            # converted from swf trace x.swf
            id,submit_s,gpus,duration_s,time_limit_s,user,queue,priority,gpus_per_node
            1,0,4,100,150,u1,default,0,0
            2,7,16,10,10,,q2,-3,8
            """);
    var back = KairosCsvReader.read(write(out.toString()), EstimateMode.REQUESTED);
    assertThat(back.jobs()).isEqualTo(original.jobs());
    assertThat(back.estimatesFromRuntime()).isFalse();
  }

  @Test
  void convertingARealTraceKeepsItsJobs() throws IOException {
    for (var name : List.of("swf/SDSC-SP2-1998-4.2-cln.swf.gz", "swf/lublin_256.swf")) {
      var original = SwfReader.read(TestTraces.file(name), EstimateMode.REQUESTED);
      var out = new StringWriter();
      KairosCsvWriter.write(original, out);

      var back = KairosCsvReader.read(write(out.toString()), EstimateMode.REQUESTED);

      assertThat(back.jobs()).as(name).isEqualTo(original.jobs());
      assertThat(back.estimatesFromRuntime()).as(name).isEqualTo(original.estimatesFromRuntime());
    }
  }

  @Test
  void writerRejectsNamesTheFormatCannotHold() {
    var trace =
        new Trace(
            "x",
            "swf",
            List.of(new TraceJob(1, 0, 1, 1, 1, "a,b", "default", 0, 0)),
            1,
            0,
            false,
            List.of());

    assertThatThrownBy(() -> KairosCsvWriter.write(trace, new StringWriter()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("user 'a,b'");
  }

  private void assertError(String text, String field, String detail) throws IOException {
    var file = write(text);
    assertThatThrownBy(() -> KairosCsvReader.read(file, EstimateMode.REQUESTED))
        .as(text)
        .isInstanceOfSatisfying(
            TraceFormatException.class,
            e -> {
              assertThat(e.line()).isEqualTo(2);
              assertThat(e.field()).isEqualTo(field);
              assertThat(e.getMessage()).endsWith(detail);
            });
  }

  private void assertHeaderError(String text, String field, String detail) throws IOException {
    var file = write(text);
    assertThatThrownBy(() -> KairosCsvReader.read(file, EstimateMode.REQUESTED))
        .as(text)
        .isInstanceOfSatisfying(
            TraceFormatException.class,
            e -> {
              assertThat(e.line()).isEqualTo(1);
              assertThat(e.field()).isEqualTo(field);
              assertThat(e.getMessage()).contains(detail);
            });
  }

  private Path write(String text) throws IOException {
    var file = tmp.resolve("trace.csv");
    Files.writeString(file, text, StandardCharsets.UTF_8);
    return file;
  }
}
