package io.kairos.sim.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SwfReaderTest {
  private static final Comparator<TraceJob> SUBMIT_ORDER =
      Comparator.comparingLong(TraceJob::submitSec).thenComparingLong(TraceJob::id);

  @TempDir Path tmp;

  // Expected values below were computed from the files with zcat and awk, e.g.
  // zcat F | awk '!/^;/ && NF>0 {p=$5; if(p<=0)p=$8; if($4>0 && p>0) n++} END{print n}'

  @Test
  void readsSdscSp2() {
    var trace = SwfReader.read(TestTraces.file("swf/SDSC-SP2-1998-4.2-cln.swf.gz"), mode());

    assertThat(trace.format()).isEqualTo("swf");
    assertThat(trace.rowsRead()).isEqualTo(59_715);
    assertThat(trace.jobs()).hasSize(54_034);
    assertThat(trace.rowsDropped()).isEqualTo(59_715 - 54_034);
    assertThat(trace.jobs()).isSortedAccordingTo(SUBMIT_ORDER);
    assertThat(trace.jobs().getFirst().submitSec()).isEqualTo(566_129);
    assertThat(trace.jobs().getLast().submitSec()).isEqualTo(63_582_293);
    assertThat(trace.jobs().stream().mapToInt(TraceJob::gpus).max()).hasValue(128);
    assertThat(trace.jobs())
        .allSatisfy(j -> assertThat(j.timeLimitSec()).isGreaterThanOrEqualTo(j.durationSec()));
    assertThat(sum(trace, TraceJob::durationSec)).isEqualTo(399_341_974L);
    assertThat(trace.jobs().stream().mapToLong(j -> j.gpus() * j.durationSec()).sum())
        .isEqualTo(6_727_555_216L);
    // requested time, or run time when there is none or it is shorter
    assertThat(sum(trace, TraceJob::timeLimitSec)).isEqualTo(907_494_981L);
    assertThat(trace.estimatesFromRuntime()).isFalse();
    assertThat(trace.notes())
        .containsExactly(
            "35 jobs have no requested time: run time used as time limit",
            "4134 jobs ran longer than their requested time: limit raised to run time");
    assertThat(trace.jobs().stream().map(TraceJob::user).distinct()).hasSize(428);
    assertThat(countBy(trace, TraceJob::queue))
        .isEqualTo(Map.of("q1", 5_038L, "q2", 8_838L, "q3", 27_070L, "q4", 12_857L, "q5", 231L));
    // first line: 11 566129 5 28826 1 27758 -1 1 28800 -1 5 153 75 18180 3 -1 -1 -1
    assertThat(trace.jobs().getFirst())
        .isEqualTo(new TraceJob(11, 566_129, 1, 28_826, 28_826, "u153", "q3", 0, 0));
    assertThat(trace.jobs().getLast().id()).isEqualTo(73_496);
  }

  @Test
  void actualModeUsesRunTimes() {
    var trace =
        SwfReader.read(TestTraces.file("swf/SDSC-SP2-1998-4.2-cln.swf.gz"), EstimateMode.ACTUAL);

    assertThat(trace.jobs()).hasSize(54_034);
    assertThat(trace.jobs())
        .allSatisfy(j -> assertThat(j.timeLimitSec()).isEqualTo(j.durationSec()));
    assertThat(trace.estimatesFromRuntime()).isTrue();
    assertThat(trace.notes()).containsExactly("--estimate actual: run times used as time limits");
  }

  @Test
  void readsKthSp2() {
    var trace = SwfReader.read(TestTraces.file("swf/KTH-SP2-1996-2.1-cln.swf.gz"), mode());

    assertThat(trace.rowsRead()).isEqualTo(28_476);
    assertThat(trace.jobs()).hasSize(28_467);
    assertThat(trace.rowsDropped()).isEqualTo(9);
    assertThat(trace.jobs()).isSortedAccordingTo(SUBMIT_ORDER);
    assertThat(trace.jobs().getFirst().submitSec()).isEqualTo(599_850);
    assertThat(trace.jobs().getLast().submitSec()).isEqualTo(29_363_618);
    assertThat(trace.jobs().stream().mapToInt(TraceJob::gpus).max()).hasValue(100);
    assertThat(sum(trace, TraceJob::durationSec)).isEqualTo(252_634_874L);
    assertThat(sum(trace, TraceJob::timeLimitSec)).isEqualTo(389_518_412L);
    assertThat(trace.estimatesFromRuntime()).isFalse();
    assertThat(trace.notes())
        .containsExactly("475 jobs ran longer than their requested time: limit raised to run time");
    assertThat(trace.jobs()).allSatisfy(j -> assertThat(j.queue()).isEqualTo("default"));
  }

  @Test
  void readsNasaIpscWhichHasNoRequestedTimes() {
    var trace = SwfReader.read(TestTraces.file("swf/NASA-iPSC-1993-3.1-cln.swf.gz"), mode());

    assertThat(trace.rowsRead()).isEqualTo(18_239);
    assertThat(trace.jobs()).hasSize(18_066);
    assertThat(trace.rowsDropped()).isEqualTo(173);
    assertThat(trace.jobs().getFirst().submitSec()).isZero();
    assertThat(trace.jobs().getLast().submitSec()).isEqualTo(7_948_936);
    assertThat(trace.jobs().stream().mapToInt(TraceJob::gpus).max()).hasValue(128);
    assertThat(sum(trace, TraceJob::durationSec)).isEqualTo(13_950_781L);
    assertThat(trace.jobs())
        .allSatisfy(j -> assertThat(j.timeLimitSec()).isEqualTo(j.durationSec()));
    assertThat(trace.estimatesFromRuntime()).isTrue();
    assertThat(trace.notes())
        .containsExactly("trace has no requested times: run times used as time limits");
  }

  @Test
  void readsLublinModelFiles() {
    var trace = SwfReader.read(TestTraces.file("swf/lublin_256.swf"), mode());

    assertThat(trace.rowsRead()).isEqualTo(10_000);
    assertThat(trace.jobs()).hasSize(10_000);
    assertThat(trace.rowsDropped()).isZero();
    assertThat(trace.jobs().getFirst().submitSec()).isEqualTo(5_094);
    assertThat(trace.jobs().getLast().submitSec()).isEqualTo(7_711_701);
    assertThat(trace.jobs().stream().mapToInt(TraceJob::gpus).max()).hasValue(256);
    assertThat(sum(trace, TraceJob::durationSec)).isEqualTo(48_627_667L);
    assertThat(trace.estimatesFromRuntime()).isTrue();
    assertThat(trace.notes())
        .containsExactly("trace has no requested times: run times used as time limits");
    // user id -1: no user; queue 0: the default queue
    assertThat(trace.jobs())
        .allSatisfy(
            j -> {
              assertThat(j.user()).isEmpty();
              assertThat(j.queue()).isEqualTo("default");
            });

    var second = SwfReader.read(TestTraces.file("swf/lublin_256_new2.swf"), mode());
    assertThat(second.jobs()).hasSize(10_000);
    assertThat(countBy(second, TraceJob::queue)).isEqualTo(Map.of("default", 8_704L, "q1", 1_296L));
  }

  @Test
  void appliesTheDocumentedRules() throws IOException {
    var file =
        write(
            "rules.swf",
            """
            ; a comment
            ;

               4  100  -1  50  -1  -1 -1   8   -1 -1 1 7 1 -1 2 -1 -1 -1
               3  100  -1  50   2  -1 -1   8   40 -1 1 7 1 -1 -1 -1 -1 -1
               2   50  -1  9.2  1  2.5 -1  1 60.5 -1 1 -1 1 -1 0 -1 -1 -1
               1   10  -1  -1   4  -1 -1   4  100 -1 5 3 1 -1 1 -1 -1 -1
               5   20  -1  30   0  -1 -1   0  100 -1 5 3 1 -1 1 -1 -1 -1
               6   20  -1  0    1  -1 -1   1  100
            """);

    var trace = SwfReader.read(file, mode());

    assertThat(trace.rowsRead()).isEqualTo(6);
    assertThat(trace.rowsDropped()).isEqualTo(3);
    assertThat(trace.jobs())
        .containsExactly(
            // fractions rounded up; no user, queue 0 is the default queue
            new TraceJob(2, 50, 1, 10, 61, "", "default", 0, 0),
            // run time above the requested time: limit raised
            new TraceJob(3, 100, 2, 50, 50, "u7", "default", 0, 0),
            // no allocated processors: requested ones; no requested time: run time
            new TraceJob(4, 100, 8, 50, 50, "u7", "q2", 0, 0));
    assertThat(trace.estimatesFromRuntime()).isFalse();
    assertThat(trace.notes())
        .containsExactly(
            "1 jobs have no requested time: run time used as time limit",
            "1 jobs ran longer than their requested time: limit raised to run time");
  }

  @Test
  void acceptsNineFieldsAndMore() throws IOException {
    var file = write("short.swf", "1 0 -1 10 2 -1 -1 2 20\n2 5 -1 10 2 -1 -1 2 20 1 2 3\n");

    var trace = SwfReader.read(file, mode());

    assertThat(trace.jobs())
        .containsExactly(
            new TraceJob(1, 0, 2, 10, 20, "", "default", 0, 0),
            new TraceJob(2, 5, 2, 10, 20, "u3", "default", 0, 0));
  }

  @Test
  void gzipIsDetectedByContentNotName() throws IOException {
    var text =
        """
        ; Version: 2.2
        1 0 -1 10 2 -1 -1 2 20 -1 1 4 1 -1 1 -1 -1 -1
        2 5 -1 30 4 -1 -1 4 20 -1 1 5 1 -1 2 -1 -1 -1
        3 5 -1 -1 -1 -1 -1 4 20 -1 5 5 1 -1 2 -1 -1 -1
        """;
    var plain = write("small.swf", text);
    var gzipped = tmp.resolve("small-compressed.dat");
    try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(gzipped))) {
      out.write(text.getBytes(StandardCharsets.US_ASCII));
    }

    var fromPlain = SwfReader.read(plain, mode());
    var fromGzip = SwfReader.read(gzipped, mode());

    assertThat(fromGzip.jobs()).hasSize(2).isEqualTo(fromPlain.jobs());
    assertThat(fromGzip.rowsRead()).isEqualTo(fromPlain.rowsRead()).isEqualTo(3);
    assertThat(fromGzip.rowsDropped()).isEqualTo(1);
    assertThat(fromGzip.notes()).isEqualTo(fromPlain.notes());
    assertThat(fromGzip.source()).isEqualTo(gzipped.toString());
  }

  @Test
  void nonNumericFieldNamesLineAndField() throws IOException {
    var file =
        write(
            "bad.swf",
            """
            ; header
            1 0 -1 10 2 -1 -1 2 20 -1 1 4 1 -1 1 -1 -1 -1
            2 5 -1 abc 2 -1 -1 2 20 -1 1 4 1 -1 1 -1 -1 -1
            """);

    var e = catchThrowableOfType(TraceFormatException.class, () -> SwfReader.read(file, mode()));

    assertThat(e.file()).isEqualTo(file.toString());
    assertThat(e.line()).isEqualTo(3);
    assertThat(e.field()).isEqualTo("run time (field 4)");
    assertThat(e.getMessage())
        .isEqualTo(file + ":3: field 'run time (field 4)': expected a number, got 'abc'")
        .doesNotContain("Exception")
        .doesNotContain("\tat ");
  }

  @Test
  void rejectsNumbersJavaWouldAcceptButSwfDoesNot() throws IOException {
    for (var token : List.of("NaN", "Infinity", "0x10", "1d", "1e", "--1", ".", "1e999")) {
      var file = write("odd.swf", "1 0 -1 10 2 -1 -1 2 " + token + "\n");
      assertThatThrownBy(() -> SwfReader.read(file, mode()))
          .as(token)
          .isInstanceOfSatisfying(
              TraceFormatException.class,
              e -> assertThat(e.field()).isEqualTo("requested time (field 9)"));
    }
  }

  @Test
  void tooFewFieldsIsAnError() throws IOException {
    var file = write("few.swf", "1 0 -1 10 2 -1 -1 2 20\n2 5 -1 10 2\n");

    assertThatThrownBy(() -> SwfReader.read(file, mode()))
        .isInstanceOfSatisfying(
            TraceFormatException.class,
            e -> {
              assertThat(e.line()).isEqualTo(2);
              assertThat(e.getMessage()).contains("expected at least 9").endsWith("got 5");
            });
  }

  @Test
  void negativeSubmitTimeIsAnError() throws IOException {
    var file = write("neg.swf", "1 -5 -1 10 2 -1 -1 2 20\n");

    assertThatThrownBy(() -> SwfReader.read(file, mode()))
        .isInstanceOfSatisfying(
            TraceFormatException.class,
            e -> {
              assertThat(e.line()).isEqualTo(1);
              assertThat(e.field()).isEqualTo("submit time (field 2)");
              assertThat(e.getMessage()).endsWith("expected a time >= 0, got '-5'");
            });
  }

  @Test
  void duplicateJobIdNamesBothLines() throws IOException {
    var file =
        write("dup.swf", "7 0 -1 10 2 -1 -1 2 20\n8 1 -1 10 2 -1 -1 2 20\n7 2 -1 1 1 -1 -1 1 5\n");

    assertThatThrownBy(() -> SwfReader.read(file, mode()))
        .isInstanceOfSatisfying(
            TraceFormatException.class,
            e -> {
              assertThat(e.line()).isEqualTo(3);
              assertThat(e.field()).isEqualTo("job id (field 1)");
              assertThat(e.getMessage()).endsWith("job id 7 was already used on line 1");
            });
  }

  @Test
  void fractionalProcessorsAreAnError() throws IOException {
    var file = write("frac.swf", "1 0 -1 10 2.5 -1 -1 2 20\n");

    assertThatThrownBy(() -> SwfReader.read(file, mode()))
        .isInstanceOfSatisfying(
            TraceFormatException.class,
            e -> assertThat(e.field()).isEqualTo("allocated processors (field 5)"));
  }

  @Test
  void emptyTraceIsAllowed() throws IOException {
    var file = write("empty.swf", "; nothing but a header\n\n");

    var trace = SwfReader.read(file, mode());

    assertThat(trace.jobs()).isEmpty();
    assertThat(trace.rowsRead()).isZero();
    assertThat(trace.estimatesFromRuntime()).isFalse();
  }

  @Test
  void missingFileIsATraceFormatException() {
    var missing = tmp.resolve("nope.swf");

    assertThatThrownBy(() -> SwfReader.read(missing, mode()))
        .isInstanceOfSatisfying(
            TraceFormatException.class,
            e -> {
              assertThat(e.line()).isZero();
              assertThat(e.getMessage()).isEqualTo(missing + ": cannot read file: no such file");
            });
  }

  private static EstimateMode mode() {
    return EstimateMode.REQUESTED;
  }

  private Path write(String name, String text) throws IOException {
    var file = tmp.resolve(name);
    Files.writeString(file, text, StandardCharsets.US_ASCII);
    return file;
  }

  private static long sum(Trace trace, java.util.function.ToLongFunction<TraceJob> value) {
    return trace.jobs().stream().mapToLong(value).sum();
  }

  private static Map<String, Long> countBy(Trace trace, Function<TraceJob, String> key) {
    return trace.jobs().stream().collect(Collectors.groupingBy(key, Collectors.counting()));
  }
}
